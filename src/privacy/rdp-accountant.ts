/**
 * The Rényi-DP accountant for the (sampled) Gaussian mechanism, a line-by-line port of Opacus's
 * `opacus/accountants/analysis/rdp.py` (Mironov, Talwar & Zhang 2019), with the improved
 * RDP -> (ε, δ) conversion of Balle et al. 2020 that Opacus uses:
 *
 *   ε = min over α of [ rdp(α) - (ln δ + ln α)/(α - 1) + ln((α - 1)/α) ].
 *
 * A federation round releases each agent's delta once, and the server sees who took part, so
 * the sample rate is q = 1 and one round's RDP at order α is α / (2σ²). The subsampled (q < 1)
 * formulas are here for planning and to agree with Opacus on every input.
 *
 * Reproduces test/fixtures/privacy/opacus-rdp.json (Opacus, run unmodified) to 1e-6 relative.
 */
import { logAdd, logErfc, logNdtr, logSub } from './log-math.js';

/** Opacus's default orders: 1.1..10.9 step 0.1, then 12..63 (151 orders). Same floats as Python. */
export const DEFAULT_ORDERS: readonly number[] = Object.freeze([
  ...Array.from({ length: 99 }, (_, i) => 1 + (i + 1) / 10),
  ...Array.from({ length: 52 }, (_, i) => 12 + i),
]);

const LOG_HALF = Math.log(0.5);

/** log A_α for integer α: a finite binomial sum (Opacus `_compute_log_a_for_int_alpha`). */
function logAInt(q: number, sigma: number, alpha: number): number {
  let logA = -Infinity;
  const logQ = Math.log(q);
  const log1mQ = Math.log1p(-q);
  let coef = 1; // binom(alpha, i), updated incrementally
  for (let i = 0; i <= alpha; i++) {
    if (i > 0) coef = (coef * (alpha - i + 1)) / i;
    const logCoef = Math.log(coef) + i * logQ + (alpha - i) * log1mQ;
    const s = logCoef + (i * i - i) / (2 * sigma * sigma);
    logA = logAdd(logA, s);
  }
  return logA;
}

/**
 * log A_α for fractional α: the two-sided series with log-space erfc terms
 * (Opacus `_compute_log_a_for_frac_alpha`), summed until both terms fall below e^-30.
 */
function logAFrac(q: number, sigma: number, alpha: number): number {
  let logA0 = -Infinity;
  let logA1 = -Infinity;
  const z0 = sigma * sigma * Math.log(1 / q - 1) + 0.5;
  const logQ = Math.log(q);
  const log1mQ = Math.log1p(-q);
  const s2 = 2 * sigma * sigma;
  const sqrt2Sigma = Math.SQRT2 * sigma;
  let coef = 1; // binom(alpha, i) for real alpha, updated incrementally
  for (let i = 0; ; i++) {
    if (i > 0) coef = (coef * (alpha - i + 1)) / i;
    const logCoef = Math.log(Math.abs(coef));
    const j = alpha - i;
    const logT0 = logCoef + i * logQ + j * log1mQ;
    const logT1 = logCoef + j * logQ + i * log1mQ;
    const logE0 = LOG_HALF + logErfc((i - z0) / sqrt2Sigma);
    const logE1 = LOG_HALF + logErfc((z0 - j) / sqrt2Sigma);
    const logS0 = logT0 + (i * i - i) / s2 + logE0;
    const logS1 = logT1 + (j * j - j) / s2 + logE1;
    if (coef > 0) {
      logA0 = logAdd(logA0, logS0);
      logA1 = logAdd(logA1, logS1);
    } else {
      logA0 = logSub(logA0, logS0);
      logA1 = logSub(logA1, logS1);
    }
    if (Math.max(logS0, logS1) < -30) break;
    if (i > 100_000) throw new RangeError(`RDP series did not converge (q=${q}, sigma=${sigma}, alpha=${alpha})`);
  }
  return logAdd(logA0, logA1);
}

/** RDP of one step of the sampled Gaussian mechanism at order α (Opacus `_compute_rdp`). */
export function rdpOfStep(q: number, sigma: number, alpha: number): number {
  if (q === 0) return 0;
  if (sigma === 0) return Infinity;
  if (q === 1) return alpha / (2 * sigma * sigma);
  if (alpha === Infinity) return Infinity;
  const logA = Number.isInteger(alpha) ? logAInt(q, sigma, alpha) : logAFrac(q, sigma, alpha);
  return logA / (alpha - 1);
}

