import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bulyan } from '../../src/aggregation/bulyan.js';
import { coordinateMedian } from '../../src/aggregation/coordinate-median.js';
import { fedavg } from '../../src/aggregation/fedavg.js';
import { krum, multiKrum } from '../../src/aggregation/krum.js';
import { trimmedMean } from '../../src/aggregation/trimmed-mean.js';
import type { Vec } from '../../src/aggregation/vec.js';
import { honestRows, maxRelDiff, permute, rng } from './helpers.js';

/** `tied`: the selection was decided by index order between equal scores (then order matters, as in Flower). */
type Rule = {
  name: string;
  minN: (f: number) => number;
  run: (rows: Vec[], f: number) => { aggregate: Float64Array; tied?: boolean };
};
const RULES: Rule[] = [
  { name: 'fedavg', minN: () => 1, run: (r) => fedavg(r) },
  { name: 'median', minN: (f) => 2 * f + 1, run: (r) => coordinateMedian(r) },
  { name: 'trimmed-mean', minN: (f) => 2 * f + 1, run: (r, f) => trimmedMean(r, f) },
  { name: 'krum', minN: (f) => 2 * f + 3, run: (r, f) => krum(r, f) },
  { name: 'multikrum', minN: (f) => 2 * f + 3, run: (r, f) => multiKrum(r, f) },
  {
    name: 'bulyan',
    minN: (f) => 4 * f + 3,
    run: (r, f) => {
      const b = bulyan(r, f);
      return { aggregate: b.aggregate, tied: b.tiedSteps > 0 };
    },
  },
];
const ROBUST = RULES.filter((r) => r.name !== 'fedavg');

const caseArb = fc.record({
  seed: fc.integer(),
  f: fc.integer({ min: 0, max: 2 }),
  extra: fc.integer({ min: 0, max: 5 }),
  d: fc.integer({ min: 1, max: 40 }),
  f32: fc.boolean(),
});

describe('defining properties of every rule', () => {
  for (const rule of RULES) {
    it(`${rule.name}: permutation invariant (when no two scores tie)`, () => {
      fc.assert(
        fc.property(caseArb, fc.integer(), ({ seed, f, extra, d, f32 }, pseed) => {
          const n = rule.minN(f) + extra;
          const rows = honestRows(seed, n, d, { f32 });
          const a = rule.run(rows, f);
          const b = rule.run(permute(rows, pseed).out, f);
          fc.pre(!a.tied && !b.tied);
          expect(maxRelDiff(a.aggregate, b.aggregate)).toBeLessThan(1e-12);
        }),
        { numRuns: 60 },
      );
    });

    it(`${rule.name}: n copies of one update aggregate to that update`, () => {
      fc.assert(
        fc.property(caseArb, ({ seed, f, extra, d, f32 }) => {
          const n = rule.minN(f) + extra;
          const [one] = honestRows(seed, 1, d, { f32 });
          const rows = Array.from({ length: n }, () => (one as Vec).slice());
          expect(maxRelDiff(rule.run(rows, f).aggregate, one as Vec)).toBeLessThan(1e-14);
        }),
        { numRuns: 40 },
      );
    });
  }

  for (const rule of ROBUST) {
    it(`${rule.name}: f arbitrary updates (huge, NaN, ±Inf) cannot move the aggregate outside the honest range`, () => {
      const attack = fc.constantFrom('huge', 'nan', 'inf', 'opposite', 'mixed');
      fc.assert(
        fc.property(
          caseArb,
          attack,
          fc.double({ min: 1e3, max: 1e30, noNaN: true }),
          ({ seed, f, extra, d }, kind, scale) => {
            if (f === 0) f = 1;
            const n = Math.max(rule.minN(f), 2 * f + 1) + extra;
            const honest = honestRows(seed, n - f, d);
            const rand = rng(seed ^ 0x5bd1e995);
            const byz = Array.from({ length: f }, (_, b) => {
              const v = new Float64Array(d);
              for (let k = 0; k < d; k++) {
                const which = kind === 'mixed' ? (['huge', 'nan', 'inf', 'opposite'] as const)[(b + k) % 4] : kind;
                v[k] =
                  which === 'huge'
                    ? scale * (rand() - 0.5)
                    : which === 'nan'
                      ? NaN
                      : which === 'inf'
                        ? k % 2
                          ? Infinity
                          : -Infinity
                        : -scale;
              }
              return v;
            });
            // Byzantine updates placed at random positions.
            const { out: rows } = permute([...honest, ...byz], seed);
            const agg = rule.run(rows, f).aggregate;
            for (let k = 0; k < d; k++) {
              let lo = Infinity;
              let hi = -Infinity;
              for (const h of honest) {
                lo = Math.min(lo, h[k] as number);
                hi = Math.max(hi, h[k] as number);
              }
              const x = agg[k] as number;
              expect(Number.isFinite(x)).toBe(true);
              expect(x).toBeGreaterThanOrEqual(lo - 1e-9 * Math.abs(lo));
              expect(x).toBeLessThanOrEqual(hi + 1e-9 * Math.abs(hi));
            }
          },
        ),
        { numRuns: 60 },
      );
    });
  }

  it('fedavg is not robust (the contrast): one huge update drags it away', () => {
    const rows = honestRows(1, 10, 5);
    const byz = new Float64Array(5).fill(1e9);
    const agg = fedavg([...rows, byz]).aggregate;
    expect(Math.min(...agg)).toBeGreaterThan(1e7);
  });
});

