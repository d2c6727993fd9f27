import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bulyan } from '../../src/aggregation/bulyan.js';
import { coordinateMedian } from '../../src/aggregation/coordinate-median.js';
import { fedavg } from '../../src/aggregation/fedavg.js';
import { krum, multiKrum } from '../../src/aggregation/krum.js';
import { loraPairs } from '../../src/aggregation/layout.js';
import {
  flatCosine,
  flatProblemFromDense,
  flatProblemFromFactors,
  LORA_FAIR_DEFAULTS,
  loraFairLayer,
  refineDense,
  refineFlat,
  refineRidge,
} from '../../src/aggregation/lora-fair.js';
import { layoutOf } from '../../src/tensor/layout.js';
import { matmul, matrix, type Matrix } from '../../src/tensor/linalg.js';
import {
  directSquaredDistance,
  GramAccumulator,
  pairwiseSquaredDistances,
} from '../../src/aggregation/pairwise-distances.js';
import { kernelModule } from '../../src/aggregation/simd-kernel.js';
import { aggregateUpdates, chunkRanges, inMemorySource } from '../../src/aggregation/strategy.js';
import { trimmedMean } from '../../src/aggregation/trimmed-mean.js';
import type { Vec } from '../../src/aggregation/vec.js';
import { gaussian, honestRows, maxRelDiff, rng } from './helpers.js';

