/**
 * Binary detection scores with slop as the positive class: the confusion counts of a detector's
 * calls against the truth, and precision, recall and F1 from them. F1 is 2·TP / (2·TP + FP + FN):
 * 0 when the detector finds no slop at all, whatever else it does.
 */
export interface Confusion {
  tp: number;
  fp: number;
  fn: number;
  tn: number;
}

export function confusionOf(called: readonly boolean[], truth: readonly boolean[]): Confusion {
  if (called.length !== truth.length) throw new RangeError(`${called.length} calls for ${truth.length} texts`);
  const c: Confusion = { tp: 0, fp: 0, fn: 0, tn: 0 };
  for (let i = 0; i < called.length; i++) {
    if (called[i]) {
      if (truth[i]) c.tp++;
      else c.fp++;
    } else if (truth[i]) c.fn++;
    else c.tn++;
  }
  return c;
}

export function precisionOf(c: Confusion): number {
  return c.tp + c.fp === 0 ? 0 : c.tp / (c.tp + c.fp);
}

export function recallOf(c: Confusion): number {
  return c.tp + c.fn === 0 ? 0 : c.tp / (c.tp + c.fn);
}

export function f1Of(c: Confusion): number {
  const d = 2 * c.tp + c.fp + c.fn;
  return d === 0 ? 0 : (2 * c.tp) / d;
}
