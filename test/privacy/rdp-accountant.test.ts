import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  computeRdp,
  DEFAULT_ORDERS,
  epsilonFloor,
  epsilonFor,
  exactGaussianEpsilon,
  gaussianMu,
  RdpAccountant,
  rdpOfStep,
  rdpToEpsilon,
  sigmaForEpsilon,
} from '../../src/privacy/rdp-accountant.js';

interface Reference {
  docstring_check: { eps: number; order: number };
  rdp_vectors: { q: number; sigma: number; alpha: number; rdp: number }[];
  eps_table: {
    sigma: number;
    q: number;
    steps: number;
    eps_rdp: number;
    best_alpha: number;
    eps_exact_gdp: number | null;
  }[];
  eps_table_subsampled_sigma_not_1: {
    rows: { sigma: number; q: number; steps: number; eps_rdp: number; best_alpha: number }[];
  };
}
const ref = JSON.parse(
  readFileSync(new URL('../fixtures/privacy/opacus-rdp.json', import.meta.url), 'utf8'),
) as Reference;
const DELTA = 1e-5;
const rel = (a: number, b: number): number => Math.abs(a - b) / Math.abs(b);

describe('the RDP accountant reproduces Opacus (opacus-rdp.json) to 1e-6 relative', () => {
  it('has the 151 default orders 1.1..10.9 then 12..63, as the same floats as Python', () => {
    expect(DEFAULT_ORDERS).toHaveLength(151);
    expect(DEFAULT_ORDERS[0]).toBe(1.1);
    expect(DEFAULT_ORDERS[98]).toBe(10.9);
    expect(DEFAULT_ORDERS[99]).toBe(12);
    expect(DEFAULT_ORDERS[150]).toBe(63);
    expect(DEFAULT_ORDERS[1]).toBe(1 + 2 / 10); // 1.2000000000000002, as in Python
  });

  it.each(ref.rdp_vectors)('per-step RDP at q=$q σ=$sigma α=$alpha', (r) => {
    expect(rel(rdpOfStep(r.q, r.sigma, r.alpha), r.rdp)).toBeLessThan(1e-6);
  });

  it.each(ref.eps_table)('ε and the best order at σ=$sigma q=$q over $steps steps', (r) => {
    const got = epsilonFor({ noiseMultiplier: r.sigma, sampleRate: r.q, steps: r.steps, delta: DELTA });
    expect(rel(got.epsilon, r.eps_rdp)).toBeLessThan(1e-6);
    expect(got.order).toBeCloseTo(r.best_alpha, 12);
  });

  // At σ = 1, σ and σ² coincide: only subsampled rows at other σ catch a σ-for-σ² slip in the series.
  it('has the six subsampled rows at σ ≠ 1', () => {
    const rows = ref.eps_table_subsampled_sigma_not_1.rows;
    expect(rows).toHaveLength(6);
    expect(rows.every((r) => r.q < 1 && r.sigma !== 1)).toBe(true);
  });

  it.each(ref.eps_table_subsampled_sigma_not_1.rows)(
    'subsampled: ε and the best order at σ=$sigma q=$q over $steps steps',
    (r) => {
      const got = epsilonFor({ noiseMultiplier: r.sigma, sampleRate: r.q, steps: r.steps, delta: DELTA });
      expect(rel(got.epsilon, r.eps_rdp)).toBeLessThan(1e-6);
      expect(got.order).toBeCloseTo(r.best_alpha, 12);
    },
  );

  it('the Opacus module docstring example: mixed (q, σ, steps) over orders 2..32', () => {
    const orders = Array.from({ length: 31 }, (_, i) => i + 2);
    const acc = new RdpAccountant(orders).step(1.0, 1e-5, 10).step(3.0, 1e-4, 4);
    const got = acc.epsilon(DELTA);
    expect(rel(got.epsilon, ref.docstring_check.eps)).toBeLessThan(1e-6);
    expect(got.order).toBe(ref.docstring_check.order);
  });

  it.each(ref.eps_table.filter((r) => r.eps_exact_gdp !== null))(
    'the exact Gaussian ε for q=1, σ=$sigma, $steps steps',
    (r) => {
      const exact = exactGaussianEpsilon({ mu: gaussianMu(Array(r.steps).fill(r.sigma)), delta: DELTA });
      expect(rel(exact, r.eps_exact_gdp as number)).toBeLessThan(1e-6);
      expect(exact).toBeLessThan(r.eps_rdp); // RDP is the conservative figure
    },
  );

  it('q = 1 is α/(2σ²) and q = 0 is free', () => {
    expect(rdpOfStep(1, 2, 3.5)).toBe(3.5 / 8);
    expect(rdpOfStep(0, 2, 3.5)).toBe(0);
    expect(rdpOfStep(0.5, 0, 3.5)).toBe(Infinity);
  });

  it('flags a minimum on the boundary of the orders', () => {
    expect(epsilonFor({ noiseMultiplier: 1, sampleRate: 1, steps: 100, delta: DELTA }).atBoundary).toBe(false);
    expect(epsilonFor({ noiseMultiplier: 1000, sampleRate: 1, steps: 1, delta: DELTA }).atBoundary).toBe(true);
    expect(rdpToEpsilon([2, 3], [NaN, NaN], DELTA).epsilon).toBe(Infinity);
  });
});

