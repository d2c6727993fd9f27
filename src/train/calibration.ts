import { softmax } from './objectives.js';

/**
 * Calibration of a classifier's probabilities: a temperature fitted on a calibration split (never
 * on the split it is judged on), and the figures it is judged by.
 */

/** Mean negative log-likelihood of the labels under softmax(β · logits). */
export function meanNll(logits: readonly ArrayLike<number>[], labels: readonly number[], beta: number): number {
  let s = 0;
  logits.forEach((y, i) => {
    const p = softmax(Array.from(y, (v) => beta * v));
    s -= Math.log(Math.max(p[labels[i] as number] as number, 1e-300));
  });
  return logits.length ? s / logits.length : NaN;
}

/**
 * The inverse temperature β in [lo, hi] minimising the mean NLL (golden-section search on log β;
 * the NLL is convex in β). With no examples, 1.
 */
export function fitInverseTemperature(
  logits: readonly ArrayLike<number>[],
  labels: readonly number[],
  lo = 0.02,
  hi = 20,
): number {
  if (logits.length === 0) return 1;
  const f = (t: number): number => meanNll(logits, labels, Math.exp(t));
  let a = Math.log(lo);
  let b = Math.log(hi);
  const g = (Math.sqrt(5) - 1) / 2;
  let c = b - g * (b - a);
  let d = a + g * (b - a);
  let fc = f(c);
  let fd = f(d);
  for (let it = 0; it < 60 && b - a > 1e-4; it++) {
    if (fc < fd) {
      b = d;
      d = c;
      fd = fc;
      c = b - g * (b - a);
      fc = f(c);
    } else {
      a = c;
      c = d;
      fc = fd;
      d = a + g * (b - a);
      fd = f(d);
    }
  }
  return Math.exp((a + b) / 2);
}

export interface Calibration {
  n: number;
  /** Share of top-1 answers that are right. */
  accuracy: number;
  /** Expected calibration error: Σ_bins (n_b / n) · |accuracy_b − confidence_b|, equal-width bins of top-1 confidence. */
  ece: number;
  /** Share of all tasks answered wrongly with top-1 p at least `confident`. */
  confidentWrong: number;
  confident: number;
}

/** Top-1 accuracy, ECE over `bins` equal-width bins, and the share wrong at p ≥ `confident`. */
export function calibration(
  probs: readonly ArrayLike<number>[],
  labels: readonly number[],
  bins = 10,
  confident = 0.9,
): Calibration {
  const n = probs.length;
  const cnt = new Array<number>(bins).fill(0);
  const conf = new Array<number>(bins).fill(0);
  const hit = new Array<number>(bins).fill(0);
  let right = 0;
  let wrongSure = 0;
  probs.forEach((p, i) => {
    let arg = 0;
    for (let k = 1; k < p.length; k++) if ((p[k] as number) > (p[arg] as number)) arg = k;
    const top = p[arg] as number;
    const ok = arg === labels[i];
    const b = Math.min(bins - 1, Math.floor(top * bins));
    cnt[b] = (cnt[b] as number) + 1;
    conf[b] = (conf[b] as number) + top;
    if (ok) {
      hit[b] = (hit[b] as number) + 1;
      right++;
    } else if (top >= confident) wrongSure++;
  });
  let ece = 0;
  for (let b = 0; b < bins; b++)
    if ((cnt[b] as number) > 0) ece += Math.abs((hit[b] as number) - (conf[b] as number)) / n;
  return { n, accuracy: n ? right / n : NaN, ece: n ? ece : NaN, confidentWrong: n ? wrongSure / n : NaN, confident };
}
