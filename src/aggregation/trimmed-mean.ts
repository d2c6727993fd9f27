import type { RuleResult } from './rule-result.js';
import { selectInPlace } from './select.js';
import { instantiateKernel, type Kernel } from './simd-kernel.js';
import { ColumnSorter } from './sorting-network.js';
import { AggregationError, commonLength, finiteIndices, type Vec } from './vec.js';

/**
 * Coordinate-wise trimmed mean (Yin et al. 2018): for each coordinate, drop the k largest and the
 * k smallest values and average the rest. Unweighted. With k ≥ f it tolerates f arbitrary updates.
 * Needs n > 2k. Non-finite updates are dropped first and count against k (as against f in Krum):
 * with j of them, k' = max(0, k − j) is trimmed from the n − j finite ones.
 */
export function trimmedMean(rows: readonly Vec[], k: number): RuleResult & { k: number } {
  const d = commonLength(rows, 'trimmed-mean');
  if (!Number.isInteger(k) || k < 0)
    throw new AggregationError(`trimmed-mean: k must be a whole number ≥ 0, got ${k}`, 'bad_parameter');
  requireTrim(rows.length, k);
  const { finite, nonFinite } = finiteIndices(rows);
  const kEff = Math.max(0, k - nonFinite.length);
  if (finite.length === 0)
    throw new AggregationError('trimmed-mean: every update contains NaN or Inf', 'no_finite_updates');
  const out = new Float64Array(d);
  trimmedMeanInto(out, rows, finite, kEff);
  return { aggregate: out, used: finite, nonFinite, k: kEff };
}

export function requireTrim(n: number, k: number): void {
  if (n <= 2 * k) {
    throw new AggregationError(
      `trimmed-mean: trimming k=${k} from each end needs more than ${2 * k} updates (n > 2k), got ${n}`,
      'precondition',
    );
  }
}

/** out[k] = mean of rows[indices[·]][k] without its `trim` smallest and `trim` largest values. */
export function trimmedMeanInto(
  out: Float64Array,
  rows: readonly Vec[],
  indices: readonly number[],
  trim: number,
  kernel: Kernel | null = instantiateKernel(),
): void {
  const m = indices.length;
  const sel = indices.map((i) => rows[i] as Vec);
  const hiRank = m - trim - 1;
  const count = m - 2 * trim;
  if (kernel && trim > 0) {
    new ColumnSorter(kernel, m).each(sel, out.length, ({ rank, length }, k0) => {
      const o = out.subarray(k0, k0 + length);
      o.fill(0);
      for (let r = trim; r <= hiRank; r++) {
        const v = rank[r] as Vec;
        for (let c = 0; c < length; c++) o[c] = (o[c] as number) + (v[c] as number);
      }
      for (let c = 0; c < length; c++) o[c] = (o[c] as number) / count;
    });
    return;
  }
  const buf = new Float64Array(m);
  for (let k = 0; k < out.length; k++) {
    for (let j = 0; j < m; j++) buf[j] = (sel[j] as Vec)[k] as number;
    if (trim > 0) {
      selectInPlace(buf, 0, m - 1, trim);
      selectInPlace(buf, trim, m - 1, hiRank);
    }
    let s = 0;
    for (let j = trim; j <= hiRank; j++) s += buf[j] as number;
    out[k] = s / count;
  }
}
