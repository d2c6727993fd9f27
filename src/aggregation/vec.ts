import type { TensorData } from '../tensor/tensor.js';

/**
 * An update as the aggregation rules see it: one flat vector of coordinates (all of a forge's
 * tensors for one agent, concatenated in a fixed order). Wire data is float32; the reference
 * fixtures and the LoRA-FAIR refinement are float64. Results are always float64.
 */
export type Vec = TensorData;

/** The first non-finite coordinate of a vector, or -1. */
export function firstNonFinite(v: Vec): number {
  for (let k = 0; k < v.length; k++) {
    const x = v[k] as number;
    // x - x is NaN exactly when x is NaN or ±Infinity, and is cheaper than Number.isFinite.
    if (x - x !== 0) return k;
  }
  return -1;
}

/** Checks that every update has the same length; returns it. */
export function commonLength(rows: readonly Vec[], rule: string): number {
  const first = rows[0];
  if (!first) throw new AggregationError(`${rule}: no updates to aggregate`, 'no_updates');
  for (let i = 1; i < rows.length; i++) {
    if ((rows[i] as Vec).length !== first.length) {
      throw new AggregationError(
        `${rule}: update ${i} has ${(rows[i] as Vec).length} coordinates, update 0 has ${first.length}`,
        'length_mismatch',
      );
    }
  }
  return first.length;
}

/** A rule's precondition or input failed; `code` is stable and machine-readable. */
export class AggregationError extends Error {
  readonly code: string;
  constructor(message: string, code: string) {
    super(message);
    this.name = 'AggregationError';
    this.code = code;
  }
}

/**
 * Indices of the finite updates. Rules drop non-finite updates before anything else (the council
 * also rejects them at ingestion): one NaN must never poison a mean or a distance score.
 */
export function finiteIndices(rows: readonly Vec[]): { finite: number[]; nonFinite: number[] } {
  const finite: number[] = [];
  const nonFinite: number[] = [];
  rows.forEach((r, i) => (firstNonFinite(r) === -1 ? finite : nonFinite).push(i));
  return { finite, nonFinite };
}

/** Normalised weights (uniform when none are given); every weight must be finite and > 0. */
export function normaliseWeights(n: number, weights: readonly number[] | undefined, rule: string): Float64Array {
  const w = new Float64Array(n);
  if (!weights) {
    w.fill(1 / n);
    return w;
  }
  if (weights.length !== n)
    throw new AggregationError(`${rule}: ${weights.length} weights for ${n} updates`, 'weights_mismatch');
  let total = 0;
  weights.forEach((x, i) => {
    if (!(Number.isFinite(x) && x > 0))
      throw new AggregationError(`${rule}: weight ${i} is ${x}; weights must be finite and positive`, 'bad_weight');
    total += x;
  });
  for (let i = 0; i < n; i++) w[i] = (weights[i] as number) / total;
  return w;
}
