import { finiteCandidates } from './krum.js';
import type { GramPool } from './gram-pool.js';
import { pairwiseSquaredDistances, type DistanceMatrix } from './pairwise-distances.js';
import type { RuleResult } from './rule-result.js';
import { meanClosest, medianInPlace } from './select.js';
import { instantiateKernel, type Kernel } from './simd-kernel.js';
import { ColumnSorter } from './sorting-network.js';
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
  if (!Number.isInteger(f) || f < 0)
    throw new AggregationError(`bulyan: f (the Byzantine bound) must be a whole number ≥ 0, got ${f}`, 'bad_parameter');
  if (n < 4 * f + 3) {
    throw new AggregationError(
      `bulyan: tolerating f=${f} Byzantine updates needs n ≥ 4f+3 = ${4 * f + 3} finite updates; got ${n} (lower --byzantine or wait for more forges)`,
      'precondition',
    );
  }
}

export function bulyanSelect(
  dist: DistanceMatrix,
  f: number,
): { selected: number[]; theta: number; beta: number; fEffective: number; tiedSteps: number } {
  if (!Number.isInteger(f) || f < 0)
    throw new AggregationError(`bulyan: f (the Byzantine bound) must be a whole number ≥ 0, got ${f}`, 'bad_parameter');
  const { cand: remaining, fEffective: fe } = finiteCandidates(dist, f);
  requireBulyan(remaining.length, fe);
  const theta = remaining.length - 2 * fe;
  const beta = theta - 2 * fe;
  const selected: number[] = [];
  // Each candidate's neighbours sorted once by distance; a round's Krum score is then the sum of
  // the first k neighbours still remaining (the same values, summed in the same ascending order,
  // as sorting the remaining distances afresh), O(n) per candidate instead of O(n log n).
  const n = dist.n;
  const order = new Map<number, Int32Array>();
  for (const i of remaining) {
    const nb = Int32Array.from(remaining.filter((j) => j !== i));
    nb.sort((x, y) => (dist.d2[i * n + x] as number) - (dist.d2[i * n + y] as number) || x - y);
    order.set(i, nb);
  }
  const removed = new Uint8Array(n);
  const ties: number[][] = [];
  for (let t = 0; t < theta; t++) {
    const k = Math.max(1, remaining.length - fe - 2);
    const s = remaining.map((i) => {
      let sum = 0;
      let c = 0;
      for (const j of order.get(i) as Int32Array) {
        if (removed[j]) continue;
        sum += dist.d2[i * n + j] as number;
        if (++c === k) break;
      }
      return sum;
    });
    let best = 0;
    for (let a = 1; a < remaining.length; a++) if ((s[a] as number) < (s[best] as number)) best = a;
    ties.push(remaining.filter((_, a) => a !== best && s[a] === s[best]));
    const chosenIndex = remaining[best] as number;
    selected.push(chosenIndex);
    removed[chosenIndex] = 1;
    remaining.splice(best, 1);
  }
  const chosen = new Set(selected);
  const tiedSteps = ties.filter((t) => t.some((i) => !chosen.has(i))).length;
  return { selected, theta, beta, fEffective: fe, tiedSteps };
}

/**
 * out[k] = mean of the β values of rows[selected][k] closest to their median (ties in distance
 * prefer the smaller value). Sorted columns make the β closest a window around the median.
 */
export function bulyanCombineInto(
  out: Float64Array,
  rows: readonly Vec[],
  selected: readonly number[],
  beta: number,
  kernel: Kernel | null = instantiateKernel(),
): void {
  const m = selected.length;
  const sel = selected.map((i) => rows[i] as Vec);
  if (kernel && m > 2) {
    const mid = m >>> 1;
    new ColumnSorter(kernel, m).each(sel, out.length, ({ rank, length }, k0) => {
      for (let c = 0; c < length; c++) {
        const hi = (rank[mid] as Vec)[c] as number;
        const med = m % 2 === 1 ? hi : (((rank[mid - 1] as Vec)[c] as number) + hi) / 2;
        // window [a, b) grows from the first value ≥ the median
        let a = m % 2 === 1 ? mid : ((rank[mid - 1] as Vec)[c] as number) >= med ? mid - 1 : mid;
        let b = a;
        let s = 0;
        while (b - a < beta) {
          if (a === 0) s += (rank[b++] as Vec)[c] as number;
          else if (b === m) s += (rank[--a] as Vec)[c] as number;
          else {
            const left = (rank[a - 1] as Vec)[c] as number;
            const right = (rank[b] as Vec)[c] as number;
            if (med - left <= right - med) {
              s += left;
              a--;
            } else {
              s += right;
              b++;
            }
          }
        }
        out[k0 + c] = s / beta;
      }
    });
    return;
  }
  const buf = new Float64Array(m);
  for (let k = 0; k < out.length; k++) {
    for (let j = 0; j < m; j++) buf[j] = (sel[j] as Vec)[k] as number;
    const med = medianInPlace(buf, m);
    out[k] = meanClosest(buf, m, med, beta);
  }
}

export function bulyan(
  rows: readonly Vec[],
  f: number,
  opts: { distances?: DistanceMatrix; pool?: GramPool | null } = {},
): BulyanResult {
  const d = commonLength(rows, 'bulyan');
  const dist = opts.distances ?? pairwiseSquaredDistances(rows, { pool: opts.pool ?? null });
  const sel = bulyanSelect(dist, f);
  const aggregate = new Float64Array(d);
  bulyanCombineInto(aggregate, rows, sel.selected, sel.beta);
  const nonFinite: number[] = [];
  for (let i = 0; i < dist.n; i++) if (dist.nonFinite[i]) nonFinite.push(i);
  if (sel.selected.length === 0) throw new AggregationError('bulyan: nothing selected', 'precondition');
  return { aggregate, used: sel.selected, nonFinite, ...sel };
}
