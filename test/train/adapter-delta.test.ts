import { describe, expect, it } from 'vitest';
import { differenceNorm, effectiveNorm } from '../../src/train/adapter-delta.js';
import { loraWeights, type LoraWeights } from '../../src/train/lora.js';
import { mulberry32 } from '../../src/runtime/seeded-random.js';

const dims = { inDim: 64, hidden: 16, out: 2, rank: 4 };

function random(seed: number, scale: number): LoraWeights {
  const r = mulberry32(seed);
  const l = loraWeights(dims);
  for (let i = 0; i < l.all.length; i++) l.all[i] = Math.fround((r() - 0.5) * scale);
  return l;
}

/** ‖X‖ of the dense product, formed in full (small dims only). */
function dense(terms: { lora: LoraWeights; coef: number }[]): number {
  let s = 0;
  for (let o = 0; o < dims.hidden; o++) {
    for (let j = 0; j < dims.inDim; j++) {
      let x = 0;
      for (const t of terms)
        for (let i = 0; i < dims.rank; i++)
          x += t.coef * (t.lora.denseB[o * dims.rank + i] as number) * (t.lora.denseAt[j * dims.rank + i] as number);
      s += x * x;
    }
  }
  return Math.sqrt(s);
}

describe('differenceNorm', () => {
  it('is exactly 0 for identical factors at any scale (the Gram route is not)', () => {
    for (const scale of [1e-3, 1, 1e3, 1e5]) {
      const a = random(1, scale);
      const b = loraWeights(dims, Float64Array.from(a.all));
      for (const m of ['dense', 'head', 'direct'] as const)
        expect(differenceNorm({ lora: b, coef: 2 }, { lora: a, coef: 2 }, m)).toBe(0);
    }
    const big = random(1, 1e5);
    expect(
      effectiveNorm(
        [
          { lora: big, coef: 2 },
          { lora: big, coef: -2 },
        ],
        'dense',
      ) +
        effectiveNorm(
          [
            { lora: big, coef: 2 },
            { lora: big, coef: -2 },
          ],
          'head',
        ),
    ).toBeGreaterThan(0);
  });

  it('agrees with the product formed in full: a shared A, a shared B, nothing shared', () => {
    const a = random(2, 1);
    const onlyB = loraWeights(dims, Float64Array.from(a.all));
    onlyB.denseB.set(random(3, 1).denseB);
    const onlyA = loraWeights(dims, Float64Array.from(a.all));
    onlyA.denseAt.set(random(4, 1).denseAt);
    const other = random(5, 1);
    for (const b of [onlyB, onlyA, other]) {
      const want = dense([
        { lora: b, coef: 2 },
        { lora: a, coef: -4 },
      ]);
      expect(differenceNorm({ lora: b, coef: 2 }, { lora: a, coef: 4 }, 'dense')).toBeCloseTo(want, 9);
    }
  });
});