const sigmaArb = fc.double({ min: 0.3, max: 60, noNaN: true });
const deltaArb = fc.constantFrom(1e-3, 1e-5, 1e-7, 1e-9);

describe('accountant properties (fast-check)', () => {
  it('ε never decreases with more rounds (q = 1)', () => {
    fc.assert(
      fc.property(
        sigmaArb,
        fc.integer({ min: 1, max: 2000 }),
        fc.integer({ min: 1, max: 50 }),
        deltaArb,
        (sigma, steps, more, delta) => {
          const a = epsilonFor({ noiseMultiplier: sigma, sampleRate: 1, steps, delta }).epsilon;
          const b = epsilonFor({ noiseMultiplier: sigma, sampleRate: 1, steps: steps + more, delta }).epsilon;
          expect(b).toBeGreaterThanOrEqual(a);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('ε decreases as σ grows (q = 1)', () => {
    fc.assert(
      fc.property(
        sigmaArb,
        fc.double({ min: 1.001, max: 10, noNaN: true }),
        fc.integer({ min: 1, max: 2000 }),
        deltaArb,
        (sigma, factor, steps, delta) => {
          const a = epsilonFor({ noiseMultiplier: sigma, sampleRate: 1, steps, delta }).epsilon;
          const b = epsilonFor({ noiseMultiplier: sigma * factor, sampleRate: 1, steps, delta }).epsilon;
          expect(b).toBeLessThan(a);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('subsampled (q < 1): monotone in steps and σ, never above q = 1, RDP non-decreasing in α', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.6, max: 8, noNaN: true }),
        fc.double({ min: 1e-3, max: 0.5, noNaN: true }),
        fc.integer({ min: 1, max: 5000 }),
        (sigma, q, steps) => {
          const rdp = computeRdp({ noiseMultiplier: sigma, sampleRate: q, steps: 1 });
          const full = computeRdp({ noiseMultiplier: sigma, sampleRate: 1, steps: 1 });
          for (let k = 0; k < rdp.length; k++) {
            expect(rdp[k]).toBeGreaterThanOrEqual(0);
            expect(rdp[k]).toBeLessThanOrEqual((full[k] as number) * (1 + 1e-9));
            if (k > 0) expect(rdp[k]).toBeGreaterThanOrEqual((rdp[k - 1] as number) * (1 - 1e-9));
          }
          const e1 = rdpToEpsilon(
            DEFAULT_ORDERS,
            rdp.map((v) => v * steps),
            DELTA,
          ).epsilon;
          const e2 = rdpToEpsilon(
            DEFAULT_ORDERS,
            rdp.map((v) => v * (steps + 1)),
            DELTA,
          ).epsilon;
          const e3 = epsilonFor({ noiseMultiplier: sigma * 1.5, sampleRate: q, steps, delta: DELTA }).epsilon;
          expect(e2).toBeGreaterThanOrEqual(e1);
          expect(e3).toBeLessThanOrEqual(e1);
        },
      ),
      { numRuns: 25 },
    );
  });

  it('sigmaForEpsilon inverts epsilonFor: ε(σ*) ≤ target and any smaller σ exceeds it', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.2, max: 60, noNaN: true }),
        fc.integer({ min: 1, max: 500 }),
        deltaArb,
        (target, steps, delta) => {
          fc.pre(target > epsilonFloor(delta) * 1.01);
          const s = sigmaForEpsilon({ epsilon: target, sampleRate: 1, steps, delta });
          expect(s.epsilon).toBeLessThanOrEqual(target);
          expect(epsilonFor({ noiseMultiplier: s.noiseMultiplier, sampleRate: 1, steps, delta }).epsilon).toBe(
            s.epsilon,
          );
          expect(
            epsilonFor({ noiseMultiplier: s.noiseMultiplier * (1 - 1e-8), sampleRate: 1, steps, delta }).epsilon,
          ).toBeGreaterThan(target);
        },
      ),
      { numRuns: 100 },
    );
  });

  it('sigmaForEpsilon works for subsampling too, and refuses an unreachable target', () => {
    const s = sigmaForEpsilon({ epsilon: 2.1013652716430564, sampleRate: 0.01, steps: 1000, delta: DELTA });
    expect(Math.abs(s.noiseMultiplier - 1)).toBeLessThan(1e-6);
    expect(() => sigmaForEpsilon({ epsilon: 0.05, sampleRate: 1, steps: 1, delta: DELTA })).toThrow(/unreachable/);
  });

  it('the accountant composes: R single steps equal one R-step computation', () => {
    fc.assert(
      fc.property(sigmaArb, fc.integer({ min: 1, max: 40 }), (sigma, r) => {
        const acc = new RdpAccountant();
        for (let i = 0; i < r; i++) acc.step(sigma, 1);
        expect(
          rel(
            acc.epsilon(DELTA).epsilon,
            epsilonFor({ noiseMultiplier: sigma, sampleRate: 1, steps: r, delta: DELTA }).epsilon,
          ),
        ).toBeLessThan(1e-12);
        expect(acc.steps).toBe(r);
        const before = acc.epsilon(DELTA).epsilon;
        const peek = acc.epsilonWith(sigma, 1, DELTA).epsilon;
        expect(acc.epsilon(DELTA).epsilon).toBe(before); // peeking does not compose
        expect(peek).toBe(acc.clone().step(sigma, 1).epsilon(DELTA).epsilon);
      }),
      { numRuns: 50 },
    );
  });
});
