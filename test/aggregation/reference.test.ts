import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { bulyan } from '../../src/aggregation/bulyan.js';
import { coordinateMedian } from '../../src/aggregation/coordinate-median.js';
import { fedavg } from '../../src/aggregation/fedavg.js';
import { krum, multiKrum } from '../../src/aggregation/krum.js';
import {
  flatCosine,
  flatProblemFromDense,
  LORA_FAIR_DEFAULTS,
  refineDense,
  refineFlat,
  refineRidge,
} from '../../src/aggregation/lora-fair.js';
import { layoutOf } from '../../src/tensor/layout.js';
import { fromNested, matmul, toNested } from '../../src/tensor/linalg.js';
import { pairwiseSquaredDistances } from '../../src/aggregation/pairwise-distances.js';
import { aggregateUpdates, inMemorySource } from '../../src/aggregation/strategy.js';

const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(new URL(`../fixtures/aggregation/${name}`, import.meta.url), 'utf8'));

interface Robust {
  n: number;
  f: number;
  d: number;
  inputs: number[][];
  krum_neighbours: number;
  krum_scores: number[];
  krum_index: number;
  multikrum_m: number;
  multikrum_indices: number[];
  multikrum_mean: number[];
  bulyan_theta: number;
  bulyan_beta: number;
  bulyan_selected: number[];
  bulyan_result: number[];
  plain_mean: number[];
  coordinate_median: number[];
}

const TOL = 1e-9;
function expectClose(actual: ArrayLike<number>, expected: readonly number[], tol = TOL): void {
  expect(actual.length).toBe(expected.length);
  for (let i = 0; i < expected.length; i++) {
    const e = expected[i] as number;
    const a = actual[i] as number;
    expect(Math.abs(a - e), `index ${i}: ${a} vs ${e}`).toBeLessThanOrEqual(tol * Math.max(1, Math.abs(e)));
  }
}

describe('robust rules agree with Flower aggregate.py (robust-n11-f2.json) to 1e-9', () => {
  const ref = fixture('robust-n11-f2.json') as Robust;
  const rows = ref.inputs.map((r) => Float64Array.from(r));

  it('pairwise squared distances match the direct definition', () => {
    const dist = pairwiseSquaredDistances(rows);
    for (let i = 0; i < ref.n; i++) {
      for (let j = 0; j < ref.n; j++) {
        let s = 0;
        for (let k = 0; k < ref.d; k++) s += ((ref.inputs[i]?.[k] as number) - (ref.inputs[j]?.[k] as number)) ** 2;
        expect(Math.abs((dist.d2[i * ref.n + j] as number) - s)).toBeLessThanOrEqual(1e-12 * Math.max(1, s));
      }
    }
  });

  it('Krum: neighbours, scores and choice', () => {
    const r = krum(rows, ref.f);
    expect(r.neighbours).toBe(ref.krum_neighbours);
    expectClose(r.scores, ref.krum_scores);
    expect(r.index).toBe(ref.krum_index);
    expectClose(r.aggregate, ref.inputs[ref.krum_index] as number[]);
  });

  it('Multi-Krum (m=3): indices and mean', () => {
    const r = multiKrum(rows, ref.f, { m: ref.multikrum_m });
    expect(r.indices).toEqual(ref.multikrum_indices);
    expectClose(r.aggregate, ref.multikrum_mean);
  });

  it('Bulyan: θ, β, selection order and result', () => {
    const r = bulyan(rows, ref.f);
    expect([r.theta, r.beta]).toEqual([ref.bulyan_theta, ref.bulyan_beta]);
    expect(r.selected).toEqual(ref.bulyan_selected);
    expectClose(r.aggregate, ref.bulyan_result);
  });

  it('coordinate median and plain mean', () => {
    expectClose(coordinateMedian(rows).aggregate, ref.coordinate_median);
    expectClose(fedavg(rows).aggregate, ref.plain_mean);
  });

  it('the streaming driver (tiny chunks) gives the same Krum, Multi-Krum and Bulyan results', () => {
    const layout = layoutOf([{ name: 'w', shape: [ref.d] }]);
    const src = inMemorySource(rows, layout);
    const k = aggregateUpdates(src, { strategy: 'krum', f: ref.f }, { chunk: 4 });
    expect(k.used).toEqual([ref.krum_index]);
    expectClose(k.scores ?? [], ref.krum_scores);
    const mk = aggregateUpdates(src, { strategy: 'multikrum', f: ref.f, m: ref.multikrum_m }, { chunk: 4 });
    expect(mk.used).toEqual(ref.multikrum_indices);
    expectClose(mk.aggregate, ref.multikrum_mean);
    const b = aggregateUpdates(src, { strategy: 'bulyan', f: ref.f }, { chunk: 4 });
    expect(b.used).toEqual(ref.bulyan_selected);
    expectClose(b.aggregate, ref.bulyan_result);
    expectClose(aggregateUpdates(src, { strategy: 'median', f: ref.f }, { chunk: 4 }).aggregate, ref.coordinate_median);
  });
});