/** RDP after `steps` steps at each order (Opacus `compute_rdp`). */
export function computeRdp(p: {
  sampleRate: number;
  noiseMultiplier: number;
  steps: number;
  orders?: readonly number[];
}): number[] {
  const orders = p.orders ?? DEFAULT_ORDERS;
  return orders.map((a) => rdpOfStep(p.sampleRate, p.noiseMultiplier, a) * p.steps);
}

export interface PrivacySpent {
  epsilon: number;
  /** The order α at which the minimum was attained. */
  order: number;
  /**
   * The minimum sits on the smallest or largest order: a tighter bound may exist beyond the
   * range (Opacus warns in this case).
   */
  atBoundary: boolean;
}

/** The improved RDP -> (ε, δ) conversion (Opacus `get_privacy_spent`). */
export function rdpToEpsilon(orders: ArrayLike<number>, rdp: ArrayLike<number>, delta: number): PrivacySpent {
  if (orders.length !== rdp.length)
    throw new RangeError(`orders (${orders.length}) and rdp (${rdp.length}) differ in length`);
  const logDelta = Math.log(delta);
  let best = NaN;
  let bestOrder = NaN;
  for (let k = 0; k < orders.length; k++) {
    const a = orders[k] as number;
    const eps = (rdp[k] as number) - (logDelta + Math.log(a)) / (a - 1) + Math.log((a - 1) / a);
    // numpy.nanargmin: the first minimum, NaNs skipped.
    if (!Number.isNaN(eps) && (Number.isNaN(best) || eps < best)) {
      best = eps;
      bestOrder = a;
    }
  }
  if (Number.isNaN(best)) return { epsilon: Infinity, order: NaN, atBoundary: false };
  return {
    epsilon: best,
    order: bestOrder,
    atBoundary: bestOrder === orders[0] || bestOrder === orders[orders.length - 1],
  };
}

export interface MechanismParams {
  /** σ: noise standard deviation as a multiple of the clip norm. */
  noiseMultiplier: number;
  /** q: the probability that a record takes part in a step (1 for a federation round). */
  sampleRate: number;
  /** Number of steps (rounds) composed. */
  steps: number;
  delta: number;
  orders?: readonly number[];
}

/** ε after `steps` compositions of the sampled Gaussian mechanism (RDP accountant). */
export function epsilonFor(p: MechanismParams): PrivacySpent {
  const orders = p.orders ?? DEFAULT_ORDERS;
  return rdpToEpsilon(orders, computeRdp({ ...p, orders }), p.delta);
}

/** The smallest ε any σ can reach with these orders and δ (the conversion's floor as rdp -> 0). */
export function epsilonFloor(delta: number, orders: readonly number[] = DEFAULT_ORDERS): number {
  return rdpToEpsilon(
    orders,
    orders.map(() => 0),
    delta,
  ).epsilon;
}

export interface SigmaSearch {
  noiseMultiplier: number;
  /** ε achieved at the returned σ (never above the target). */
  epsilon: number;
  order: number;
  iterations: number;
}

/**
 * The smallest σ (to relative precision `tolerance`) with ε(σ) <= target, by bisection on
 * log σ: ε is decreasing in σ. Throws RangeError when the target is below what any σ reaches.
 */
export function sigmaForEpsilon(
  p: Omit<MechanismParams, 'noiseMultiplier'> & { epsilon: number; tolerance?: number },
): SigmaSearch {
  const orders = p.orders ?? DEFAULT_ORDERS;
  const tol = p.tolerance ?? 1e-10;
  const eps = (sigma: number): PrivacySpent => epsilonFor({ ...p, orders, noiseMultiplier: sigma });
  const floor = epsilonFloor(p.delta, orders);
  if (!(p.epsilon > floor)) {
    throw new RangeError(
      `ε = ${p.epsilon} is unreachable at δ = ${p.delta}: with these orders ε never falls below ${floor.toPrecision(6)}, whatever σ`,
    );
  }
  let lo = 1e-3;
  let hi = 1;
  let iterations = 0;
  while (eps(hi).epsilon > p.epsilon) {
    lo = hi;
    hi *= 2;
    iterations++;
    if (hi > 1e12) throw new RangeError(`no σ up to 1e12 reaches ε = ${p.epsilon}`);
  }
  if (hi === 1) {
    while (eps(lo).epsilon <= p.epsilon) {
      hi = lo;
      lo /= 2;
      iterations++;
      if (lo < 1e-12) break;
    }
  }
  // Invariant: eps(lo) > target >= eps(hi).
  while (hi / lo - 1 > tol) {
    const mid = Math.sqrt(lo * hi);
    if (eps(mid).epsilon > p.epsilon) lo = mid;
    else hi = mid;
    iterations++;
  }
  const at = eps(hi);
  return { noiseMultiplier: hi, epsilon: at.epsilon, order: at.order, iterations };
}