describe('pairwise squared distances', () => {
  it('the WebAssembly SIMD module compiles on this runtime', () => {
    expect(kernelModule()).not.toBeNull();
  });

  it('SIMD Gram form = scalar Gram form = direct definition (odd n, d across several blocks, f32 and f64)', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer({ min: 1, max: 13 }),
        fc.constantFrom(1, 3, 4, 7, 1023, 1025, 2049, 5000),
        fc.boolean(),
        (seed, n, d, f32) => {
          const rows = honestRows(seed, n, d, { f32, spread: 1 });
          const simd = pairwiseSquaredDistances(rows);
          const scalar = pairwiseSquaredDistances(rows, { kernel: null });
          for (let i = 0; i < n; i++) {
            for (let j = 0; j < n; j++) {
              const exact = i === j ? 0 : directSquaredDistance(rows[i] as Vec, rows[j] as Vec);
              expect(Math.abs((simd.d2[i * n + j] as number) - exact)).toBeLessThanOrEqual(1e-9 * exact + 1e-300);
              expect(Math.abs((scalar.d2[i * n + j] as number) - exact)).toBeLessThanOrEqual(1e-9 * exact + 1e-300);
            }
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a large common offset (catastrophic cancellation in the Gram form) is detected and recomputed exactly', () => {
    const rand = rng(9);
    const d = 3000;
    const rows = Array.from({ length: 6 }, (_, i) => {
      const v = new Float64Array(d);
      for (let k = 0; k < d; k++) v[k] = 1e6 + (i === 5 ? 0 : 1e-4 * gaussian(rand));
      return v;
    });
    rows.push(rows[0]!.slice());
    const dist = pairwiseSquaredDistances(rows);
    for (let i = 0; i < 7; i++)
      for (let j = 0; j < 7; j++)
        expect(
          Math.abs(dist.d2[i * 7 + j]! - (i === j ? 0 : directSquaredDistance(rows[i]!, rows[j]!))),
        ).toBeLessThanOrEqual(1e-12 * dist.d2[i * 7 + j]!);
    expect(dist.d2[0 * 7 + 6]).toBe(0);
  });

  it('streaming over chunks accumulates the same Gram matrix', () => {
    const rows = honestRows(5, 9, 777, { f32: true });
    const whole = new GramAccumulator(9);
    whole.add(rows);
    const parts = new GramAccumulator(9);
    for (let s = 0; s < 777; s += 100) parts.add(rows.map((r) => r.subarray(s, Math.min(777, s + 100))));
    expect(maxRelDiff(parts.gram(), whole.gram())).toBeLessThan(1e-12);
  });

  it('a row with NaN or Inf is marked non-finite and is infinitely far from everything', () => {
    const rows = honestRows(1, 5, 10, { f32: true });
    rows[2]![7] = NaN;
    rows[4]![0] = -Infinity;
    const d = pairwiseSquaredDistances(rows);
    expect(d.nonFinite).toEqual([false, false, true, false, true]);
    expect(d.d2[0 * 5 + 2]).toBe(Infinity);
    expect(d.d2[4 * 5 + 1]).toBe(Infinity);
    expect(Number.isFinite(d.d2[0 * 5 + 1])).toBe(true);
  });
});

function randomFactors(
  seed: number,
  K: number,
  m: number,
  r: number,
  n: number,
  drift: number,
): { As: Float64Array[]; Bs: Float64Array[] } {
  const rand = rng(seed);
  const A0 = Array.from({ length: r * n }, () => gaussian(rand));
  const B0 = Array.from({ length: m * r }, () => gaussian(rand));
  return {
    As: Array.from({ length: K }, () => Float64Array.from(A0, (x) => x + drift * gaussian(rand))),
    Bs: Array.from({ length: K }, () => Float64Array.from(B0, (x) => x + drift * gaussian(rand))),
  };
}

function denseW(As: Float64Array[], Bs: Float64Array[], w: Float64Array, m: number, r: number, n: number): Matrix {
  const W = matrix(m, n);
  As.forEach((a, k) => {
    const BA = matmul(matrix(m, r, Bs[k]), matrix(r, n, a));
    BA.data.forEach((x, i) => (W.data[i] = W.data[i]! + w[k]! * x));
  });
  return W;
}

describe('LoRA-FAIR in factored form (what the council runs at scale)', () => {
  it('equals the dense reference form: same problem, same ΔB (GD and ridge), from the factors alone', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 2, max: 9 }),
        fc.integer({ min: 2, max: 9 }),
        (seed, K, r, m, n) => {
          const { As, Bs } = randomFactors(seed, K, m, r, n, 0.3);
          const w = Float64Array.from({ length: K }, (_, k) => k + 1);
          const tot = w.reduce((a, b) => a + b, 0);
          w.forEach((x, k) => (w[k] = x / tot));
          const W = denseW(As, Bs, w, m, r, n);
          const { problem, Abar } = flatProblemFromFactors(As, Bs, w, { m, r, n });
          const Bbar = problem.Bbar;
          const dense = flatProblemFromDense(Abar, Bbar, W);
          expect(Math.abs(problem.normW2 - dense.normW2)).toBeLessThan(1e-10 * dense.normW2);
          expect(maxRelDiff(problem.P.data, dense.P.data)).toBeLessThan(1e-10);
          const opts = { ...LORA_FAIR_DEFAULTS, steps: 200, lr: 0.05 };
          const flat = refineFlat(problem, opts);
          const ref = refineDense(Abar, Bbar, W, opts);
          expect(maxRelDiff(flat.data, ref.data)).toBeLessThan(1e-10);
          // The layer keeps gradient descent's ΔB only when it lowers the objective (else ΔB = 0).
          const layer = loraFairLayer(As, Bs, w, { m, r, n }, opts);
          const lowers =
            1 - flatCosine(problem, flat) + opts.lambda * flat.data.reduce((s, x) => s + x * x, 0) <=
            1 - layer.cosBefore;
          expect(Array.from(layer.dB.data)).toEqual(lowers ? Array.from(flat.data) : Array.from(flat.data, () => 0));
          expect(layer.cosAfter).toBeGreaterThanOrEqual(layer.cosBefore - 1e-12);
          expect(maxRelDiff(refineRidge(problem, 0.01).data, refineRidge(dense, 0.01).data)).toBeLessThan(1e-9);
        },
      ),
      // The first example is one where descent at this step size does not lower the objective.
      { numRuns: 40, examples: [[-2147483629, 2, 1, 2, 8]] },
    );
  });

  it('forges that agree (identical factors) need no correction: ΔB = 0 and cos = 1', () => {
    const { As, Bs } = randomFactors(3, 1, 6, 2, 5, 0);
    const K = 4;
    const layer = loraFairLayer(Array(K).fill(As[0]), Array(K).fill(Bs[0]), new Float64Array(K).fill(1 / K), {
      m: 6,
      r: 2,
      n: 5,
    });
    expect(Math.max(...layer.dB.data.map(Math.abs))).toBeLessThan(1e-12);
    expect(layer.cosBefore).toBeCloseTo(1, 12);
  });

  it('improves on FedAvg of the factors when forges drift', () => {
    const { As, Bs } = randomFactors(11, 5, 12, 3, 10, 0.5);
    const w = new Float64Array(5).fill(0.2);
    const layer = loraFairLayer(As, Bs, w, { m: 12, r: 3, n: 10 });
    expect(layer.cosAfter).toBeGreaterThan(layer.cosBefore);
    const W = denseW(As, Bs, w, 12, 3, 10);
    const p = flatProblemFromDense(layer.A, matrix(12, 3, layer.B.data), W);
    expect(flatCosine(p)).toBeCloseTo(layer.cosAfter, 12);
  });
});

