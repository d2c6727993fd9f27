import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { lockMemoir } from '../../src/memoir/file/lock.js';
import { assertBuilt, copyHome, kourai, ROOT, sampleHome } from '../helpers/bin.js';
import { removeDir } from '../helpers/ctx.js';
import { lineCount, readEntries } from '../helpers/forge.js';

/** The same commands from a script (no terminal): the built binary, a clean environment. */
let home: string;
let memoirs: string[];
let template: { home: string; memoirs: string[] };
beforeAll(() => {
  assertBuilt();
  template = sampleHome();
});
afterAll(() => removeDir(template.home));
beforeEach(() => {
  ({ home, memoirs } = copyHome(template));
});
afterEach(() => removeDir(home));

function techneScene(memoir: string): string {
  return readEntries(memoir).find((e) => e.agent === 'techne' && e.source === 'specialist_proposed')
    ?.scene_id as string;
}

describe('kourai feedback from a script', () => {
  it('--rating 4 --kind accepted --json: exit 0, the entry id on stdout, the entry in the memoir and in memoir show', () => {
    const memoir = memoirs[3] as string;
    const scene = techneScene(memoir);
    const before = lineCount(memoir);
    const r = kourai(
      [
        'feedback',
        '--memoir',
        memoir,
        '--agent',
        'techne',
        '--scene',
        scene,
        '--proposed',
        'x = compute()',
        '--rating',
        '4',
        '--kind',
        'accepted',
        '--json',
      ],
      home,
    );
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const out = JSON.parse(r.stdout) as { asked: boolean; answered: boolean; entry_id: string };
    expect(out).toMatchObject({ asked: true, answered: true });
    expect(lineCount(memoir)).toBe(before + 1);
    expect(readEntries(memoir).at(-1)).toMatchObject({
      entry_id: out.entry_id,
      likert: 4,
      player_response: { kind: 'accepted', felt: 'right' },
      affinity_delta: 0.02,
    });
    const show = kourai(['memoir', 'show', out.entry_id], home);
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(out.entry_id);
    expect(show.stdout).toContain('"likert": 4');
  });

  it('the proposal can come on stdin (--proposed-file -)', () => {
    const memoir = memoirs[3] as string;
    const r = kourai(
      [
        'feedback',
        '--memoir',
        memoir,
        '--agent',
        'techne',
        '--scene',
        techneScene(memoir),
        '--proposed-file',
        '-',
        '--rating',
        '5',
        '--kind',
        'accepted',
        '--json',
      ],
      home,
      { input: 'from a pipe\n' },
    );
    expect(r.code).toBe(0);
    expect(readEntries(memoir).at(-1)?.agent_proposed).toBe('from a pipe');
  });

  it('exit 7 when another writer holds the memoir lock: the error names the holder, nothing is written', () => {
    const memoir = memoirs[3] as string;
    const scene = techneScene(memoir);
    const before = readFileSync(memoir);
    // This test process holds the lock (a kernel lock on the memoir itself), as another kourai
    // writer would; the binary waits for it, then gives up.
    const lock = lockMemoir(memoir);
    let r;
    try {
      expect(existsSync(`${memoir}.lock`)).toBe(false); // no lock file: nothing can go stale
      r = kourai(
        [
          'feedback',
          '--memoir',
          memoir,
          '--agent',
          'techne',
          '--scene',
          scene,
          '--proposed',
          'x',
          '--rating',
          '4',
          '--kind',
          'accepted',
          '--json',
        ],
        home,
      );
    } finally {
      lock.release();
    }
    expect(r.code, r.stderr).toBe(7);
    expect(r.stderr).toMatch(new RegExp(`memoir is being written by pid ${process.pid}`));
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { exit_code: 7 } });
    expect(readFileSync(memoir).equals(before)).toBe(true);
    // once the lock is free, the same command succeeds
    expect(
      kourai(
        [
          'feedback',
          '--memoir',
          memoir,
          '--agent',
          'techne',
          '--scene',
          scene,
          '--proposed',
          'x',
          '--rating',
          '4',
          '--kind',
          'accepted',
        ],
        home,
      ).code,
    ).toBe(0);
  });

  it('without --rating and --kind: exit 2, naming the flags; --json prints the error document', () => {
    const memoir = memoirs[3] as string;
    const before = readFileSync(memoir);
    const r = kourai(
      [
        'feedback',
        '--memoir',
        memoir,
        '--agent',
        'techne',
        '--scene',
        techneScene(memoir),
        '--proposed',
        'x',
        '--json',
      ],
      home,
    );
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('pass --rating 1-5 and --kind accepted|modified|rejected|deferred');
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'usage', exit_code: 2 } });
    expect(readFileSync(memoir).equals(before)).toBe(true);
  });

  it('not asking is a success: exit 0 and the reason', () => {
    const memoir = memoirs[3] as string;
    const scene = readEntries(memoir).find((e) => e.agent === 'kallos')?.scene_id as string;
    // Without an answer and without a terminal: the gate says no, so there is nothing to ask for.
    const r = kourai(
      ['feedback', '--memoir', memoir, '--agent', 'kallos', '--scene', scene, '--proposed', 'rename it'],
      home,
    );
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(
      'not asking: affinity with kallos is 0.04 (stranger); feedback opens at familiar (0.15)',
    );
  });

  it.each([
    [['--agent', 'zeus'], 2, 'unknown agent "zeus"'],
    [['--rating', '9'], 2, '"9" is not a rating'],
    [['--kind', 'loved'], 2, "argument 'loved' is invalid"],
    [['--scene', 'session-00000000.turn-0'], 6, 'scene "session-00000000.turn-0" is not in'],
  ])('bad input %j: exit %i', (extra, code, message) => {
    const memoir = memoirs[3] as string;
    const base = [
      'feedback',
      '--memoir',
      memoir,
      '--agent',
      'techne',
      '--scene',
      techneScene(memoir),
      '--proposed',
      'x',
      '--rating',
      '4',
      '--kind',
      'accepted',
    ];
    const r = kourai([...base, ...extra], home);
    expect(r.code).toBe(code);
    expect(r.stderr).toContain(message);
  });
});

