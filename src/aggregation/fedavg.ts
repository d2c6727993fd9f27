import type { RuleResult } from './rule-result.js';
import { AggregationError, commonLength, finiteIndices, normaliseWeights, type Vec } from './vec.js';

/**
 * FedAvg (McMahan et al. 2017): the weighted mean of the updates, Σ pᵢ xᵢ with Σ pᵢ = 1.
 * Weights are uniform unless given (the council uses forges' noised sample counts only when its
 * operator asks for them: exact counts leak). Not robust: one Byzantine update moves it anywhere.
 */
export function fedavg(rows: readonly Vec[], weights?: readonly number[]): RuleResult {
  const d = commonLength(rows, 'fedavg');
  const all = rows.map((_, i) => i);
  const w = normaliseWeights(rows.length, weights, 'fedavg');
  const out = new Float64Array(d);
  weightedMeanInto(out, rows, all, w);
  // A non-finite input always makes its coordinates non-finite (weights are finite and > 0), so
  // one cheap check on the output tells whether any update must be dropped.
  if (allFinite(out)) return { aggregate: out, used: all, nonFinite: [] };
  const { finite, nonFinite } = finiteIndices(rows);
  if (finite.length === 0) throw new AggregationError('fedavg: every update contains NaN or Inf', 'no_finite_updates');
  const wf = normaliseWeights(finite.length, finite.map((i) => (weights ? (weights[i] as number) : 1)), 'fedavg');
  weightedMeanInto(out.fill(0), rows, finite, wf);
  return { aggregate: out, used: finite, nonFinite };
}

/**
 * out[k] += Σⱼ w[j] · rows[indices[j]][k] (w aligned with indices). The hot loop of FedAvg and of
 * Multi-Krum's mean: four updates per pass over `out`, so the accumulator is read and written a
 * quarter as often.
 */
export function weightedMeanInto(out: Float64Array, rows: readonly Vec[], indices: readonly number[], w: Float64Array): void {
  const d = out.length;
  let j = 0;
  for (; j + 4 <= indices.length; j += 4) {
    const r0 = rows[indices[j] as number] as Vec;
    const r1 = rows[indices[j + 1] as number] as Vec;
    const r2 = rows[indices[j + 2] as number] as Vec;
    const r3 = rows[indices[j + 3] as number] as Vec;
    const w0 = w[j] as number;
    const w1 = w[j + 1] as number;
    const w2 = w[j + 2] as number;
    const w3 = w[j + 3] as number;
    for (let k = 0; k < d; k++) {
      out[k] = (out[k] as number) + w0 * (r0[k] as number) + w1 * (r1[k] as number) + w2 * (r2[k] as number) + w3 * (r3[k] as number);
    }
  }
  for (; j < indices.length; j++) {
    const r = rows[indices[j] as number] as Vec;
    const wj = w[j] as number;
    for (let k = 0; k < d; k++) out[k] = (out[k] as number) + wj * (r[k] as number);
  }
}

export function allFinite(v: Float64Array): boolean {
  let s = 0;
  for (let k = 0; k < v.length; k++) s += (v[k] as number) * 0;
  return s === 0;
}
