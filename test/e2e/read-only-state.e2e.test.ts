import { spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import { DEFAULT_SETTINGS } from '../../src/train/trainer.js';
import { assertBuilt, cleanEnv } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { unprivileged, unprivilegedBin, type Unprivileged } from '../helpers/unprivileged.js';
import { kourai, kouraiAsync, serveCouncil, type BinResult, type Serving } from './run-bin.js';

/**
 * A joined forge with a healthy state database (consent given, bond adapters trained), in a home
 * its own user may no longer write (every write bit removed; as root, CI's user, the forge is
 * `nobody`'s, since root writes anywhere): every command that only
 * reads the state works; one that must write it says it cannot write there (exit 3), never that the
 * database is damaged; and nothing in the home changes.
 */
let root: string;
let u: Unprivileged;
let home: string;
let memoir: string;
let scene: string;
let council: ChildProcess;
let before: Record<string, string>;

function startCouncil(dataDir: string): Promise<Serving> {
  const layouts = JSON.stringify({ derive: { base: 'builtin', rank: DEFAULT_SETTINGS.rank } });
  return serveCouncil(
    ['--data-dir', dataDir, '--base-fingerprint', BUILTIN_FINGERPRINT, '--layouts', layouts, '--min-forges', '2'],
    { home: root },
  );
}

function ok(r: BinResult, what: string): unknown {
  expect(r.code, `${what}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as unknown;
}

function tree(dir: string): string[] {
  return ['', ...readdirSync(dir, { recursive: true }).map(String)].map((rel) => join(dir, rel));
}

/** Every file's bytes (hex digest would do; the home is small) keyed by path. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of tree(dir)) if (statSync(p).isFile()) out[p] = readFileSync(p).toString('base64');
  return out;
}

/** Removes (or gives back to the owner) every write bit, keeping private files private. */
function readOnly(dir: string, writable: boolean): void {
  for (const p of tree(dir)) {
    const mode = statSync(p).mode & 0o777;
    chmodSync(p, writable ? mode | 0o200 : mode & ~0o222);
  }
}

const asReader = (args: string[]): BinResult => u.run(args);

beforeAll(async () => {
  assertBuilt();
  root = tempDir('kourai-ro-state-');
  const c = await startCouncil(join(root, 'council'));
  council = c.proc;
  const token = (
    ok(
      kourai(['council', 'forge', 'add', 'athens', '--data-dir', join(root, 'council'), '--json'], { home: root }),
      'forge add',
    ) as { token: string }
  ).token;
  u = unprivileged();
  home = u.home;
  // Set up as this process's user without a time limit (training is minutes on a loaded machine), then given to the forge's user.
  const setup = async (args: string[], what: string): Promise<unknown> => ok(await kouraiAsync(args, { home }), what);
  const synth = (await setup(['memoir', 'synth', '--json'], 'synth')) as { memoirs: string[] };
  memoir = synth.memoirs[0] as string;
  scene = (JSON.parse(readFileSync(memoir, 'utf8').split('\n')[0] as string) as { scene_id: string }).scene_id;
  await setup(['federate', 'join', '--server', c.url, '--token', token, '--json'], 'join');
  await setup(['federate', 'consent', '--allow', 'all', '--json'], 'consent');
  await setup(['memoir', 'index', '--json'], 'index');
  await setup(['train', 'bond', '--epochs', '1', '--agent', 'techne', '--agent', 'hephaestus', '--json'], 'train bond');
  expect(spawnSync('chown', ['-R', `${u.uid}:${u.gid}`, home]).status).toBe(0);
  readOnly(home, false);
  before = snapshot(home);
}, 300_000);

afterAll(() => {
  council?.kill('SIGTERM');
  if (home) readOnly(home, true);
  if (u) removeDir(u.base);
  if (root) removeDir(root);
});

describe('a read-only home with a healthy state database', () => {
  const READERS: string[][] = [
    [
      'feedback',
      '--memoir',
      '@memoir',
      '--agent',
      'techne',
      '--scene',
      '@scene',
      '--proposed',
      'x',
      '--check',
      '--json',
    ],
    ['adapters', 'list', '--json'],
    ['score', '--agent', 'techne', '--json', 'a plan', 'another plan'],
    ['route', '--json', 'write the parser'],
    ['federate', 'round', '--dry-run', '--json'],
    ['federate', 'status', '--json'],
    ['federate', 'consent', '--show', '--json'],
    ['privacy', 'ledger', '--json'],
    ['whisper', '--json'],
  ];
  it.each(READERS)(
    'reading: kourai %s … works',
    (...args) => {
      const r = asReader(args.map((a) => (a === '@memoir' ? memoir : a === '@scene' ? scene : a)));
      expect(r.code, r.stderr).toBe(0);
      JSON.parse(r.stdout);
      expect(snapshot(home)).toEqual(before);
    },
    120_000,
  );

  const WRITERS: string[][] = [
    ['train', 'bond', '--epochs', '1', '--agent', 'techne'],
    ['federate', 'consent', '--allow', 'aidos'],
    ['adapters', 'rollback', 'techne', '--kind', 'bond'],
  ];
  it.each(WRITERS)(
    'writing: kourai %s … says it cannot write there (exit 3)',
    (...args) => {
      const r = asReader(args);
      expect(r.code, r.stderr).toBe(3);
      const first = r.stderr.split('\n')[0] as string;
      expect(first).toContain(`cannot write the state database ${join(home, 'kourai.db')}`);
      expect(r.stderr).not.toMatch(/unreadable|restore it from a backup/i);
      expect(snapshot(home)).toEqual(before);
    },
    120_000,
  );
});

describe('a home owned by another user (files 0644, directories 0755)', () => {
  it('reading commands work as that other user; a writer says it cannot write there (exit 3)', async (ctx) => {
    ctx.skip(
      process.getuid?.() !== 0,
      'needs root to own a home another user (nobody) then reads: the other-owner case was not checked',
    );
    const other = join(tempDir('kourai-other-'), 'home');
    mkdirSync(other);
    try {
      ok(await kouraiAsync(['memoir', 'synth', '--json'], { home: other }), 'synth');
      ok(await kouraiAsync(['federate', 'consent', '--allow', 'all', '--json'], { home: other }), 'consent');
      ok(
        await kouraiAsync(['train', 'bond', '--epochs', '1', '--agent', 'techne', '--json'], { home: other }),
        'train bond',
      );
      for (let d = other; d !== '/'; d = dirname(d)) chmodSync(d, statSync(d).mode | 0o005);
      for (const p of tree(other)) chmodSync(p, statSync(p).isDirectory() ? 0o755 : statSync(p).mode | 0o044);
      const was = snapshot(other);
      const run = (args: string[]): BinResult => {
        const r = spawnSync(process.execPath, [unprivilegedBin(), ...args], {
          cwd: '/',
          env: cleanEnv(other, { CI: '1' }),
          encoding: 'utf8',
          timeout: 120_000,
          uid: 65534,
          gid: 65534,
        });
        return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
      };
      for (const args of [
        ['whisper', '--json'],
        ['privacy', 'ledger', '--json'],
        ['adapters', 'list', '--json'],
        ['score', '--agent', 'techne', '--json', 'a', 'b'],
        ['federate', 'consent', '--show', '--json'],
      ]) {
        const r = run(args);
        expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      }
      const w = run(['federate', 'consent', '--allow', 'aidos']);
      expect(w.code, w.stderr).toBe(3);
      expect(w.stderr.split('\n')[0]).toContain('cannot write the state database');
      expect(snapshot(other)).toEqual(was);
    } finally {
      removeDir(dirname(other));
    }
  }, 300_000);
});