/**
 * Composition of heterogeneous steps: every release adds its RDP curve; ε is read off the sum.
 * Curves are cached per (q, σ), so a ledger of many rounds costs one evaluation per setting.
 */
export class RdpAccountant {
  readonly orders: readonly number[];
  private readonly total: Float64Array;
  private readonly cache = new Map<string, number[]>();
  private stepsTaken = 0;

  constructor(orders: readonly number[] = DEFAULT_ORDERS) {
    this.orders = orders;
    this.total = new Float64Array(orders.length);
  }

  /** The RDP curve of `steps` steps at (σ, q), without composing it. */
  curve(noiseMultiplier: number, sampleRate: number, steps = 1): number[] {
    const key = `${sampleRate}:${noiseMultiplier}`;
    let c = this.cache.get(key);
    if (!c) {
      c = computeRdp({ sampleRate, noiseMultiplier, steps: 1, orders: this.orders });
      this.cache.set(key, c);
    }
    return c.map((v) => v * steps);
  }

  step(noiseMultiplier: number, sampleRate: number, steps = 1): this {
    const c = this.curve(noiseMultiplier, sampleRate, steps);
    for (let k = 0; k < c.length; k++) this.total[k] = (this.total[k] as number) + (c[k] as number);
    this.stepsTaken += steps;
    return this;
  }

  get steps(): number {
    return this.stepsTaken;
  }

  rdp(): number[] {
    return Array.from(this.total);
  }

  epsilon(delta: number): PrivacySpent {
    if (this.stepsTaken === 0) return { epsilon: 0, order: NaN, atBoundary: false };
    return rdpToEpsilon(this.orders, this.total, delta);
  }

  /** ε if one more step at (σ, q) were composed, without composing it. */
  epsilonWith(noiseMultiplier: number, sampleRate: number, delta: number, steps = 1): PrivacySpent {
    const c = this.curve(noiseMultiplier, sampleRate, steps);
    return rdpToEpsilon(
      this.orders,
      c.map((v, k) => v + (this.total[k] as number)),
      delta,
    );
  }

  clone(): RdpAccountant {
    const a = new RdpAccountant(this.orders);
    a.total.set(this.total);
    a.stepsTaken = this.stepsTaken;
    for (const [k, v] of this.cache) a.cache.set(k, v);
    return a;
  }
}

/**
 * The exact (tight) ε of a composition of Gaussian mechanisms without subsampling (q = 1):
 * the composition is μ-Gaussian DP with μ = sqrt(Σ 1/σᵢ²), and
 *   δ(ε) = Φ(-ε/μ + μ/2) - e^ε Φ(-ε/μ - μ/2)       (Balle & Wang 2018; Dong, Roth & Su 2019).
 * Informational: budgets are charged with the RDP figure, which is never smaller.
 */
export function exactGaussianEpsilon(p: { mu: number; delta: number }): number {
  const { mu, delta } = p;
  if (!(mu > 0)) return 0;
  const deltaAt = (eps: number): number => {
    const a = logNdtr(-eps / mu + mu / 2);
    const b = eps + logNdtr(-eps / mu - mu / 2);
    return b >= a ? 0 : Math.exp(logSub(a, b));
  };
  if (deltaAt(0) <= delta) return 0;
  let lo = 0;
  let hi = 1;
  while (deltaAt(hi) > delta) {
    lo = hi;
    hi *= 2;
    if (hi > 1e9) return Infinity;
  }
  for (let i = 0; i < 200 && hi - lo > 1e-13 * Math.max(1, hi); i++) {
    const mid = (lo + hi) / 2;
    if (deltaAt(mid) > delta) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** μ of the Gaussian-DP composition of q = 1 releases with these noise multipliers. */
export function gaussianMu(noiseMultipliers: readonly number[]): number {
  return Math.sqrt(noiseMultipliers.reduce((s, sigma) => s + 1 / (sigma * sigma), 0));
}
