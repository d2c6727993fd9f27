import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { membershipPath } from '../../src/federation/round/membership.js';
import { DEFAULT_PRIVACY_CONFIG } from '../../src/privacy/privacy-config.js';
import { PrivacyGate } from '../../src/privacy/round-gate.js';
import { AdapterRegistry } from '../../src/store/adapter-registry.js';
import { openStateDb } from '../../src/store/state-db.js';
import { FEDERATING_AGENTS } from '../../src/memoir/format/agents.js';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import { DEFAULT_SETTINGS } from '../../src/train/trainer.js';
import { assertBuilt } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { startHostileProxy, type HostileProxy } from '../federation/hostile-proxy.js';
import { BIN, kourai, kouraiAsync, serveCouncil, type BinResult } from './run-bin.js';

/**
 * The forge against its own council, tried as an attacker would: the real binary, a real
 * `kourai council serve` on 127.0.0.1, and a hostile proxy in front of it. Each case says what
 * left the forge (the proxy's record, and what reached the host a redirect points at), what was
 * spent (the privacy ledger) and what was stored.
 */

let root: string;
let council: ChildProcess;
let proxy: HostileProxy;
let dataDir: string;

async function startCouncil(): Promise<string> {
  const layouts = JSON.stringify({ derive: { base: 'builtin', rank: DEFAULT_SETTINGS.rank } });
  const serving = await serveCouncil(
    [
      '--data-dir',
      dataDir,
      '--base-fingerprint',
      BUILTIN_FINGERPRINT,
      '--layouts',
      layouts,
      '--min-forges',
      '1',
      '--strategy',
      'fedavg',
    ],
    { home: root },
  );
  council = serving.proc;
  return serving.url;
}

