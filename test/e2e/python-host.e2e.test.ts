import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import { DEFAULT_SETTINGS } from '../../src/train/trainer.js';
import { assertBuilt } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { BIN, kourai, kouraiAsync, type BinResult } from './run-bin.js';

/**
 * A new player whose host is Python: the memoir is written by the upstream pydantic model with the
 * minimal context a host gives (`{"task_type": "code"}`) and scene ids of the host's own form. As
 * that player meets kourai: verify is clean, train bond learns, score prefers the player's revised
 * style on functions it never saw (longer and shorter alike), route names the specialists, and one
 * round against a one-forge council changes none of that, with a scene that says it was alone.
 */
const HOST = fileURLToPath(new URL('../fixtures/python/host_forge.py', import.meta.url));
const probe = spawnSync('python3', ['-c', 'import pydantic; print(pydantic.VERSION)'], { encoding: 'utf8' });
const havePydantic = probe.status === 0;
const missing = `the Python-host forge was NOT checked: python3 cannot import pydantic (${(probe.error?.message ?? probe.stderr.trim().split('\n').pop() ?? '').trim() || `exit ${probe.status}`})`;

const TASKS: readonly [task: string, agent: string][] = [
  ['write tests for the parser', 'dokimasia'],
  ['is this citation real?', 'aletheia'],
  ['does this PR description read like AI slop?', 'aidos'],
];

/** Fresh functions in the two styles: names and arguments the host never wrote, the player's style first. */
const FRESH: readonly [mine: string, other: string][] = [
  ['sumLedger', 'ledger', 3, true],
  ['roundQuota', 'quota', 7, false],
  ['capStock', 'stock', 4, true],
  ['boostBudget', 'budget', 11, false],
].map(([fn, a, k, why]) => [
  `function ${fn}(${a}: number): number {\n${why ? `  // ${a} has a floor of ${k}\n` : ''}  if (${a} < ${k}) return ${k};\n  const r = ${a} * ${k};\n  return r;\n}`,
  `function ${fn}(${a}) {\n  let r;\n  if (${a} >= ${k}) {\n    r = ${a} * ${k};\n  } else {\n    r = ${k};\n  }\n  return r;\n}`,
]);

let home: string;
let council: ChildProcess | undefined;

function ok(r: BinResult, what: string): unknown {
  expect(r.code, `${what}: ${r.stderr}`).toBe(0);
  return JSON.parse(r.stdout) as unknown;
}

/** Whether score ranks the player's style first, for each fresh pair (the candidates in both orders). */
function prefersMine(): boolean[] {
  return FRESH.flatMap(([mine, other]) =>
    [
      [mine, other],
      [other, mine],
    ].map((cands) => {
      const s = ok(kourai(['score', '--agent', 'techne', ...cands, '--json'], { home }), 'score') as {
        ranking: { text: string }[];
      };
      return s.ranking[0]!.text === mine;
    }),
  );
}

function routes(): string[] {
  return TASKS.map(
    ([task]) =>
      (ok(kourai(['route', task, '--json'], { home }), 'route') as { distribution: { agent: string }[] })
        .distribution[0]!.agent,
  );
}

function serve(dataDir: string): Promise<string> {
  const layouts = JSON.stringify({ derive: { base: 'builtin', rank: DEFAULT_SETTINGS.rank } });
  const proc = spawn(
    process.execPath,
    [BIN, 'council', 'serve', '--port', '0', '--data-dir', dataDir, '--base-fingerprint', BUILTIN_FINGERPRINT].concat([
      '--layouts',
      layouts,
      '--min-forges',
      '1',
      '--json',
    ]),
    {
      env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home, CI: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  council = proc;
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout as NodeJS.ReadableStream }).once('line', (line) =>
      resolve((JSON.parse(line) as { url: string }).url),
    );
    proc.once('exit', (code) => reject(new Error(`council serve exited ${code}: ${err}`)));
  });
}

beforeAll(() => {
  assertBuilt();
  home = tempDir('kourai-e2e-python-host-');
});
afterAll(() => {
  council?.kill();
  removeDir(home);
});

describe('a forge a Python host wrote, as its player meets kourai', { timeout: 600_000 }, () => {
  it('verify is clean, train bond learns, score prefers the revised style, route names the specialists', (ctx) => {
    if (!havePydantic) ctx.skip(missing);
    const py = spawnSync('python3', [HOST, home, 'ariadne', '8', '5'], { encoding: 'utf8' });
    expect(py.status, py.stderr).toBe(0);
    expect(py.stdout.trim().split('\n')).toHaveLength(8);

    const v = ok(kourai(['memoir', 'verify', '--json'], { home }), 'verify') as Record<string, unknown>;
    expect(JSON.stringify(v)).not.toMatch(/"skipped":[1-9]|schema/);
    const stats = ok(kourai(['memoir', 'stats', '--json'], { home }), 'stats') as { entries: number };
    expect(stats.entries).toBe(64);

    const t = ok(kourai(['train', 'bond', '--agent', 'techne', '--json'], { home }), 'train bond') as {
      agents: { agent: string; status: string }[];
    };
    expect(t.agents[0]).toMatchObject({ agent: 'techne', status: 'trained' });
    expect(prefersMine()).toEqual(FRESH.flatMap(() => [true, true]));
    expect(routes()).toEqual(TASKS.map(([, agent]) => agent));
  });

  it('one round against a one-forge council keeps all of that, and the scene says the forge was alone', async (ctx) => {
    if (!havePydantic) ctx.skip(missing);
    const dataDir = join(home, 'council');
    const added = ok(kourai(['council', 'forge', 'add', 'py-forge', '--data-dir', dataDir, '--json'], { home }), 'add');
    const url = await serve(dataDir);
    ok(kourai(['federate', 'consent', '--allow', 'all', '--json'], { home }), 'consent');
    const token = (added as { token: string }).token;
    ok(await kouraiAsync(['federate', 'join', '--server', url, '--token', token, '--json'], { home }), 'join');
    const r = ok(await kouraiAsync(['federate', 'round', '--json'], { home }), 'round') as {
      outcome: string;
      details: { forges: number };
    };
    expect(r).toMatchObject({ outcome: 'completed', details: { forges: 1 } });

    expect(prefersMine()).toEqual(FRESH.flatMap(() => [true, true]));
    expect(routes()).toEqual(TASKS.map(([, agent]) => agent));

    const s = ok(kourai(['federate', 'scene', '--json'], { home }), 'scene') as {
      scenes: { lines: { text: string }[] }[];
    };
    const said = s.scenes.flatMap((x) => x.lines.map((l) => l.text)).join('\n');
    expect(said).toMatch(/Only this forge took part/);
    expect(said).not.toMatch(/From the other forges|Across the forges/);
  });
});
