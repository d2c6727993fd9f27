/**
 * The objectives, as loss and gradient with respect to the network's outputs; the network turns
 * the output gradient into gradients of the adapter factors. `w` is `training_label.weight`: it
 * scales the loss of its example.
 *
 *   pair    Bradley–Terry on the effective score: w · −log σ(y_chosen − y_rejected)
 *   binary  logistic: w · [softplus(y) − label · y]          (accept/reject, pass/fail)
 *   graded  the same with a target in [0, 1]                (Likert (r−1)/4, affinity gain)
 *   route   softmax cross-entropy: w · [logsumexp(y) − y_label]   (Hephaestus)
 */
export function softplus(x: number): number {
  return Math.max(x, 0) + Math.log1p(Math.exp(-Math.abs(x)));
}

export function sigmoid(x: number): number {
  if (x >= 0) return 1 / (1 + Math.exp(-x));
  const e = Math.exp(x);
  return e / (1 + e);
}

/** Loss and dL/dy_chosen (dL/dy_rejected is its negative). */
export function pairLoss(yChosen: number, yRejected: number, w: number): { loss: number; g: number } {
  const d = yChosen - yRejected;
  return { loss: w * softplus(-d), g: -w * sigmoid(-d) };
}

/** Logistic loss against a target in [0, 1] (0/1 labels or graded targets) and dL/dy. */
export function logisticLoss(y: number, target: number, w: number): { loss: number; g: number } {
  return { loss: w * (softplus(y) - target * y), g: w * (sigmoid(y) - target) };
}

/** Softmax cross-entropy; writes dL/dy into `gy` and returns the loss. */
export function routeLoss(y: Float64Array, label: number, w: number, gy: Float64Array): number {
  let max = -Infinity;
  for (let o = 0; o < y.length; o++) max = Math.max(max, y[o] as number);
  let sum = 0;
  for (let o = 0; o < y.length; o++) {
    const e = Math.exp((y[o] as number) - max);
    gy[o] = e;
    sum += e;
  }
  for (let o = 0; o < y.length; o++) gy[o] = w * ((gy[o] as number) / sum - (o === label ? 1 : 0));
  return w * (max + Math.log(sum) - (y[label] as number));
}

/** The softmax of route logits (probabilities over specialists). */
export function softmax(y: ArrayLike<number>): number[] {
  let max = -Infinity;
  for (let o = 0; o < y.length; o++) max = Math.max(max, y[o] as number);
  const e = Array.from({ length: y.length }, (_, o) => Math.exp((y[o] as number) - max));
  const s = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / s);
}
