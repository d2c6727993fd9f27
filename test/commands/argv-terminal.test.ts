import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCli } from '../../src/cli.js';
import type { KouraiError } from '../../src/errors.js';
import { removeDir, testCtx, type TestCtx } from '../helpers/ctx.js';
import { readEntries, sampleForge } from '../helpers/forge.js';

/** argv -> parsed options -> result for replay, feedback and affinity, through the real commander tree. */
let ctx: TestCtx;
let memoir: string;
let scene: string;
beforeEach(async () => {
  ctx = testCtx();
  memoir = (await sampleForge(ctx.home))[3] as string;
  scene = readEntries(memoir).find((e) => e.agent === 'techne')?.scene_id as string;
});
afterEach(() => removeDir(ctx.home));

async function cli(argv: string[]): Promise<{ code: number | undefined; out: string; error: KouraiError | undefined; globals: { noInput: boolean; noColor: boolean }[] }> {
  let code: number | undefined;
  const globals: { noInput: boolean; noColor: boolean }[] = [];
  const program = buildCli(
    (g) => {
      globals.push(g);
      return ctx;
    },
    (c) => (code = c),
  );
  const before = ctx.stdout.text.length;
  try {
    await program.parseAsync(['node', 'kourai', ...argv]);
  } catch (err) {
    return { code, out: ctx.stdout.text.slice(before), error: err as KouraiError, globals };
  }
  return { code, out: ctx.stdout.text.slice(before), error: undefined, globals };
}

describe('argv -> options: feedback, memoir replay, affinity', () => {
  it('feedback --rating --kind --comment --json', async () => {
    const r = await cli(['feedback', '--memoir', memoir, '--agent', 'techne', '--scene', scene, '--proposed', 'x = 1', '--rating', '4', '--kind', 'accepted', '--comment', 'ok', '--json']);
    expect(r.error).toBeUndefined();
    expect(r.code).toBe(0);
    const out = JSON.parse(r.out) as { entry_id: string };
    expect(readEntries(memoir).at(-1)).toMatchObject({ entry_id: out.entry_id, likert: 4, comment: 'ok', agent_proposed: 'x = 1' });
  });

  it('feedback --proposed-file --revised-file --force, and the gate flags', async () => {
    const p = join(ctx.home, 'p.txt');
    const q = join(ctx.home, 'q.txt');
    writeFileSync(p, 'a\n');
    writeFileSync(q, 'b\n');
    const check = await cli(['feedback', '--memoir', memoir, '--agent', 'techne', '--scene', scene, '--proposed-file', p, '--min-tier', 'trusted', '--cooldown', '3', '--check', '--json']);
    expect(JSON.parse(check.out)).toMatchObject({ would_ask: false, reason: 'check_only', gate: { min_tier: 'trusted', cooldown: 3, reason: 'affinity_below_tier' } });
    const r = await cli(['feedback', '--memoir', memoir, '--agent', 'techne', '--scene', scene, '--proposed-file', p, '--revised-file', q, '--rating', '2', '--kind', 'modified', '--min-tier', 'bonded', '--force', '--json']);
    expect(JSON.parse(r.out)).toMatchObject({ answered: true, reason: 'forced' });
    expect(readEntries(memoir).at(-1)?.training_label?.preference_pair).toEqual([
      { text: 'a', score: 0 },
      { text: 'b', score: 1 },
    ]);
  });

  it('memoir replay --agent (repeatable) --json', async () => {
    const r = await cli(['memoir', 'replay', '--agent', 'techne', '--agent', 'cupid', '--json']);
    expect(r.code).toBe(0);
    const agents = new Set(
      r.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { type: string; agent?: string })
        .filter((x) => x.type === 'beat')
        .map((x) => x.agent),
    );
    expect(agents).toEqual(new Set(['techne', 'cupid']));
  });

  it('--no-input reaches the context before or after the subcommand', async () => {
    expect((await cli(['--no-input', 'memoir', 'replay', '--agent', 'cupid'])).globals).toEqual([{ noInput: true, noColor: false }]);
    expect((await cli(['memoir', 'replay', '--no-input', '--agent', 'cupid'])).globals).toEqual([{ noInput: true, noColor: false }]);
    expect((await cli(['affinity', '--no-color'])).globals).toEqual([{ noInput: false, noColor: true }]);
  });

  it('affinity --agent --json', async () => {
    const r = await cli(['affinity', '--agent', 'techne', '--json']);
    expect((JSON.parse(r.out) as { agents: { agent: string }[] }).agents.map((a) => a.agent)).toEqual(['techne']);
  });

  it.each([
    [['feedback', '--agent', 'techne', '--scene', 'S', '--proposed', 'x', '--rating', '9', '--kind', 'accepted'], /--rating: "9" is not a rating/],
    [['feedback', '--agent', 'techne', '--scene', 'S', '--proposed', 'x', '--rating', '4', '--kind', 'liked'], /argument 'liked' is invalid/],
    [['feedback', '--agent', 'techne', '--scene', 'S', '--proposed', 'x', '--cooldown', 'soon', '--check'], /--cooldown/],
    [['feedback', '--agent', 'techne', '--scene', 'S', '--proposed', 'x', '--min-tier', 'bestie', '--check'], /--min-tier: expected one of: stranger, familiar, trusted, bonded/],
    [['memoir', 'replay', '--agent', 'zeus'], /--agent: unknown agent "zeus"/],
  ])('%j is refused: %s', async (argv, msg) => {
    const r = await cli(argv.includes('--memoir') ? argv : [...argv, '--memoir', memoir]);
    expect(r.error?.message).toMatch(msg);
  });
});
