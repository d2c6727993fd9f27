import { createHmac } from 'node:crypto';

/**
 * Which forges take part in a round. The council samples each round's cohort with this and
 * publishes it in the round status; the simulation samples with the same code, so what is
 * simulated is what runs.
 *
 * Every eligible forge gets a uniform draw u = HMAC-SHA256(seed, "<round>:<forgeId>") / 2^64.
 * A fixed-size cohort is the K forges with the smallest draws; a Poisson cohort is every forge with
 * u < rate. The draw depends on the seed, the round and the forge alone, so the cohort does not
 * depend on the order forges are listed in, and a forge that joins does not reshuffle the others.
 * Privacy amplification by sampling holds only against a party that cannot predict the draw: the
 * council keeps its seed secret (node:crypto), the simulation passes its experiment seed.
 */
export interface CohortDraw {
  forge: string;
  /** In [0, 1). */
  u: number;
}

function draw(seed: Uint8Array | string, round: number, forge: string): number {
  const mac = createHmac('sha256', seed).update(`${round}:${forge}`).digest();
  // 53 bits of the MAC as a double in [0, 1).
  const hi = mac.readUInt32BE(0) >>> 11;
  const lo = mac.readUInt32BE(4);
  return (hi * 2 ** 32 + lo) / 2 ** 53;
}

export function cohortDraws(eligible: readonly string[], round: number, seed: Uint8Array | string): CohortDraw[] {
  return eligible.map((forge) => ({ forge, u: draw(seed, round, forge) }));
}

const byDraw = (a: CohortDraw, b: CohortDraw): number =>
  a.u - b.u || (a.forge < b.forge ? -1 : a.forge > b.forge ? 1 : 0);
const byName = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The `size` eligible forges with the smallest draws (all of them when size ≥ eligible), sorted by name. */
export function sampleCohort(
  eligible: readonly string[],
  opts: { round: number; seed: Uint8Array | string; size: number },
): string[] {
  if (!Number.isInteger(opts.size) || opts.size < 0)
    throw new RangeError(`cohort size must be a whole number ≥ 0, got ${opts.size}`);
  const unique = [...new Set(eligible)];
  if (opts.size >= unique.length) return unique.sort(byName);
  return cohortDraws(unique, opts.round, opts.seed)
    .sort(byDraw)
    .slice(0, opts.size)
    .map((d) => d.forge)
    .sort(byName);
}

/** Every eligible forge whose draw falls below `rate` (Poisson sampling, as the sampled-Gaussian accountant assumes), sorted by name. */
export function poissonCohort(
  eligible: readonly string[],
  opts: { round: number; seed: Uint8Array | string; rate: number },
): string[] {
  if (!(opts.rate >= 0 && opts.rate <= 1)) throw new RangeError(`sampling rate must be in [0, 1], got ${opts.rate}`);
  return cohortDraws([...new Set(eligible)], opts.round, opts.seed)
    .filter((d) => d.u < opts.rate)
    .map((d) => d.forge)
    .sort(byName);
}

/**
 * How sure the Byzantine bound f of a sampled round is: f is the smallest count with
 * P[more than f Byzantine forges in one round's cohort] ≤ FAULT_BOUND_DELTA. Per round: over R
 * rounds the chance that any cohort exceeds f is at most R times this (union bound).
 */
export const FAULT_BOUND_DELTA = 1e-3;

/** How a round's cohort is drawn: exactly K forges (`fixed`), or each forge with probability K/N (`poisson`). */
export type CohortSampling = 'fixed' | 'poisson';

/**
 * f of a robust rule over a sampled cohort: the Byzantine forges one round's cohort holds, bounded
 * with probability 1 − δ. A cohort of K drawn from N forges of which b are Byzantine holds
 * X ~ Hypergeometric(N, b, K) of them (`fixed`); a Poisson cohort at rate K/N holds
 * X ~ Binomial(b, K/N) (`poisson`). The mean (K·b/N) is not a bound: at N = 1000, b = 200,
 * K = 100 a cohort holds more than 20 Byzantine forges in 4 rounds of 10. When the cohort is the
 * whole federation, f = b exactly. Shared by the council (`--cohort`) and the simulation.
 */
export function cohortFaultBound(opts: {
  population: number;
  byzantine: number;
  cohort: number;
  sampling?: CohortSampling;
  delta?: number;
}): number {
  const { population: n, byzantine: b, cohort: k } = opts;
  const delta = opts.delta ?? FAULT_BOUND_DELTA;
  for (const [name, v] of [
    ['population', n],
    ['byzantine', b],
    ['cohort', k],
  ] as const)
    if (!Number.isInteger(v) || v < 0) throw new RangeError(`${name} must be a whole number ≥ 0, got ${v}`);
  if (b > n) throw new RangeError(`byzantine (${b}) exceeds the population (${n})`);
  if (!(delta > 0 && delta < 1)) throw new RangeError(`δ must be in (0, 1), got ${delta}`);
  if (b === 0 || k === 0) return 0;
  if (k >= n) return b;
  const poisson = opts.sampling === 'poisson';
  const top = poisson ? b : Math.min(b, k);
  const low = poisson ? 0 : Math.max(0, k - (n - b));
  const logPmf = poisson
    ? (x: number): number => logChoose(b, x) + x * Math.log(k / n) + (b - x) * Math.log1p(-k / n)
    : (x: number): number => logChoose(b, x) + logChoose(n - b, k - x) - logChoose(n, k);
  // P[X > f] summed from the top: f is where adding P[X = f] would pass δ.
  let tail = 0;
  for (let x = top; x > low; x--) {
    const p = Math.exp(logPmf(x));
    if (tail + p > delta) return x;
    tail += p;
  }
  return low;
}

function logChoose(n: number, r: number): number {
  return logFactorial(n) - logFactorial(r) - logFactorial(n - r);
}

/** ln n!: exact sums below 20, Stirling's series above (error under 1e-12). */
function logFactorial(n: number): number {
  if (n < 20) {
    let s = 0;
    for (let i = 2; i <= n; i++) s += Math.log(i);
    return s;
  }
  const inv = 1 / n;
  const inv2 = inv * inv;
  return n * Math.log(n) - n + 0.5 * Math.log(2 * Math.PI * n) + inv * (1 / 12 - inv2 * (1 / 360 - inv2 * (1 / 1260)));
}

/**
 * The smallest cohort K that holds its own f: K ≥ needs(f(K)) (e.g. 4f + 3 for Bulyan), or null
 * when not even the whole federation does.
 */
export function smallestCohort(
  opts: { population: number; byzantine: number; sampling?: CohortSampling; delta?: number },
  needs: (f: number) => number,
): number | null {
  for (let k = 1; k <= opts.population; k++) if (k >= needs(cohortFaultBound({ ...opts, cohort: k }))) return k;
  return null;
}
