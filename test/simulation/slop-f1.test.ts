import { describe, expect, it } from 'vitest';
import { confusionOf, f1Of, precisionOf, recallOf } from '../../src/simulation/slop-f1.js';

describe('slop-detection F1 (slop the positive class)', () => {
  it('counts a known confusion matrix and scores it', () => {
    // truth: 5 slop, 5 clean; calls: 3 slop caught, 2 missed, 1 clean called slop
    const truth = [true, true, true, true, true, false, false, false, false, false];
    const calls = [true, true, true, false, false, true, false, false, false, false];
    const c = confusionOf(calls, truth);
    expect(c).toEqual({ tp: 3, fn: 2, fp: 1, tn: 4 });
    expect(precisionOf(c)).toBeCloseTo(3 / 4, 12);
    expect(recallOf(c)).toBeCloseTo(3 / 5, 12);
    // 2·P·R / (P + R) = 2·0.75·0.6 / 1.35
    expect(f1Of(c)).toBeCloseTo((2 * 0.75 * 0.6) / 1.35, 12);
    expect(f1Of(c)).toBeCloseTo(6 / 9, 12);
  });

  it('is 0 for a detector that calls nothing slop, and 2/3 for one that calls everything slop on a balanced set', () => {
    const truth = [true, false, true, false];
    expect(f1Of(confusionOf([false, false, false, false], truth))).toBe(0);
    expect(f1Of(confusionOf([true, true, true, true], truth))).toBeCloseTo(2 / 3, 12);
    expect(f1Of(confusionOf(truth, truth))).toBe(1);
  });

  it('refuses calls and truth of different lengths', () => {
    expect(() => confusionOf([true], [true, false])).toThrow(/1 calls for 2 texts/);
  });
});