describe('the streaming driver equals the in-memory rules', () => {
  it('fedavg, median, trimmed mean, krum, multikrum, bulyan; non-finite updates dropped the same way', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer({ min: 0, max: 2 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 300 }),
        (seed, f, poison, d) => {
          const n = 4 * f + 3 + 2;
          const rows: Vec[] = honestRows(seed, n, d, { f32: true });
          if (poison) (rows[seed & 3] as Vec)[d - 1] = NaN;
          const layout = layoutOf(
            [
              { name: 'a', shape: [Math.ceil(d / 2)] },
              { name: 'b', shape: [Math.floor(d / 2)] },
            ].filter((t) => t.shape[0]! > 0),
          );
          const src = inMemorySource(rows, layout);
          const cases: [string, Float64Array][] = [
            ['fedavg', fedavg(rows).aggregate],
            ['median', coordinateMedian(rows).aggregate],
            ['trimmed-mean', trimmedMean(rows, f).aggregate],
            ['krum', krum(rows, f).aggregate],
            ['multikrum', multiKrum(rows, f).aggregate],
            ['bulyan', bulyan(rows, f).aggregate],
          ];
          for (const [strategy, expected] of cases) {
            const out = aggregateUpdates(src, { strategy: strategy as never, f }, { chunk: 37 });
            expect(maxRelDiff(out.aggregate, expected), strategy).toBeLessThan(1e-12);
            expect(out.nonFinite).toEqual(poison ? [seed & 3] : []);
            expect(out.distanceToAggregate).toHaveLength(n);
            if (poison) expect(out.distanceToAggregate[seed & 3]).toBe(Infinity);
          }
        },
      ),
      { numRuns: 25 },
    );
  });

  it('chunk ranges follow tensor boundaries', () => {
    const layout = layoutOf([
      { name: 'x', shape: [5] },
      { name: 'y', shape: [2, 3] },
    ]);
    expect(chunkRanges(layout, 4)).toEqual([
      [0, 4],
      [4, 5],
      [5, 9],
      [9, 11],
    ]);
  });

  it('LoRA-FAIR over a PEFT layout: pairs A/B, averages the rest, works on base + delta, selects first', () => {
    const m = 6;
    const r = 2;
    const n = 5;
    const layout = layoutOf([
      { name: 'layers.0.q_proj.lora_A.weight', shape: [r, n] },
      { name: 'layers.0.q_proj.lora_B.weight', shape: [m, r] },
      { name: 'routing_head.weight', shape: [3] },
    ]);
    expect(loraPairs(layout).pairs.map((p) => p.layer)).toEqual(['layers.0.q_proj.lora_*.weight']);
    const K = 7;
    const { As, Bs } = randomFactors(21, K, m, r, n, 0.2);
    const rand = rng(4);
    const head = Array.from({ length: K }, () => [gaussian(rand), gaussian(rand), gaussian(rand)]);
    const full = As.map((a, k) => Float64Array.from([...a, ...Bs[k]!, ...head[k]!]));
    const base = Float64Array.from({ length: layout.size }, () => gaussian(rand));
    const deltas = full.map((x) => x.map((v, i) => v - base[i]!));
    const fromFactors = aggregateUpdates(inMemorySource(full, layout), { strategy: 'lora-fair', f: 0 });
    const fromDeltas = aggregateUpdates(inMemorySource(deltas, layout, { base }), { strategy: 'lora-fair', f: 0 });
    // delta out = new factors − base
    expect(
      maxRelDiff(
        fromDeltas.aggregate.map((v, i) => v + base[i]!),
        fromFactors.aggregate,
      ),
    ).toBeLessThan(1e-9);
    const layer = loraFairLayer(As, Bs, new Float64Array(K).fill(1 / K), { m, r, n });
    expect(maxRelDiff(fromFactors.aggregate.subarray(0, r * n), layer.A.data)).toBeLessThan(1e-12);
    expect(maxRelDiff(fromFactors.aggregate.subarray(r * n, r * n + m * r), layer.B.data)).toBeLessThan(1e-12);
    expect(fromFactors.layers?.[0]?.cos_after).toBeGreaterThan(fromFactors.layers?.[0]?.cos_before ?? 1);
    // With f = 1, Multi-Krum selection drops a poisoned forge before LoRA-FAIR.
    const poisoned = [...deltas, deltas[0]!.map((v) => v + 1e3)];
    const sel = aggregateUpdates(inMemorySource(poisoned, layout, { base }), { strategy: 'lora-fair', f: 1 });
    expect(sel.selection).toBe('multikrum');
    expect(sel.used).not.toContain(K);
    expect(sel.used).toHaveLength(K);
  });
});

