/**
 * Validation metrics per example kind, each beside the trivial baselines it must beat:
 *   pair    pairwise accuracy (ties count ½) vs always-prefer-shorter and always-prefer-revised
 *   binary  accuracy at p = ½ vs the training majority class
 *   graded  mean absolute error of σ(y) vs predicting the training mean
 *   route   top-1 accuracy vs the training majority specialist and the routing prior alone
 */
export type MetricName = 'pairwise_accuracy' | 'accuracy' | 'mean_abs_error';

export interface Baseline {
  name: 'always_prefer_shorter' | 'always_prefer_revised' | 'majority_class' | 'mean_target' | 'routing_prior';
  value: number;
}

export interface Metric {
  kind: 'pair' | 'binary' | 'graded' | 'route';
  name: MetricName;
  /** Higher is better, except mean_abs_error. */
  value: number;
  /** Validation examples it was measured on. */
  n: number;
  baselines: Baseline[];
}

export function higherIsBetter(name: MetricName): boolean {
  return name !== 'mean_abs_error';
}

/** Share of pairs ranked right; a tie counts half. */
export function pairwiseAccuracy(margins: readonly number[]): number {
  if (margins.length === 0) return NaN;
  let s = 0;
  for (const m of margins) s += m > 0 ? 1 : m === 0 ? 0.5 : 0;
  return s / margins.length;
}

export function majority<T>(labels: readonly T[]): T | undefined {
  const counts = new Map<T, number>();
  let best: T | undefined;
  let bestN = 0;
  for (const l of labels) {
    const n = (counts.get(l) ?? 0) + 1;
    counts.set(l, n);
    if (n > bestN) {
      best = l;
      bestN = n;
    }
  }
  return best;
}