describe('non-finite updates are never selected (VelocityFL Krum bug)', () => {
  it('one NaN update: Krum, Multi-Krum and Bulyan never pick it and report it', () => {
    fc.assert(
      fc.property(
        fc.integer(),
        fc.integer({ min: 0, max: 14 }),
        fc.constantFrom(NaN, Infinity, -Infinity),
        (seed, pos, bad) => {
          const rows: Vec[] = honestRows(seed, 15, 6);
          (rows[pos] as Vec)[seed & 3] = bad;
          const k = krum(rows, 2);
          expect(k.index).not.toBe(pos);
          expect(k.nonFinite).toEqual([pos]);
          expect(k.scores[pos]).toBe(Infinity);
          expect(k.scores.filter((s) => Number.isFinite(s))).toHaveLength(14);
          expect(multiKrum(rows, 2).indices).not.toContain(pos);
          expect(bulyan(rows, 2).selected).not.toContain(pos);
          const fa = fedavg(rows);
          expect(fa.nonFinite).toEqual([pos]);
          expect(fa.aggregate.every(Number.isFinite)).toBe(true);
          expect(coordinateMedian(rows).used).not.toContain(pos);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('a non-finite update counts against f: the rule runs on the rest with f − k', () => {
    const rows: Vec[] = honestRows(3, 7, 4);
    for (const i of [0, 1]) (rows[i] as Vec)[0] = NaN;
    const k = krum(rows, 2);
    expect(k).toMatchObject({ fEffective: 0, neighbours: 3, nonFinite: [0, 1] });
    expect(
      bulyan(
        honestRows(3, 11, 4).map((r, i) => (i < 2 ? r.fill(Infinity) : r)),
        2,
      ),
    ).toMatchObject({ fEffective: 0, theta: 9, beta: 9 });
  });

  it('too many non-finite updates fail the precondition instead of returning garbage', () => {
    const rows: Vec[] = honestRows(3, 7, 4);
    for (const i of [0, 1, 2, 3, 4]) (rows[i] as Vec)[0] = NaN;
    expect(() => krum(rows, 2)).toThrow(/n > 2f\+2, i\.e\. at least 3 finite updates; got 2/);
    const all = honestRows(4, 3, 2).map((r) => r.fill(NaN));
    expect(() => fedavg(all)).toThrow(/every update contains NaN or Inf/);
  });
});

describe('preconditions', () => {
  it('Krum and Multi-Krum need n > 2f+2', () => {
    expect(() => krum(honestRows(1, 6, 3), 2)).toThrow(
      /krum: tolerating f=2 Byzantine updates needs n > 2f\+2, i\.e\. at least 7 finite updates; got 6/,
    );
    expect(() => multiKrum(honestRows(1, 6, 3), 2)).toThrow(/multikrum: .*at least 7/);
    expect(krum(honestRows(1, 7, 3), 2).neighbours).toBe(3);
  });

  it('Bulyan needs n ≥ 4f+3, with a message saying so', () => {
    expect(() => bulyan(honestRows(1, 10, 3), 2)).toThrow(
      /bulyan: tolerating f=2 Byzantine updates needs n ≥ 4f\+3 = 11 finite updates; got 10/,
    );
    expect(bulyan(honestRows(1, 11, 3), 2)).toMatchObject({ theta: 7, beta: 3 });
  });

  it('trimmed mean needs n > 2k; f must be a whole number', () => {
    expect(() => trimmedMean(honestRows(1, 4, 3), 2)).toThrow(/n > 2k/);
    expect(() => krum(honestRows(1, 9, 3), 1.5)).toThrow(/whole number/);
    expect(() => multiKrum(honestRows(1, 9, 3), 1, { m: 0 })).toThrow(/m must be between 1/);
  });

  it('rows of different lengths are refused', () => {
    expect(() => fedavg([new Float64Array(3), new Float64Array(4)])).toThrow(
      /update 1 has 4 coordinates, update 0 has 3/,
    );
  });
});

describe('coordinate-wise rules match their naive definitions', () => {
  const naive = (rows: Vec[], k: number, pick: (sorted: number[]) => number): number =>
    pick(rows.map((r) => r[k] as number).sort((a, b) => a - b));
  it('median (odd and even n), trimmed mean, Bulyan second stage', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 8 }), (seed, n, d) => {
        const rows = honestRows(seed, n, d);
        const med = coordinateMedian(rows).aggregate;
        const t = Math.floor((n - 1) / 2);
        const tm = trimmedMean(rows, Math.min(t, 3)).aggregate;
        for (let k = 0; k < d; k++) {
          expect(med[k]).toBeCloseTo(
            naive(rows, k, (s) =>
              s.length % 2
                ? (s[(s.length - 1) / 2] as number)
                : ((s[s.length / 2 - 1] as number) + (s[s.length / 2] as number)) / 2,
            ),
            12,
          );
          const kk = Math.min(t, 3);
          expect(tm[k]).toBeCloseTo(
            naive(rows, k, (s) => s.slice(kk, s.length - kk).reduce((a, b) => a + b, 0) / (s.length - 2 * kk)),
            12,
          );
        }
      }),
      { numRuns: 80 },
    );
  });

  it('Bulyan: each coordinate is the mean of the β selected values closest to their median', () => {
    fc.assert(
      fc.property(fc.integer(), fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 6 }), (seed, f, extra) => {
        const n = 4 * f + 3 + extra;
        const rows = honestRows(seed, n, 5);
        const r = bulyan(rows, f);
        for (let k = 0; k < 5; k++) {
          const vals = r.selected.map((i) => (rows[i] as Vec)[k] as number).sort((a, b) => a - b);
          const m =
            vals.length % 2
              ? (vals[(vals.length - 1) / 2] as number)
              : ((vals[vals.length / 2 - 1] as number) + (vals[vals.length / 2] as number)) / 2;
          const closest = [...vals].sort((a, b) => Math.abs(a - m) - Math.abs(b - m)).slice(0, r.beta);
          expect(r.aggregate[k]).toBeCloseTo(closest.reduce((a, b) => a + b, 0) / r.beta, 12);
        }
      }),
      { numRuns: 60 },
    );
  });
});
