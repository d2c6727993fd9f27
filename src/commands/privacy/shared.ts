import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { resolvePrivacyConfig, type ResolvedPrivacyConfig } from '../../privacy/privacy-config.js';

const toNumber = (v: unknown): unknown => (v === undefined || v === null ? undefined : typeof v === 'string' && v.trim() === '' ? NaN : Number(v));

/** A numeric flag: commander hands over strings; `required: what` when missing, `not a number` when garbled. */
export function numberFlag<T extends z.ZodType>(what: string, refine: (n: z.ZodNumber) => T) {
  return z.preprocess(toNumber, refine(z.number({ error: (iss) => (iss.input === undefined ? `required: ${what}` : 'not a number') })));
}

export const sigmaFlag = numberFlag('the noise multiplier σ', (n) => n.positive({ error: 'σ must be greater than 0' }).finite());
export const deltaFlag = numberFlag('δ', (n) => n.gt(0, { error: 'δ must be strictly between 0 and 1' }).lt(1, { error: 'δ must be strictly between 0 and 1' }));
export const sampleRateFlag = numberFlag('the sample rate q', (n) =>
  n.gt(0, { error: 'the sample rate must be in (0, 1]' }).max(1, { error: 'the sample rate must be in (0, 1] (1 for a federation round)' }),
);
export const stepsFlag = numberFlag('the number of steps (rounds)', (n) => n.int({ error: 'must be a whole number' }).min(1, { error: 'at least 1 step' }).max(1e9));
export const epsilonFlag = numberFlag('the target ε', (n) => n.positive({ error: 'ε must be greater than 0' }).finite());

/** Optional budget/mechanism overrides, validated (with the flag's name) by resolvePrivacyConfig. */
const optionalNumber = numberFlag('a number', (n) => n).optional();
export const budgetFlags = {
  forgeEpsilon: optionalNumber,
  agentEpsilon: optionalNumber,
  delta: optionalNumber,
  noiseMultiplier: optionalNumber,
  clipNorm: optionalNumber,
};

export function configFrom(ctx: Ctx, opts: { forgeEpsilon?: number | undefined; agentEpsilon?: number | undefined; delta?: number | undefined; noiseMultiplier?: number | undefined; clipNorm?: number | undefined }): ResolvedPrivacyConfig {
  return resolvePrivacyConfig({
    home: kouraiHome(ctx),
    env: ctx.env,
    flags: { forgeEpsilon: opts.forgeEpsilon, agentEpsilon: opts.agentEpsilon, delta: opts.delta, noiseMultiplier: opts.noiseMultiplier, clipNorm: opts.clipNorm },
  });
}

/** ε to a readable precision: 4 significant digits, never exponent notation for ordinary values. */
export function fmtEps(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return '0';
  if (x >= 1000) return x.toFixed(0);
  return x.toPrecision(4).replace(/(\.\d*?)0+$/, '$1').replace(/\.$/, '');
}

/** δ as people write it: 1e-5 rather than 0.00001. */
export function fmtDelta(d: number): string {
  return d < 1e-3 ? d.toExponential() : String(d);
}

/** The config as it appears in --json output (snake_case, with where each value came from). */
export function configJson(r: ResolvedPrivacyConfig): Record<string, unknown> {
  return {
    forge_epsilon: r.config.forgeEpsilon,
    agent_epsilon: r.config.agentEpsilon,
    delta: r.config.delta,
    noise_multiplier: r.config.noiseMultiplier,
    clip_norm: r.config.clipNorm,
    origin: {
      forge_epsilon: r.origin.forgeEpsilon,
      agent_epsilon: r.origin.agentEpsilon,
      delta: r.origin.delta,
      noise_multiplier: r.origin.noiseMultiplier,
      clip_norm: r.origin.clipNorm,
    },
    file: r.file,
  };
}