interface Run {
  reg: 'sq' | 'norm';
  lam: number;
  steps: number;
  lr: number;
  cos_mode: 'flat' | 'colwise';
  dB: number[][];
  cos_after: number;
}
interface Drift {
  drift: {
    weights: number[];
    A_bar: number[][];
    B_bar: number[][];
    W_ideal: number[][];
    W_fedavg: number[][];
    fedavg_rel_frobenius_error: number;
    fedavg_cos: number;
    lora_fair_runs: Run[];
    ridge: { lam: number; dB: number[][]; cos_after: number; rel_err_after: number };
    fedex_residual: number[][];
  };
}

describe('LoRA-FAIR agrees with the float64 NumPy reference (lora-fair-drift.json) to 1e-9', () => {
  const ref = (fixture('lora-fair-drift.json') as Drift).drift;
  const A = fromNested(ref.A_bar);
  const B = fromNested(ref.B_bar);
  const W = fromNested(ref.W_ideal);
  const problem = flatProblemFromDense(A, B, W);

  it('FedAvg of the factors: B̄Ā, its error and cosine', () => {
    const fa = matmul(B, A);
    expectClose(fa.data, ref.W_fedavg.flat());
    let num = 0;
    let den = 0;
    fa.data.forEach((x, i) => {
      num += (x - (W.data[i] as number)) ** 2;
      den += (W.data[i] as number) ** 2;
    });
    expect(Math.sqrt(num / den)).toBeCloseTo(ref.fedavg_rel_frobenius_error, 12);
    expect(Math.abs(flatCosine(problem) - ref.fedavg_cos)).toBeLessThan(1e-12);
  });

  it('the ridge closed form at λ=0.01', () => {
    const dB = refineRidge(problem, ref.ridge.lam);
    expectClose(dB.data, ref.ridge.dB.flat());
    expect(Math.abs(flatCosine(problem, dB) - ref.ridge.cos_after)).toBeLessThan(1e-12);
  });

  for (const run of ref.lora_fair_runs) {
    const label = `reg=${run.reg} λ=${run.lam} lr=${run.lr} steps=${run.steps} cosine=${run.cos_mode}`;
    it(`gradient descent from ΔB=0: ${label} (dense reference form)`, () => {
      const dB = refineDense(A, B, W, {
        ...LORA_FAIR_DEFAULTS,
        lambda: run.lam,
        lr: run.lr,
        steps: run.steps,
        reg: run.reg,
        cosine: run.cos_mode,
      });
      expectClose(dB.data, run.dB.flat());
      expect(toNested(dB).length).toBe(4);
    });
    if (run.cos_mode === 'flat') {
      it(`gradient descent from ΔB=0: ${label} (factored r×r form the council runs)`, () => {
        const dB = refineFlat(problem, { lambda: run.lam, lr: run.lr, steps: run.steps, reg: run.reg });
        expectClose(dB.data, run.dB.flat());
        expect(Math.abs(flatCosine(problem, dB) - run.cos_after)).toBeLessThan(1e-12);
      });
    }
  }
});

describe('weighted FedAvg against a naive sum (NumPy fixture)', () => {
  it('fedavg(rows, weights) is Σwᵢxᵢ/Σwᵢ', () => {
    const fx = JSON.parse(readFileSync(new URL('../fixtures/council/client-round.json', import.meta.url), 'utf8')) as {
      weighted_updates: { A: number[]; B: number[] }[];
      weights: number[];
      weighted_fedavg: { A: number[]; B: number[] };
    };
    const rows = fx.weighted_updates.map((u) => Float32Array.from([...u.A, ...u.B]));
    const want = [...fx.weighted_fedavg.A, ...fx.weighted_fedavg.B];
    for (const opts of [{}, { kernel: null }]) {
      const got = fedavg(rows, fx.weights, opts).aggregate;
      got.forEach((x, k) =>
        expect(Math.abs(x - want[k]!)).toBeLessThanOrEqual(1e-7 * Math.max(1e-3, Math.abs(want[k]!))),
      );
    }
  });
});
