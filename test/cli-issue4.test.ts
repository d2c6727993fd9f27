import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli } from '../src/cli.js';
import { removeDir, testCtx, type TestCtx } from './helpers/ctx.js';
import { sampleForge } from './helpers/memory.js';

/** argv -> parsed options -> result, through the real commander tree, in-process. */
let base: TestCtx;
beforeAll(async () => {
  base = testCtx();
  await sampleForge(base);
});
afterAll(() => removeDir(base.home));

async function cli(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const ctx = testCtx({ home: base.home });
  let code = 0;
  const program = buildCli(() => ctx, (c) => {
    code = c;
  });
  await program.parseAsync(argv, { from: 'user' });
  return { code, out: ctx.stdout.text, err: ctx.stderr.text };
}

describe('issue 4 commands: argv to options', () => {
  it.each([
    [['memoir', 'search', 'naming', 'style', '--limit', '3', '--agent', 'kallos', '--json'], { query: 'naming style', limit: 3 }],
    [['memoir', 'search', 'naming', '--limit', '999', '--json'], { limit: 200, capped: true }],
    [['memoir', 'buffer', '--max', '7', '--dry-run', '--json'], { bound: 7, dry_run: true, manifest: null }],
    [['memoir', 'buffer', '--max', '100', '--split', 'shared', '--dry-run', '--json'], { bound: 100 }],
    [['memoir', 'episodes', '--by', 'session', '--json'], { by: 'session', written: 0 }],
    [['memoir', 'episodes', '--json'], { by: 'scene' }],
  ])('%j', async (argv, expected) => {
    const r = await cli(argv);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject(expected);
  });

  it('buffer --split shared keeps only shareable entries', async () => {
    const r = await cli(['memoir', 'buffer', '--max', '1000', '--split', 'shared', '--dry-run', '--json']);
    const all = JSON.parse(r.out) as { kept: { source: string; agent: string }[] };
    expect(all.kept.length).toBeGreaterThan(0);
    for (const k of all.kept) {
      expect(['cupid', 'puck']).not.toContain(k.agent);
      expect(['specialist_proposed', 'agent_interrupt', 'disagreement_resolution']).toContain(k.source);
    }
  });

  it.each([
    [['memoir', 'buffer', '--dry-run']],
    [['memoir', 'supersede', 'X', '{}']],
    [['memoir', 'episodes', '--by', 'week']],
    [['memoir', 'search']],
  ])('%j is a usage error', async (argv) => {
    await expect(cli(argv)).rejects.toMatchObject({ code: expect.stringMatching(/^commander\./) });
  });
});
