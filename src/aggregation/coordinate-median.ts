import type { RuleResult } from './rule-result.js';
import { medianInPlace } from './select.js';
import { instantiateKernel, type Kernel } from './simd-kernel.js';
import { ColumnSorter } from './sorting-network.js';
import { AggregationError, commonLength, finiteIndices, type Vec } from './vec.js';

/**
 * Coordinate-wise median (Yin et al. 2018): each coordinate is the median of that coordinate over
 * the updates (the mean of the two middle values for an even count, as NumPy). Unweighted. Robust
 * to fewer than half of the updates being arbitrary: the median stays between honest values.
 */
export function coordinateMedian(rows: readonly Vec[]): RuleResult {
  const d = commonLength(rows, 'median');
  const { finite, nonFinite } = finiteIndices(rows);
  if (finite.length === 0) throw new AggregationError('median: every update contains NaN or Inf', 'no_finite_updates');
  const out = new Float64Array(d);
  medianInto(out, rows, finite);
  return { aggregate: out, used: finite, nonFinite };
}

/** out[k] = median over rows[indices[j]][k] (SIMD sorting network; scalar quickselect without a kernel). */
export function medianInto(
  out: Float64Array,
  rows: readonly Vec[],
  indices: readonly number[],
  kernel: Kernel | null = instantiateKernel(),
): void {
  const m = indices.length;
  const sel = indices.map((i) => rows[i] as Vec);
  if (kernel && m > 2) {
    const mid = m >>> 1;
    new ColumnSorter(kernel, m).each(sel, out.length, ({ rank, length }, k0) => {
      const hi = rank[mid] as Vec;
      if (m % 2 === 1) for (let c = 0; c < length; c++) out[k0 + c] = hi[c] as number;
      else {
        const lo = rank[mid - 1] as Vec;
        for (let c = 0; c < length; c++) out[k0 + c] = ((lo[c] as number) + (hi[c] as number)) / 2;
      }
    });
    return;
  }
  const buf = new Float64Array(m);
  for (let k = 0; k < out.length; k++) {
    for (let j = 0; j < m; j++) buf[j] = (sel[j] as Vec)[k] as number;
    out[k] = medianInPlace(buf, m);
  }
}
