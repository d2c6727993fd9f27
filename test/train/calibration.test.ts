import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/runtime/seeded-random.js';
import { calibration, fitInverseTemperature, meanNll } from '../../src/train/calibration.js';
import { softmax } from '../../src/train/objectives.js';

/** Labels drawn from softmax(β* · logits): the fit should find β* again. */
function sample(betaTrue: number, n: number, seed: number): { logits: number[][]; labels: number[] } {
  const r = mulberry32(seed);
  const logits: number[][] = [];
  const labels: number[] = [];
  for (let i = 0; i < n; i++) {
    const y = Array.from({ length: 5 }, () => (r() * 2 - 1) * 3);
    const p = softmax(y.map((v) => v * betaTrue));
    let u = r();
    let k = 0;
    while (k < p.length - 1 && u > (p[k] as number)) u -= p[k++] as number;
    logits.push(y);
    labels.push(k);
  }
  return { logits, labels };
}

describe('calibration', () => {
  it('fits the inverse temperature that generated the labels', () => {
    for (const b of [0.3, 1, 2.5]) {
      const { logits, labels } = sample(b, 4000, 7);
      const fit = fitInverseTemperature(logits, labels);
      expect(Math.abs(Math.log(fit / b))).toBeLessThan(0.15);
      expect(meanNll(logits, labels, fit)).toBeLessThanOrEqual(meanNll(logits, labels, b) + 1e-9);
    }
    expect(fitInverseTemperature([], [])).toBe(1);
  });

  it('ECE is near 0 for calibrated probabilities and large for overconfident ones; sure-and-wrong counts', () => {
    const { logits, labels } = sample(1, 4000, 9);
    const good = calibration(
      logits.map((y) => softmax(y)),
      labels,
    );
    const sure = calibration(
      logits.map((y) => softmax(y.map((v) => v * 10))),
      labels,
    );
    expect(good.ece).toBeLessThan(0.03);
    expect(sure.ece).toBeGreaterThan(0.2);
    expect(sure.confidentWrong).toBeGreaterThan(good.confidentWrong);
    expect(good.accuracy).toBeCloseTo(sure.accuracy, 9);
    const exact = calibration(
      [
        [0.95, 0.05],
        [0.95, 0.05],
        [0.3, 0.7],
      ],
      [1, 0, 1],
    );
    expect(exact).toMatchObject({ n: 3, accuracy: 2 / 3, confidentWrong: 1 / 3 });
    // bins: 0.95 twice (1 right of 2: |1 − 1.9| / 3), 0.7 once (right: |1 − 0.7| / 3)
    expect(exact.ece).toBeCloseTo((0.9 + 0.3) / 3, 12);
  });
});