describe('the Gram pool (all cores)', () => {
  it('gives the same distances as one thread, for float32 and float64, and streams', async () => {
    const { GramPool } = await import('../../src/aggregation/gram-pool.js');
    const pool = await GramPool.create(3);
    expect(pool?.threads).toBe(3);
    try {
      for (const f32 of [true, false]) {
        for (const [n, d] of [
          [5, 20_000],
          [13, 9_000],
          [4, 40_001],
        ] as const) {
          const rows = honestRows(n * d, n, d, { f32, spread: 1 });
          const one = pairwiseSquaredDistances(rows);
          const many = pairwiseSquaredDistances(rows, { pool, poolMinRows: 1 });
          expect(maxRelDiff(many.d2, one.d2)).toBeLessThan(1e-12);
          const acc = new GramAccumulator(n, { pool, poolMinRows: 1 });
          acc.add(rows.map((r) => r.subarray(0, 10_000)));
          acc.add(rows.map((r) => r.subarray(10_000)));
          expect(maxRelDiff(acc.distances().matrix.d2, one.d2)).toBeLessThan(1e-9);
        }
      }
      const many = honestRows(2, 40, 30_000, { f32: true });
      const k = krum(many, 2, { pool });
      expect(k.index).toBe(krum(many, 2).index);
      expect(maxRelDiff(k.scores, krum(many, 2).scores)).toBeLessThan(1e-12);
    } finally {
      await pool?.close();
    }
  });
});

describe('FedAvg in WebAssembly SIMD', () => {
  it('gives exactly the scalar loop’s sums (any n, d not a multiple of the block or of 4)', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer({ min: 1, max: 19 }),
        fc.constantFrom(4096, 4097, 4099, 8191, 12_345),
        (seed, n, d) => {
          const rows = honestRows(seed, n, d, { f32: true });
          const w = Array.from({ length: n }, (_, i) => i + 1);
          const simd = fedavg(rows, w);
          const scalar = fedavg(rows, w, { kernel: null });
          expect(Array.from(simd.aggregate)).toEqual(Array.from(scalar.aggregate));
        },
      ),
      { numRuns: 20 },
    );
  });
});

describe('FedAvg on the pool', () => {
  it('gives exactly the one-thread sums', async () => {
    const { GramPool } = await import('../../src/aggregation/gram-pool.js');
    const pool = await GramPool.create(3);
    try {
      for (const [n, d] of [
        [3, 70_001],
        [20, 100_003],
        [9, 65_536],
      ] as const) {
        const rows = honestRows(n + d, n, d, { f32: true });
        const w = Array.from({ length: n }, (_, i) => 1 + (i % 3));
        expect(Array.from(fedavg(rows, w, { pool }).aggregate)).toEqual(
          Array.from(fedavg(rows, w, { kernel: null }).aggregate),
        );
        expect(Array.from(multiKrum(rows, 0, { pool }).aggregate)).toEqual(Array.from(multiKrum(rows, 0).aggregate));
      }
    } finally {
      await pool?.close();
    }
  });
});
