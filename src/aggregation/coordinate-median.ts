import type { RuleResult } from './rule-result.js';
import { medianInPlace } from './select.js';
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

/** out[k] = median over rows[indices[j]][k]. */
export function medianInto(out: Float64Array, rows: readonly Vec[], indices: readonly number[]): void {
  const m = indices.length;
  const sel = indices.map((i) => rows[i] as Vec);
  const buf = new Float64Array(m);
  for (let k = 0; k < out.length; k++) {
    for (let j = 0; j < m; j++) buf[j] = (sel[j] as Vec)[k] as number;
    out[k] = medianInPlace(buf, m);
  }
}
