import { weightedMeanInto } from './fedavg.js';
import { instantiateKernel } from './simd-kernel.js';
import type { GramPool } from './gram-pool.js';
import { pairwiseSquaredDistances, type DistanceMatrix } from './pairwise-distances.js';
import type { RuleResult } from './rule-result.js';
import { AggregationError, commonLength, normaliseWeights, type Vec } from './vec.js';

/**
 * Krum and Multi-Krum (Blanchard et al. 2017), with Flower's `aggregate.py` semantics:
 * the score of update i is the sum of its squared distances to its n − f − 2 nearest other
 * updates; Krum returns the update with the lowest score (the first one on a tie); Multi-Krum
 * averages the m lowest-scoring updates. Krum tolerates f Byzantine updates when n > 2f + 2.
 *
 * Non-finite updates never take part: they are dropped before scoring (their score is +Infinity).
 * A non-finite update is a Byzantine update caught red-handed, so it counts against f: with k of
 * them, the rule runs on the n − k finite updates with f' = max(0, f − k) (which keeps n' > 2f'+2
 * whenever n > 2f+2). VelocityFL's Krum, by contrast, lets one NaN make every score NaN and then
 * "selects" an arbitrary update.
 */
export interface KrumResult extends RuleResult {
  /** The selected update. */
  index: number;
  /** Score per input update (+Infinity for non-finite ones). */
  scores: number[];
  /** How many nearest neighbours each score sums (n − f − 2, at least 1). */
  neighbours: number;
  /** The Byzantine bound used after discounting non-finite updates. */
  fEffective: number;
  /** Another update had exactly the same lowest score (the first one won, as in Flower). */
  tied: boolean;
}

export interface MultiKrumResult extends RuleResult {
  /** The m selected updates, lowest score first. */
  indices: number[];
  scores: number[];
  neighbours: number;
  m: number;
  fEffective: number;
  /** The m-th and (m+1)-th lowest scores were equal: the cut was decided by index order. */
  tied: boolean;
}

export function krumNeighbours(n: number, f: number): number {
  return Math.max(1, n - f - 2);
}

export function requireF(rule: string, f: number): void {
  if (!Number.isInteger(f) || f < 0)
    throw new AggregationError(
      `${rule}: f (the Byzantine bound) must be a whole number ≥ 0, got ${f}`,
      'bad_parameter',
    );
}

export function requireKrum(rule: string, n: number, f: number): void {
  requireF(rule, f);
  if (n <= 2 * f + 2) {
    throw new AggregationError(
      `${rule}: tolerating f=${f} Byzantine updates needs n > 2f+2, i.e. at least ${2 * f + 3} finite updates; got ${n}`,
      'precondition',
    );
  }
}

/**
 * Krum scores of `candidates` against each other (only they count as neighbours).
 * Returns one score per candidate, in candidate order.
 */
export function krumScores(dist: DistanceMatrix, candidates: readonly number[], f: number): Float64Array {
  const m = candidates.length;
  const k = krumNeighbours(m, f);
  const scores = new Float64Array(m);
  const row = new Float64Array(m - 1);
  for (let a = 0; a < m; a++) {
    const i = candidates[a] as number;
    let c = 0;
    for (let b = 0; b < m; b++) if (b !== a) row[c++] = dist.d2[i * dist.n + (candidates[b] as number)] as number;
    row.sort();
    let s = 0;
    for (let t = 0; t < Math.min(k, c); t++) s += row[t] as number;
    scores[a] = Number.isNaN(s) ? Infinity : s;
  }
  return scores;
}

/** The finite candidates and the Byzantine bound left for them (non-finite ones count against f). */
export function finiteCandidates(dist: DistanceMatrix, f: number): { cand: number[]; fEffective: number } {
  const cand = finiteOf(dist);
  return { cand, fEffective: Math.max(0, f - (dist.n - cand.length)) };
}

function finiteOf(dist: DistanceMatrix): number[] {
  const out: number[] = [];
  for (let i = 0; i < dist.n; i++) if (!dist.nonFinite[i]) out.push(i);
  return out;
}

