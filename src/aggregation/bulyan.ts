import { finiteCandidates, krumScores } from './krum.js';
import { pairwiseSquaredDistances, type DistanceMatrix } from './pairwise-distances.js';
import type { RuleResult } from './rule-result.js';
import { meanClosest, medianInPlace } from './select.js';
import { AggregationError, commonLength, type Vec } from './vec.js';

/**
 * Bulyan (El Mhamdi et al. 2018), with Flower's `aggregate.py` semantics:
 * 1. select θ = n − 2f updates by repeated Krum: score the remaining updates (n' − f − 2 nearest,
 *    at least 1), take the lowest (first on a tie), remove it, repeat;
 * 2. per coordinate, take the median of the θ selected values and average the β = θ − 2f values
 *    closest to it.
 * Needs n ≥ 4f + 3. Unweighted. Non-finite updates are dropped first and count against f (see
 * krum.ts): with k of them, θ and β use f' = max(0, f − k) on the n − k finite updates.
 */
export interface BulyanResult extends RuleResult {
  /** The θ updates chosen by repeated Krum, in the order they were chosen. */
  selected: number[];
  theta: number;
  beta: number;
  fEffective: number;
  /**
   * Selection steps whose lowest Krum score was shared with an update that was then never
   * selected: the selected set was decided by index order (as in Flower).
   */
  tiedSteps: number;
}

export function requireBulyan(n: number, f: number): void {
  if (!Number.isInteger(f) || f < 0) throw new AggregationError(`bulyan: f (the Byzantine bound) must be a whole number ≥ 0, got ${f}`, 'bad_parameter');
  if (n < 4 * f + 3) {
    throw new AggregationError(`bulyan: tolerating f=${f} Byzantine updates needs n ≥ 4f+3 = ${4 * f + 3} finite updates; got ${n} (lower --byzantine or wait for more forges)`, 'precondition');
  }
}

export function bulyanSelect(dist: DistanceMatrix, f: number): { selected: number[]; theta: number; beta: number; fEffective: number; tiedSteps: number } {
  if (!Number.isInteger(f) || f < 0) throw new AggregationError(`bulyan: f (the Byzantine bound) must be a whole number ≥ 0, got ${f}`, 'bad_parameter');
  const { cand: remaining, fEffective: fe } = finiteCandidates(dist, f);
  requireBulyan(remaining.length, fe);
  const theta = remaining.length - 2 * fe;
  const beta = theta - 2 * fe;
  const selected: number[] = [];
  const ties: number[][] = [];
  for (let t = 0; t < theta; t++) {
    const s = krumScores(dist, remaining, fe);
    let best = 0;
    for (let a = 1; a < remaining.length; a++) if ((s[a] as number) < (s[best] as number)) best = a;
    ties.push(remaining.filter((_, a) => a !== best && s[a] === s[best]));
    selected.push(remaining[best] as number);
    remaining.splice(best, 1);
  }
  const chosen = new Set(selected);
  const tiedSteps = ties.filter((t) => t.some((i) => !chosen.has(i))).length;
  return { selected, theta, beta, fEffective: fe, tiedSteps };
}

/** out[k] = mean of the β values of rows[selected][k] closest to their median. */
export function bulyanCombineInto(out: Float64Array, rows: readonly Vec[], selected: readonly number[], beta: number): void {
  const m = selected.length;
  const sel = selected.map((i) => rows[i] as Vec);
  const buf = new Float64Array(m);
  for (let k = 0; k < out.length; k++) {
    for (let j = 0; j < m; j++) buf[j] = (sel[j] as Vec)[k] as number;
    const med = medianInPlace(buf, m);
    out[k] = meanClosest(buf, m, med, beta);
  }
}

export function bulyan(rows: readonly Vec[], f: number, opts: { distances?: DistanceMatrix } = {}): BulyanResult {
  const d = commonLength(rows, 'bulyan');
  const dist = opts.distances ?? pairwiseSquaredDistances(rows);
  const sel = bulyanSelect(dist, f);
  const aggregate = new Float64Array(d);
  bulyanCombineInto(aggregate, rows, sel.selected, sel.beta);
  const nonFinite: number[] = [];
  for (let i = 0; i < dist.n; i++) if (dist.nonFinite[i]) nonFinite.push(i);
  if (sel.selected.length === 0) throw new AggregationError('bulyan: nothing selected', 'precondition');
  return { aggregate, used: sel.selected, nonFinite, ...sel };
}
