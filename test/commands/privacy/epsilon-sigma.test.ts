import { readFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EpsilonResult } from '../../../src/commands/privacy/epsilon.js';
import type { SigmaResult } from '../../../src/commands/privacy/sigma.js';
import type { KouraiError } from '../../../src/errors.js';
import { ExitCode } from '../../../src/errors.js';
import { runCli } from '../../helpers/run.js';
import { testCtx, type TestCtx } from '../../helpers/ctx.js';

const epsilonCmd = () => import('../../../src/commands/privacy/epsilon.js');
const sigmaCmd = () => import('../../../src/commands/privacy/sigma.js');
const ref = JSON.parse(readFileSync(new URL('../../fixtures/privacy/opacus-rdp.json', import.meta.url), 'utf8')) as {
  eps_table: {
    sigma: number;
    q: number;
    steps: number;
    eps_rdp: number;
    best_alpha: number;
    eps_exact_gdp: number | null;
  }[];
};

let ctx: TestCtx;
beforeEach(() => {
  ctx = testCtx();
});
afterEach(() => ctx.cleanup());

async function failure(p: Promise<unknown>): Promise<KouraiError> {
  try {
    await p;
  } catch (err) {
    return err as KouraiError;
  }
  throw new Error('expected the command to fail');
}

describe('kourai privacy epsilon', () => {
  it.each(ref.eps_table)('--sigma $sigma --sample-rate $q --steps $steps --json matches Opacus', async (r) => {
    const { json } = await runCli(
      epsilonCmd,
      { sigma: String(r.sigma), sampleRate: String(r.q), steps: String(r.steps), delta: '1e-5', json: true },
      ctx,
    );
    const out = json as EpsilonResult;
    expect(Math.abs(out.epsilon - r.eps_rdp) / r.eps_rdp).toBeLessThan(1e-6);
    expect(out.order).toBeCloseTo(r.best_alpha, 12);
    expect(out.orders).toBe(151);
    if (r.eps_exact_gdp !== null)
      expect(Math.abs((out.epsilon_exact as number) - r.eps_exact_gdp) / r.eps_exact_gdp).toBeLessThan(1e-6);
    else expect(out.epsilon_exact).toBeNull();
  });

  it('defaults to one federation round (q = 1, 1 step, δ = 1e-5) and prints one readable line', async () => {
    const { stdout, code } = await runCli(epsilonCmd, { sigma: '2', sampleRate: '1', steps: '1', delta: '1e-5' }, ctx);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^ε = 2\.166 at δ = 1e-5 after 1 step of σ = 2, q = 1 \(RDP, best order α = 9\.6\)/);
    expect(stdout).toMatch(/exact ε for this Gaussian composition: 1\.993/);
  });

  it('warns on stderr when the best order is at the edge of the range', async () => {
    await runCli(epsilonCmd, { sigma: '500', sampleRate: '1', steps: '1', delta: '1e-5' }, ctx);
    expect(ctx.stderr.text).toMatch(/warning: the best order is at the edge/);
  });

  it.each([
    [{ sigma: '0' }, /--sigma: σ must be greater than 0/],
    [{ sigma: '-1' }, /--sigma: σ must be greater than 0/],
    [{}, /--sigma: required/],
    [{ sigma: 'abc' }, /--sigma: "abc" is not a number/],
    [{ sigma: '1', delta: '0' }, /--delta: δ must be strictly between 0 and 1/],
    [{ sigma: '1', delta: '1' }, /--delta: δ must be strictly between 0 and 1/],
    [{ sigma: '1', sampleRate: '1.5' }, /--sample-rate: the sample rate must be in \(0, 1\]/],
    [{ sigma: '1', steps: '0' }, /--steps: at least 1 step/],
    [{ sigma: '1', steps: '2.5' }, /--steps: must be a whole number/],
  ])('refuses %o with a usage error (exit 2)', async (raw, msg) => {
    const err = await failure(runCli(epsilonCmd, raw, ctx));
    expect(err.exitCode).toBe(ExitCode.usage);
    expect(err.message).toMatch(msg);
    expect(ctx.stdout.text).toBe('');
  });
});

describe('kourai privacy sigma', () => {
  it('finds the σ that spends exactly the target over the rounds, and epsilon agrees', async () => {
    const { json } = await runCli(
      sigmaCmd,
      { epsilon: '8', sampleRate: '1', steps: '152', delta: '1e-5', json: true },
      ctx,
    );
    const s = json as SigmaResult;
    expect(s.epsilon).toBeLessThanOrEqual(8);
    expect(s.epsilon).toBeGreaterThan(8 - 1e-6);
    const { json: back } = await runCli(
      epsilonCmd,
      { sigma: String(s.sigma), sampleRate: '1', steps: '152', delta: '1e-5', json: true },
      ctx,
    );
    expect((back as EpsilonResult).epsilon).toBe(s.epsilon);
  });

  it('finds σ = 1 for the subsampled reference row', async () => {
    const { json } = await runCli(
      sigmaCmd,
      { epsilon: String(2.1013652716430564), sampleRate: '0.01', steps: '1000', delta: '1e-5', json: true },
      ctx,
    );
    expect((json as SigmaResult).sigma).toBeCloseTo(1, 6);
  });

  it('an unreachable target is a usage error that names the floor', async () => {
    const err = await failure(runCli(sigmaCmd, { epsilon: '0.01', sampleRate: '1', steps: '1', delta: '1e-5' }, ctx));
    expect(err.exitCode).toBe(ExitCode.usage);
    expect(err.message).toMatch(/--epsilon 0.01: unreachable at δ = 1e-5; .* never falls below 0\.1029/);
  });

  it('refuses ε <= 0', async () => {
    const err = await failure(runCli(sigmaCmd, { epsilon: '0' }, ctx));
    expect(err.message).toMatch(/--epsilon: ε must be greater than 0/);
  });
});
