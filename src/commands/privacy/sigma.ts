import type { Ctx } from '../../context.js';
import { UsageError } from '../../errors.js';
import { colors } from '../../output/color.js';
import { epsilonFloor, exactGaussianEpsilon, sigmaForEpsilon } from '../../privacy/rdp-accountant.js';
import { defineCommand } from '../types.js';
import { deltaFlag, epsilonFlag, sampleRateFlag, stepsFlag } from '../options.js';
import { delta as fmtDelta, epsilon as fmtEps } from '../../format.js';
import { optionsSchema } from '../spec-schema.js';
import { sigma as spec } from './commands.js';

const options = optionsSchema(spec, {
  epsilon: epsilonFlag,
  sampleRate: sampleRateFlag.default(1),
  steps: stepsFlag.default(1),
  delta: deltaFlag.default(1e-5),
});

export interface SigmaResult {
  target_epsilon: number;
  sample_rate: number;
  steps: number;
  delta: number;
  /** The smallest σ (to 1e-10 relative) whose RDP ε stays within the target. */
  sigma: number;
  /** ε at that σ (never above the target). */
  epsilon: number;
  order: number;
  epsilon_exact: number | null;
}

export default defineCommand({
  options,
  async run(opts, _ctx: Ctx): Promise<SigmaResult> {
    let s;
    try {
      s = sigmaForEpsilon({ epsilon: opts.epsilon, sampleRate: opts.sampleRate, steps: opts.steps, delta: opts.delta });
    } catch (err) {
      if (err instanceof RangeError) {
        throw new UsageError(
          `--epsilon ${opts.epsilon}: unreachable at δ = ${fmtDelta(opts.delta)}; the accountant's ε never falls below ${fmtEps(epsilonFloor(opts.delta))} whatever σ`,
          'ask for a larger ε or a larger δ',
        );
      }
      throw err;
    }
    return {
      target_epsilon: opts.epsilon,
      sample_rate: opts.sampleRate,
      steps: opts.steps,
      delta: opts.delta,
      sigma: s.noiseMultiplier,
      epsilon: s.epsilon,
      order: s.order,
      epsilon_exact:
        opts.sampleRate === 1
          ? exactGaussianEpsilon({ mu: Math.sqrt(opts.steps) / s.noiseMultiplier, delta: opts.delta })
          : null,
    };
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    return `σ = ${c.bold(r.sigma.toPrecision(6))} keeps ε ≤ ${r.target_epsilon} at δ = ${fmtDelta(r.delta)} over ${r.steps} step${r.steps === 1 ? '' : 's'} with q = ${r.sample_rate} (ε = ${fmtEps(r.epsilon)}, α = ${r.order})`;
  },
});
