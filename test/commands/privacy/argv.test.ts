import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildCli } from '../../../src/cli.js';
import type { KouraiError } from '../../../src/errors.js';
import { testCtx, type TestCtx } from '../../helpers/ctx.js';

/** argv -> parsed options -> result, through the real commander tree (in-process). */
let ctx: TestCtx;
beforeEach(() => {
  ctx = testCtx();
});
afterEach(() => ctx.cleanup());

async function cli(argv: string[]): Promise<{ code: number | undefined; json: Record<string, unknown> | undefined; error: KouraiError | undefined }> {
  let code: number | undefined;
  const program = buildCli(() => ctx, (c) => (code = c));
  const before = ctx.stdout.chunks.length;
  try {
    await program.parseAsync(['node', 'kourai', ...argv]);
  } catch (err) {
    return { code, json: undefined, error: err as KouraiError };
  }
  const out = ctx.stdout.chunks.slice(before).join('');
  return { code, json: argv.includes('--json') ? (JSON.parse(out) as Record<string, unknown>) : undefined, error: undefined };
}

describe('argv -> options for the privacy commands', () => {
  it.each([
    [['privacy', 'epsilon', '--sigma', '2', '--json'], { sigma: 2, sample_rate: 1, steps: 1, delta: 1e-5 }],
    [['privacy', 'epsilon', '--sigma', '1.5', '--sample-rate', '0.25', '--steps', '40', '--delta', '1e-6', '--json'], { sigma: 1.5, sample_rate: 0.25, steps: 40, delta: 1e-6 }],
    [['privacy', 'sigma', '--epsilon', '3', '--steps', '5', '--json'], { target_epsilon: 3, sample_rate: 1, steps: 5, delta: 1e-5 }],
    [['federate', 'consent', '--allow', 'aidos,metis', '--allow', 'kallos', '--deny', 'techne', '--json'], { changed: true, via: 'flags' }],
    [['whisper', '--noise-multiplier', '3', '--clip-norm', '0.5', '--forge-epsilon', '4', '--agent-epsilon', '2', '--delta', '1e-6', '--json'], {}],
    [['privacy', 'ledger', '--agent', 'aidos', '--json'], { releases: [] }],
  ])('%j', async (argv, expected) => {
    const r = await cli(argv);
    expect(r.error).toBeUndefined();
    expect(r.code).toBe(0);
    expect(r.json).toMatchObject(expected);
  });

  it('budget flags reach the resolver with their names', async () => {
    const r = await cli(['whisper', '--noise-multiplier', '3', '--clip-norm', '0.5', '--forge-epsilon', '4', '--agent-epsilon', '2', '--delta', '1e-6', '--json']);
    expect(r.json?.config).toMatchObject({ forge_epsilon: 4, agent_epsilon: 2, delta: 1e-6, noise_multiplier: 3, clip_norm: 0.5, origin: { forge_epsilon: 'flag', clip_norm: 'flag' } });
    const allowed = await cli(['federate', 'consent', '--allow', 'aidos,metis', '--allow', 'kallos', '--json']);
    expect((allowed.json?.agents as { agent: string; allowed: boolean }[]).filter((a) => a.allowed).map((a) => a.agent)).toEqual(['aidos', 'metis', 'kallos']);
  });

  it.each([
    [['privacy', 'epsilon', '--sigma', '-1'], /--sigma: σ must be greater than 0/],
    [['privacy', 'epsilon', '--sigma', '1', '--sample-rate', '0'], /--sample-rate: the sample rate must be in \(0, 1\]/],
    [['whisper', '--noise-multiplier', '0'], /--noise-multiplier 0: σ must be greater than 0/],
    [['whisper', '--delta', '1'], /--delta 1: δ must be strictly between 0 and 1/],
    [['privacy', 'release', '--agent', 'aidos', '--round', '1'], /--file: required/],
  ])('%j is refused: %s', async (argv, msg) => {
    const r = await cli(argv);
    expect(r.error?.message).toMatch(msg);
  });
});
