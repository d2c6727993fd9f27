import { describe, expect, it } from 'vitest';
import { AdamW } from '../../src/train/adamw.js';
import { mulberry32 } from '../../src/runtime/seeded-random.js';

/**
 * The optimiser's two speed-ups (a coordinate whose gradient has always been zero only decays;
 * the batch mean and the clearing fused into the step) must change no bit of the result. The
 * oracle is the textbook AdamW update (torch.optim.AdamW with global-norm clipping), written
 * out per coordinate with no shortcut.
 */
function textbook(n: number, o: { lr: number; wd: number; clip: number }) {
  const m = new Float64Array(n);
  const v = new Float64Array(n);
  let t = 0;
  return (theta: Float64Array, grad: Float64Array) => {
    let sq = 0;
    for (const g of grad) sq += g * g;
    const norm = Math.sqrt(sq);
    const k = o.clip > 0 && norm > o.clip ? o.clip / norm : 1;
    t++;
    for (let i = 0; i < n; i++) {
      const g = (grad[i] as number) * k;
      m[i] = 0.9 * (m[i] as number) + (1 - 0.9) * g;
      v[i] = 0.999 * (v[i] as number) + (1 - 0.999) * g * g;
      const mHat = (m[i] as number) * (1 / (1 - 0.9 ** t));
      const vHat = (v[i] as number) * (1 / (1 - 0.999 ** t));
      theta[i] = (theta[i] as number) * (1 - o.lr * o.wd) - (o.lr * mHat) / (Math.sqrt(vHat) + 1e-8);
    }
  };
}

/** Gradient sums of a batch that touch a few coordinates (as hashed features do), some negative zeros. */
function sparseSums(rand: () => number, n: number, steps: number): Float64Array[] {
  const hot = Array.from({ length: n }, () => rand() < 0.2);
  return Array.from({ length: steps }, () =>
    Float64Array.from({ length: n }, (_, i) => (hot[i] && rand() < 0.5 ? (rand() - 0.5) * 4 : rand() < 0.1 ? -0 : 0)),
  );
}

const bits = (a: Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);

describe('AdamW', () => {
  const settings = { lr: 0.01, wd: 0.05, clip: 1 };

  it.each([1, 2, 3])(
    'stepAndClear equals the textbook update bit for bit (seed %i), and leaves the gradient zeroed',
    (seed) => {
      const rand = mulberry32(seed);
      const n = 300;
      const sums = sparseSums(rand, n, 40);
      const start = Float64Array.from({ length: n }, () => rand() - 0.5);
      const scale = 1 / 16;

      const ours = Float64Array.from(start);
      const opt = new AdamW(n, { lr: settings.lr, weightDecay: settings.wd, clipNorm: settings.clip });
      const want = Float64Array.from(start);
      const ref = textbook(n, settings);
      for (const s of sums) {
        const mean = s.map((g) => g * scale);
        const grad = Float64Array.from(s);
        opt.stepAndClear(ours, grad, scale);
        expect(grad.every((g) => g === 0)).toBe(true);
        ref(want, mean);
      }
      expect(bits(ours).equals(bits(want))).toBe(true);
      // the run moved the hot coordinates and only decayed the cold ones
      expect(bits(ours).equals(bits(start))).toBe(false);
    },
  );

  it('step (an already averaged gradient) equals the textbook update bit for bit', () => {
    const rand = mulberry32(9);
    const n = 200;
    const theta = Float64Array.from({ length: n }, () => rand() - 0.5);
    const want = Float64Array.from(theta);
    const opt = new AdamW(n, { lr: settings.lr, weightDecay: settings.wd, clipNorm: 0 });
    const ref = textbook(n, { ...settings, clip: 0 });
    for (const g of sparseSums(rand, n, 25)) {
      opt.step(theta, Float64Array.from(g));
      ref(want, g);
    }
    expect(bits(theta).equals(bits(want))).toBe(true);
  });
});
