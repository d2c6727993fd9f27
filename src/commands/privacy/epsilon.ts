import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { DEFAULT_ORDERS, epsilonFor, exactGaussianEpsilon } from '../../privacy/rdp-accountant.js';
import { defineCommand } from '../types.js';
import { deltaFlag, sampleRateFlag, sigmaFlag, stepsFlag } from '../options.js';
import { delta as fmtDelta, epsilon as fmtEps } from '../../format.js';
import { warn } from '../../output/notice.js';
import { optionsSchema } from '../spec-schema.js';
import { epsilon as spec } from './commands.js';

const options = optionsSchema(spec, {
  sigma: sigmaFlag,
  sampleRate: sampleRateFlag.default(1),
  steps: stepsFlag.default(1),
  delta: deltaFlag.default(1e-5),
});

export interface EpsilonResult {
  sigma: number;
  sample_rate: number;
  steps: number;
  delta: number;
  /** ε from the RDP accountant (Opacus default orders, Balle et al. 2020 conversion). */
  epsilon: number;
  /** The order α at which ε was attained. */
  order: number;
  /** True when the best order is the smallest or largest one (a tighter bound may exist beyond). */
  order_at_boundary: boolean;
  orders: number;
  /** For q = 1 only: the exact ε of the composed Gaussian mechanism (informational; budgets use `epsilon`). */
  epsilon_exact: number | null;
}

export default defineCommand({
  options,
  async run(opts, _ctx: Ctx): Promise<EpsilonResult> {
    const spent = epsilonFor({
      noiseMultiplier: opts.sigma,
      sampleRate: opts.sampleRate,
      steps: opts.steps,
      delta: opts.delta,
    });
    return {
      sigma: opts.sigma,
      sample_rate: opts.sampleRate,
      steps: opts.steps,
      delta: opts.delta,
      epsilon: spent.epsilon,
      order: spent.order,
      order_at_boundary: spent.atBoundary,
      orders: DEFAULT_ORDERS.length,
      epsilon_exact:
        opts.sampleRate === 1
          ? exactGaussianEpsilon({ mu: Math.sqrt(opts.steps) / opts.sigma, delta: opts.delta })
          : null,
    };
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const lines = [
      `ε = ${c.bold(fmtEps(r.epsilon))} at δ = ${fmtDelta(r.delta)} after ${r.steps} step${r.steps === 1 ? '' : 's'} of σ = ${r.sigma}, q = ${r.sample_rate} (RDP, best order α = ${r.order})`,
    ];
    if (r.epsilon_exact !== null)
      lines.push(
        c.dim(`exact ε for this Gaussian composition: ${fmtEps(r.epsilon_exact)} (budgets are charged the RDP figure)`),
      );
    if (r.order_at_boundary)
      warn(ctx, `the best order is at the edge of the ${r.orders} orders; the true ε may be a little lower`);
    return lines.join('\n');
  },
});
