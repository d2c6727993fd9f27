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