function ok(r: BinResult, what: string): unknown {
  expect(r.code, `${what}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as unknown;
}

let forges = 0;
/** A new forge home with a sample memoir and consent given; joined through the proxy unless `join` is false. */
async function forge(opts: { join?: boolean } = {}): Promise<{ home: string; tokenFile: string }> {
  const name = `forge-${++forges}`;
  const home = join(root, name);
  mkdirSync(home, { mode: 0o700 });
  const added = ok(kourai(['council', 'forge', 'add', name, '--data-dir', dataDir, '--json'], { home: root }), 'add');
  const tokenFile = join(home, 'token');
  writeFileSync(tokenFile, (added as { token: string }).token, { mode: 0o600 });
  ok(kourai(['memoir', 'synth', '--player', 'ariadne', '--sessions', '2', '--json'], { home }), 'synth');
  ok(kourai(['federate', 'consent', '--allow', 'all', '--json'], { home }), 'consent');
  if (opts.join !== false) {
    proxy.set({ kind: 'pass' });
    ok(
      await kouraiAsync(['federate', 'join', '--server', proxy.url, '--token-file', tokenFile, '--json'], { home }),
      'join',
    );
  }
  return { home, tokenFile };
}

function releases(home: string): number {
  const gate = PrivacyGate.openReadOnly({ home, config: DEFAULT_PRIVACY_CONFIG });
  try {
    return gate.ledger.releases().length;
  } finally {
    gate.close();
  }
}

function councilAdapters(home: string): number {
  const db = openStateDb(home);
  try {
    const reg = new AdapterRegistry(db);
    return FEDERATING_AGENTS.filter((a) => reg.current(a, 'council') !== null).length;
  } finally {
    db.close();
  }
}

/** The binary under /usr/bin/time when it is there: exit code, stderr and peak RSS (KiB). */
function timedRun(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stderr: string; peakKiB: number | null }> {
  const time = existsSync('/usr/bin/time');
  const argv = time ? ['-f', 'peak-kib %M', process.execPath, BIN, ...args] : [BIN, ...args];
  const child = spawn(time ? '/usr/bin/time' : process.execPath, argv, { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  return new Promise((resolve) =>
    child.on('close', (code) => {
      const peak = /peak-kib (\d+)/.exec(stderr);
      resolve({ code, stderr, peakKiB: peak ? Number(peak[1]) : null });
    }),
  );
}

const puts = (): number => proxy.seen.filter((r) => r.method === 'PUT').length;

beforeAll(async () => {
  assertBuilt();
  root = tempDir('kourai-e2e-hostile-');
  dataDir = join(root, 'council');
  proxy = await startHostileProxy(await startCouncil());
});
afterAll(async () => {
  await proxy?.close();
  council?.kill();
  removeDir(root);
});

describe('the real binary against a hostile council', { timeout: 300_000 }, () => {
  it.each([
    { what: 'σ = 0.64', policy: { noise_multiplier: 0.64 }, names: /council's σ = 0\.64 .*floor.*σ ≥ 8/ },
    { what: 'S = 1e38', policy: { clip_norm: 1e38 }, names: /council's S = 1e\+38 .*floor.*S ≤ 1000/ },
    { what: 'S = 5e-324', policy: { clip_norm: 5e-324 }, names: /council's S = 5e-324 / },
  ])('a policy with $what: exit 4 in one line; nothing sent, nothing spent', async ({ policy, names }) => {
    const { home } = await forge();
    proxy.set({ kind: 'policy', ...policy });
    const before = puts();
    const r = await kouraiAsync(['federate', 'round', '--no-wait', '--json'], { home });
    expect(r.code, r.stderr).toBe(4);
    expect(r.stderr).toMatch(names);
    expect(r.stderr).not.toMatch(/unexpected error|TypeError/);
    expect(puts()).toBe(before);
    expect(releases(home)).toBe(0);
  });

  it.each([302, 307] as const)(
    'a %i on every request: exit 9, nothing reaches the other host, nothing spent',
    async (status) => {
      const { home } = await forge();
      proxy.set({ kind: 'redirect', status });
      const r = await kouraiAsync(['federate', 'round', '--no-wait', '--retry-for', '2s', '--json'], { home });
      expect(r.code, r.stderr).toBe(9);
      expect(r.stderr).toMatch(/not followed/);
      expect(proxy.elsewhere).toEqual([]);
      expect(releases(home)).toBe(0);
    },
  );

  it('a 400 MB health answer on join: exit 9, no membership stored, the answer cut at the cap', async () => {
    const { home, tokenFile } = await forge({ join: false });
    proxy.set({ kind: 'huge', bytes: 400 * 1024 * 1024, chunked: true, when: (_m, p) => p === '/v1/health' });
    // Not spawnSync: the proxy answers from this process, whose event loop must keep running.
    const timed = await timedRun(['federate', 'join', '--server', proxy.url, '--token-file', tokenFile], {
      PATH: process.env.PATH ?? '',
      HOME: home,
      KOURAI_HOME: home,
      CI: '1',
    });
    expect(timed.code, timed.stderr).toBe(9);
    expect(timed.stderr).toMatch(/answered more than 64 KiB/);
    if (timed.peakKiB !== null) expect(timed.peakKiB).toBeLessThan(300 * 1024);
    expect(existsSync(membershipPath(home))).toBe(false);
  });

  it('a silent council: round --retry-for 2s gives up within it plus one request deadline, saying so (exit 9)', async () => {
    const { home } = await forge();
    proxy.set({ kind: 'silent' });
    const asked = proxy.seen.length;
    const r = await kouraiAsync(['federate', 'round', '--no-wait', '--retry-for', '2s', '--json'], {
      home,
      env: { KOURAI_COUNCIL_TIMEOUT: '2s' },
    });
    // from the first request the council left unanswered (start-up, the encoder and the index come before it)
    const took = Date.now() - (proxy.seen[asked]?.at ?? 0);
    expect(r.code, r.stderr).toBe(9);
    expect(r.stderr).toMatch(/waiting for the council/);
    expect(took).toBeLessThan(2000 + 2000 + 3000); // --retry-for, one deadline, the process ending
    expect(releases(home)).toBe(0);
  });

  it('a council dripping one byte every 200 ms: cut at the request deadline, exit 9, no TypeError', async () => {
    const { home } = await forge();
    proxy.set({ kind: 'drip', everyMs: 200 });
    const r = await kouraiAsync(['federate', 'round', '--no-wait', '--retry-for', '0s', '--json'], {
      home,
      env: { KOURAI_COUNCIL_TIMEOUT: '1s' },
    });
    expect(r.code, r.stderr).toBe(9);
    expect(r.stderr).not.toMatch(/TypeError|unexpected error/);
    expect(releases(home)).toBe(0);
  });

  it('Ctrl-C while join waits for a silent council: exit 130, no TypeError', async () => {
    const { home, tokenFile } = await forge({ join: false });
    proxy.set({ kind: 'silent' });
    const asked = proxy.seen.length;
    const child = spawn(process.execPath, [BIN, 'federate', 'join', '--server', proxy.url, '--token-file', tokenFile], {
      cwd: home,
      env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home, CI: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    // signal once the request is waiting at the council
    const t0 = Date.now();
    while (proxy.seen.length === asked && Date.now() - t0 < 30_000) await new Promise((r) => setTimeout(r, 50));
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stderr).not.toMatch(/TypeError|unexpected error/);
    expect(existsSync(membershipPath(home))).toBe(false);
  });

  it.each(['nan', 'huge-values', 'renamed-tensor'] as const)(
    'council adapters (the global it starts from, the aggregate) poisoned with %s: exit 5, nothing stored',
    async (poison) => {
      const { home } = await forge();
      proxy.set({ kind: 'poison', poison });
      const r = await kouraiAsync(['federate', 'round', '--json', '--wait-for', '2m'], { home });
      expect(r.code, r.stderr).toBe(5);
      expect(r.stderr).not.toMatch(/bug in kourai|unexpected error/);
      expect(councilAdapters(home)).toBe(0);
    },
  );
});