describe('kourai memoir replay from a script', () => {
  it('--no-input prints the story as text', () => {
    const r = kourai(['memoir', 'replay', '--no-input'], home);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^session [0-9a-f-]{36} · ariadne\/sample-forge/m);
    expect(r.stdout).toContain('silent: not shown to the player');
    expect(r.stdout).toMatch(/\d+ beats in 4 sessions\n$/);
  });

  it('--json streams NDJSON (a pipe is never interactive)', () => {
    const r = kourai(['memoir', 'replay', '--json', '--agent', 'techne'], home);
    expect(r.code).toBe(0);
    const recs = r.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; agent?: string });
    expect(recs.filter((x) => x.type === 'beat').every((x) => x.agent === 'techne')).toBe(true);
  });

  it('kourai affinity --json', () => {
    const r = kourai(['affinity', '--json'], home);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { agents: { agent: string; tier: string }[] };
    expect(out.agents.find((a) => a.agent === 'techne')?.tier).toBe('familiar');
  });
});

describe('start-up', () => {
  it('kourai --help loads neither Ink nor React', () => {
    const spy = join(ROOT, 'test', 'fixtures', 'import-spy.mjs');
    const r = kourai(['--help'], home, { nodeArgs: ['--import', spy] });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('feedback');
    expect(r.stdout).toContain('affinity');
    expect(r.stderr).not.toMatch(/LOADED .*\/(ink|react)\//);
    // The spy does see what the replay screen loads (the check is not vacuous).
    const replay = kourai(['memoir', 'replay', '--no-input'], home, { nodeArgs: ['--import', spy] });
    expect(replay.stderr).not.toMatch(/LOADED .*\/node_modules\/ink\//);
    expect(replay.stderr).toMatch(/LOADED .*\/node_modules\/commander\//);
    const control = spawnSync(process.execPath, ['--import', spy, '--input-type=module', '-e', "await import('ink')"], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(control.stderr).toMatch(/LOADED .*\/node_modules\/ink\//);
  });
});