function nonFiniteOf(dist: DistanceMatrix): number[] {
  const out: number[] = [];
  for (let i = 0; i < dist.n; i++) if (dist.nonFinite[i]) out.push(i);
  return out;
}

/** Krum's choice from a distance matrix. */
export function krumSelect(
  dist: DistanceMatrix,
  f: number,
): { index: number; scores: number[]; neighbours: number; fEffective: number; tied: boolean } {
  requireF('krum', f);
  const { cand, fEffective } = finiteCandidates(dist, f);
  requireKrum('krum', cand.length, fEffective);
  const s = krumScores(dist, cand, fEffective);
  const scores = new Array<number>(dist.n).fill(Infinity);
  let best = -1;
  cand.forEach((i, a) => {
    scores[i] = s[a] as number;
    if (best === -1 || (s[a] as number) < (scores[best] as number)) best = i;
  });
  const tied = cand.some((i) => i !== best && scores[i] === scores[best]);
  return { index: best, scores, neighbours: krumNeighbours(cand.length, fEffective), fEffective, tied };
}

/** Multi-Krum's m choices, lowest score first (ties: lower index first). */
export function multiKrumSelect(
  dist: DistanceMatrix,
  f: number,
  m?: number,
): { indices: number[]; scores: number[]; neighbours: number; m: number; fEffective: number; tied: boolean } {
  requireF('multikrum', f);
  const { cand, fEffective } = finiteCandidates(dist, f);
  requireKrum('multikrum', cand.length, fEffective);
  const keep = m ?? cand.length - fEffective;
  if (!Number.isInteger(keep) || keep < 1 || keep > cand.length) {
    throw new AggregationError(
      `multikrum: m must be between 1 and the number of finite updates (${cand.length}), got ${keep}`,
      'bad_parameter',
    );
  }
  const s = krumScores(dist, cand, fEffective);
  const scores = new Array<number>(dist.n).fill(Infinity);
  cand.forEach((i, a) => (scores[i] = s[a] as number));
  const order = [...cand].sort((a, b) => (scores[a] as number) - (scores[b] as number) || a - b);
  const tied = keep < order.length && scores[order[keep - 1] as number] === scores[order[keep] as number];
  return {
    indices: order.slice(0, keep),
    scores,
    neighbours: krumNeighbours(cand.length, fEffective),
    m: keep,
    fEffective,
    tied,
  };
}

export function krum(
  rows: readonly Vec[],
  f: number,
  opts: { distances?: DistanceMatrix; pool?: GramPool | null } = {},
): KrumResult {
  const d = commonLength(rows, 'krum');
  const dist = opts.distances ?? pairwiseSquaredDistances(rows, { pool: opts.pool ?? null });
  const sel = krumSelect(dist, f);
  const src = rows[sel.index] as Vec;
  const aggregate = new Float64Array(d);
  for (let k = 0; k < d; k++) aggregate[k] = src[k] as number;
  return { aggregate, used: [sel.index], nonFinite: nonFiniteOf(dist), ...sel };
}

export function multiKrum(
  rows: readonly Vec[],
  f: number,
  opts: { m?: number; weights?: readonly number[]; distances?: DistanceMatrix; pool?: GramPool | null } = {},
): MultiKrumResult {
  const d = commonLength(rows, 'multikrum');
  const dist = opts.distances ?? pairwiseSquaredDistances(rows, { pool: opts.pool ?? null });
  const sel = multiKrumSelect(dist, f, opts.m);
  const w = normaliseWeights(
    sel.indices.length,
    opts.weights ? sel.indices.map((i) => opts.weights?.[i] as number) : undefined,
    'multikrum',
  );
  const aggregate = new Float64Array(d);
  weightedMeanInto(
    aggregate,
    rows,
    sel.indices,
    w,
    rows[0] instanceof Float32Array && d >= 4096 ? instantiateKernel() : null,
  );
  return { aggregate, used: sel.indices, nonFinite: nonFiniteOf(dist), ...sel };
}
