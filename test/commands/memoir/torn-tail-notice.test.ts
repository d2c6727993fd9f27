import { appendFileSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sampleForge } from '../../helpers/memory.js';
import { removeDir, testCtx, type TestCtx } from '../../helpers/ctx.js';
import { runCli } from '../../helpers/run.js';

/**
 * A memoir whose last line is torn (a write that never finished) is read up to its last newline;
 * the reading commands say so, as `memoir verify` does, with the repair command, and change nothing.
 */
const FRAGMENT = '{"scene_id":"x';
let home: string;
let memoir: string;
beforeAll(async () => {
  const ctx = testCtx();
  home = ctx.home;
  [memoir] = (await sampleForge(ctx)) as [string];
  appendFileSync(memoir, FRAGMENT);
}, 120_000);
afterAll(() => removeDir(home));

const load = {
  inspect: () => import('../../../src/commands/memoir/inspect.js'),
  stats: () => import('../../../src/commands/memoir/stats.js'),
  replay: () => import('../../../src/commands/memoir/replay.js'),
};

describe('reading commands name a torn last line', () => {
  it.each([
    ['inspect', load.inspect, {}],
    ['inspect --json', load.inspect, { json: true }],
    ['stats', load.stats, {}],
    ['replay --ndjson', load.replay, { ndjson: true }],
    ['replay (text)', load.replay, {}],
  ] as const)('memoir %s warns with the fragment size and the repair command', async (_name, cmd, extra) => {
    const ctx: TestCtx = testCtx({ home });
    const before = readFileSync(memoir);
    const r = await runCli(cmd, { memoir: [memoir], ...extra }, ctx);
    expect(r.code, r.stderr).toBe(0);
    const warning = `warning: ${memoir}: torn final fragment of ${FRAGMENT.length} bytes (a write that never finished) was not read  (fix: kourai memoir repair --memoir ${memoir})`;
    expect(r.stderr.split('\n')).toContain(warning);
    expect(r.stderr.split('\n').filter((l) => l.includes('torn'))).toHaveLength(1);
    expect(readFileSync(memoir)).toEqual(before);
  });
});
