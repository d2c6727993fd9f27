import { describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/runtime/seeded-random.js';
import type { Features } from '../../src/train/features.js';
import {
  chooseLambdaOn,
  fitLinear,
  itemHits,
  NO_HOLD,
  sceneFolds,
  type FitItem,
  type Hold,
  type LinearProblem,
} from '../../src/train/linear-fit.js';

/**
 * Holds: the penalty weighed up on a block of inputs. Data: 2 signal columns, each agreeing with
 * the preference 65% of the time, and 400 noise columns (each text sets 30 of them) that decide
 * nothing, so a few dozen pairs are enough for the noise to be memorised when nothing holds it back.
 */
const SIGNAL = 2;
const NOISE = 400;

function problem(pairs: number, seed: number): LinearProblem {
  const r = mulberry32(seed);
  const texts: Features[] = [];
  const items: FitItem[] = [];
  const text = (sign: number): Features => {
    const m = new Map<number, number>();
    for (let k = 0; k < SIGNAL; k++) m.set(k, (r() < 0.65 ? sign : -sign) * 0.2);
    while (m.size < SIGNAL + 30) m.set(SIGNAL + Math.floor(r() * NOISE), r() < 0.5 ? -0.3 : 0.3);
    const idx = [...m.keys()].sort((a, b) => a - b);
    return { idx: Int32Array.from(idx), val: Float64Array.from(idx.map((j) => m.get(j) as number)) };
  };
  for (let i = 0; i < pairs; i++) {
    texts.push(text(1), text(-1));
    items.push({ kind: 'pair', a: 2 * i, b: 2 * i + 1, target: 1, w: 1, scene: `s${i}` });
  }
  return { out: 1, dim: SIGNAL + NOISE, texts, offsets: texts.map(() => new Float64Array(1)), items, prior: null };
}

function holdNoise(weight: number): Hold {
  const w = new Float64Array(SIGNAL + NOISE).fill(1);
  for (let j = SIGNAL; j < w.length; j++) w[j] = weight;
  return { name: 'noise', weights: w };
}

describe('the direct fit under a hold', () => {
  it('solves the weighted penalty: at the optimum each column satisfies ∂loss/∂w_j + λ m_j w_j = 0', () => {
    const p = problem(60, 3);
    const hold = holdNoise(30);
    const idx = p.items.map((_, i) => i);
    const lambda = 0.01;
    const W = fitLinear({ ...p, penalty: hold.weights }, idx, lambda, new Float64Array(p.dim), {
      maxIter: 500,
      tol: 1e-9,
    });
    // The loss gradient by central differences of the unpenalised objective.
    const loss = (w: Float64Array): number => itemHits(p, w, idx).loss / idx.length;
    let worst = 0;
    for (const j of [0, 1, SIGNAL, SIGNAL + 7, SIGNAL + 123]) {
      const h = 1e-6;
      const up = Float64Array.from(W);
      const down = Float64Array.from(W);
      up[j] = (up[j] as number) + h;
      down[j] = (down[j] as number) - h;
      const g = (loss(up) - loss(down)) / (2 * h);
      worst = Math.max(worst, Math.abs(g + lambda * (hold.weights![j] as number) * (W[j] as number)));
    }
    expect(worst).toBeLessThan(1e-5);
  });

  it('a held block keeps smaller weights than the same fit without the hold', () => {
    const p = problem(60, 4);
    const idx = p.items.map((_, i) => i);
    const free = fitLinear(p, idx, 0.01, new Float64Array(p.dim), { maxIter: 300 });
    const held = fitLinear({ ...p, penalty: holdNoise(30).weights }, idx, 0.01, new Float64Array(p.dim), {
      maxIter: 300,
    });
    const norm = (w: Float64Array, from: number, to: number): number => {
      let s = 0;
      for (let j = from; j < to; j++) s += (w[j] as number) ** 2;
      return Math.sqrt(s);
    };
    expect(norm(held, SIGNAL, SIGNAL + NOISE)).toBeLessThan(0.5 * norm(free, SIGNAL, SIGNAL + NOISE));
    expect(norm(held, 0, SIGNAL)).toBeGreaterThan(0);
  });

  it('cross-validation mostly picks the hold on the noise block, and held-out pairs agree with it', () => {
    const holds = [NO_HOLD, holdNoise(30)];
    const grid = [1e-2, 1e-3, 1e-4];
    let picked = 0;
    let gain = 0;
    const seeds = 10;
    for (let seed = 1; seed <= seeds; seed++) {
      const p = problem(40, seed);
      const idx = p.items.map((_, i) => i);
      const choice = chooseLambdaOn(p, sceneFolds(p.items, idx, 3, mulberry32(seed)), { grid, holds, by: 'loss' });
      expect(choice.curve).toHaveLength(holds.length * grid.length);
      if (choice.hold === 'noise') picked++;
      // Fresh pairs from the same source: the hold against no hold, each at its best λ on them.
      const test = problem(400, 1000 + seed);
      const shift = p.texts.length;
      const all: LinearProblem = {
        ...p,
        texts: [...p.texts, ...test.texts],
        offsets: [...p.offsets, ...test.offsets],
        items: [...p.items, ...test.items.map((it) => ({ ...it, a: it.a + shift, b: it.b + shift }))],
      };
      const testIdx = test.items.map((_, i) => p.items.length + i);
      const best = (penalty: Float64Array | null): number =>
        Math.max(
          ...grid.map(
            (l) => itemHits(all, fitLinear({ ...all, penalty }, idx, l, new Float64Array(p.dim)), testIdx).hits / 400,
          ),
        );
      gain += best(holds[1]!.weights) - best(null);
    }
    expect(picked).toBeGreaterThanOrEqual(7);
    expect(gain / seeds).toBeGreaterThan(0.02);
  });

  it('offered no holds, it chooses λ alone and names the hold "none"', () => {
    const p = problem(30, 7);
    const idx = p.items.map((_, i) => i);
    const choice = chooseLambdaOn(p, sceneFolds(p.items, idx, 3, mulberry32(2)), { grid: [1e-2, 1e-3] });
    expect(choice.hold).toBe('none');
    expect(choice.curve.every((c) => c.hold === 'none')).toBe(true);
  });
});
