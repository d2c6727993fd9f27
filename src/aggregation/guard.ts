import { l2Norm } from '../tensor/tensor.js';
import type { AggregateOutcome } from './strategy.js';

/**
 * What an aggregate may be, given what went in — checked before an aggregate is kept, so that no
 * input, bug or overflow can turn a round's result into something its updates do not justify.
 *
 * Every rule here produces, coordinate by coordinate, a value between the smallest and largest
 * input value (a weighted mean, a median, a trimmed mean, one chosen update, Bulyan's mean of the
 * values closest to the median), so |aₖ| ≤ maxᵢ |xᵢₖ| and
 *
 *     ‖a‖² ≤ Σₖ maxᵢ xᵢₖ² ≤ Σᵢ ‖xᵢ‖².
 *
 * LoRA-FAIR adds its refinement ΔB to the B factors' mean, and ‖ΔB‖ has its own bound per layer
 * (lora-fair.ts), so there ‖a‖ ≤ √(Σᵢ ‖xᵢ‖²) + √(Σ_layers bound²).
 */
export function aggregateNormBound(inputNorms: readonly number[], outcome: Pick<AggregateOutcome, 'layers'>): number {
  const inputs = l2Norm([inputNorms]);
  const refinement = outcome.layers?.length ? l2Norm([outcome.layers.map((l) => l.delta_b_bound ?? Infinity)]) : 0;
  // Relative slack for float64 rounding of the sums on both sides.
  return (inputs + refinement) * (1 + 1e-9);
}

/** Why an aggregate must not be kept, or null when it may. */
export function refusalOf(
  aggregate: Float64Array,
  inputNorms: readonly number[],
  outcome: Pick<AggregateOutcome, 'layers'>,
): string | null {
  const norm = l2Norm([aggregate]);
  if (!Number.isFinite(norm)) return 'the aggregate update is not finite';
  const bound = aggregateNormBound(inputNorms, outcome);
  if (norm > bound)
    return `the aggregate update's norm ${norm.toPrecision(6)} exceeds ${bound.toPrecision(6)}, the most its ${inputNorms.length} input${inputNorms.length === 1 ? '' : 's'} allow`;
  return null;
}
