import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { collapseEchoes, echoGroups, ECHO_RATIO, emptyStats, addStats } from '../../src/aggregation/echo.js';
import { multiKrum } from '../../src/aggregation/krum.js';
import { pairwiseSquaredDistances } from '../../src/aggregation/pairwise-distances.js';
import { aggregateUpdates, inMemorySource, type Strategy } from '../../src/aggregation/strategy.js';
import { layoutOf } from '../../src/tensor/layout.js';
import { gaussian, rng } from './helpers.js';

function unit(rand: () => number, d: number): Float64Array {
  const v = Float64Array.from({ length: d }, () => gaussian(rand));
  const n = Math.hypot(...v);
  return v.map((x) => x / n);
}

function dot(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

function groupsOf(rows: readonly Float64Array[]): number[][] {
  const stats = emptyStats(rows.length);
  addStats(stats, rows);
  return echoGroups({ pair2: pairwiseSquaredDistances(rows).d2, norm2: stats.norm2, nonzero: stats.nonzero });
}

/**
 * A cohort whose honest forges agree only weakly (their mean is short against updates clipped to
 * 1) and whose colluders all send the negated honest mean at norm 1: the geometry of the
 * 1,000-forge collusion cells.
 */
function weakConsensusCohort(
  seed: number,
  honest: number,
  colluders: number,
  d: number,
): { rows: Float64Array[]; direction: Float64Array } {
  const rand = rng(seed);
  const direction = unit(rand, d);
  const rows = Array.from({ length: honest }, () => {
    const own = unit(rand, d);
    const v = direction.map((x, k) => 0.25 * x + (own[k] as number));
    const n = Math.hypot(...v);
    return v.map((x) => x / n);
  });
  const mean = new Float64Array(d);
  for (const r of rows) for (let k = 0; k < d; k++) mean[k] = (mean[k] as number) + (r[k] as number);
  const m = Math.hypot(...mean);
  const attack = mean.map((x) => -x / m);
  for (let c = 0; c < colluders; c++) rows.push(Float64Array.from(attack));
  return { rows, direction };
}

describe('echoes: identical updates count once in the robust rules', () => {
  const d = 400;
  const f = 9;
  const { rows, direction } = weakConsensusCohort(7, 21, 9, d);
  const colluders = new Set(Array.from({ length: 9 }, (_, i) => 21 + i));

  it('plain Multi-Krum keeps every colluder when the honest mean is short (the attack works on the rule itself)', () => {
    const r = multiKrum(rows, f);
    expect(r.used.filter((i) => colluders.has(i))).toHaveLength(9);
    expect(dot(r.aggregate, direction)).toBeLessThan(0);
  });

  it('the aggregation driver counts the colluders once: at most one is used, and the aggregate follows the honest forges', () => {
    const layout = layoutOf([{ name: 'w', shape: [d] }]);
    for (const strategy of ['multikrum', 'krum', 'bulyan'] as const) {
      const fs = strategy === 'bulyan' ? 6 : f;
      const out = aggregateUpdates(inMemorySource(rows, layout), { strategy, f: fs });
      expect(out.echoes, strategy).toEqual([[...colluders]]);
      expect(out.used.filter((i) => colluders.has(i)).length, strategy).toBeLessThanOrEqual(1);
      expect(dot(out.aggregate, direction), strategy).toBeGreaterThan(0);
    }
  });

  it('LoRA-FAIR after Multi-Krum selection (the council reference strategy) is shielded the same way', () => {
    // A: [r=2, n=100], B: [m=100, r=2]: 400 values.
    const layout = layoutOf([
      { name: 'x.lora_A.weight', shape: [2, 100] },
      { name: 'x.lora_B.weight', shape: [100, 2] },
    ]);
    const out = aggregateUpdates(inMemorySource(rows, layout), { strategy: 'lora-fair', f, selection: 'multikrum' });
    expect(out.echoes).toEqual([[...colluders]]);
    expect(out.used.filter((i) => colluders.has(i)).length).toBeLessThanOrEqual(1);
  });

  it('a rule that cannot run on what is left says the echoes were counted once', () => {
    const layout = layoutOf([{ name: 'w', shape: [d] }]);
    const twins = [rows[0] as Float64Array, rows[21] as Float64Array, rows[21] as Float64Array];
    expect(() => aggregateUpdates(inMemorySource(twins, layout), { strategy: 'krum', f: 0 })).toThrow(
      /needs n > 2f\+2.*counting 1 group of identical updates once, 1 copy left out/,
    );
  });

  it('near-copies echo below the ratio of the median pairwise distance, not above it', () => {
    const rand = rng(3);
    const { rows: honest } = weakConsensusCohort(11, 12, 0, d);
    const off = unit(rand, d);
    const pair = (ratio: number): Float64Array[] => {
      const med = Math.sqrt(2); // unit vectors, nearly orthogonal: pairwise distance a little under √2
      const a = honest[0] as Float64Array;
      return [...honest, a.map((x, k) => x + 0.98 * ratio * med * (off[k] as number))];
    };
    expect(groupsOf(pair(ECHO_RATIO * 0.5))).toEqual([[0, 12]]);
    expect(groupsOf(pair(ECHO_RATIO * 3))).toEqual([]);
  });

  it('echoes link transitively, and small or sparse updates never echo', () => {
    const { rows: honest } = weakConsensusCohort(12, 10, 0, d);
    const a = honest[3] as Float64Array;
    const tiny = honest[4]?.map((x) => x * 0.01) as Float64Array;
    const sparse = new Float64Array(d);
    sparse[0] = 1;
    const rowsX = [...honest, Float64Array.from(a), tiny, Float64Array.from(tiny), sparse, Float64Array.from(sparse)];
    expect(groupsOf(rowsX)).toEqual([[3, 10]]);
    const dist = pairwiseSquaredDistances(rowsX);
    const c = collapseEchoes(dist, groupsOf(rowsX));
    expect(c.removed).toBe(1);
    expect(c.original).not.toContain(10);
  });
});

const ROBUST: readonly { strategy: Strategy; need: (f: number) => number }[] = [
  { strategy: 'krum', need: (f) => 2 * f + 3 },
  { strategy: 'multikrum', need: (f) => 2 * f + 3 },
  { strategy: 'bulyan', need: (f) => 4 * f + 3 },
];

describe('echo properties', () => {
  it('property: adding copies of an update changes the selection by nothing but which copy stands for it', () => {
    const d = 160;
    const layout = layoutOf([{ name: 'w', shape: [d] }]);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.constantFrom(...ROBUST),
        fc.integer({ min: 0, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.nat(),
        (seed, rule, f, copies, which) => {
          const n = rule.need(f + copies) + (seed % 4);
          const rand = rng(seed);
          const centre = unit(rand, d).map((x) => x * (seed % 2 ? 0.3 : 3));
          const rows = Array.from({ length: n }, () => {
            const own = unit(rand, d);
            return centre.map((x, k) => x + (0.5 + rand()) * (own[k] as number));
          });
          // Copies of one update, each inserted at a random place; the copies are Byzantine, so f grows by as many.
          const source = which % n;
          const ids = rows.map((_, i) => i);
          for (let c = 0; c < copies; c++) ids.splice(Math.floor(rand() * (ids.length + 1)), 0, source);
          const withCopies = ids.map((i) => rows[i] as Float64Array);
          const out = aggregateUpdates(inMemorySource(withCopies, layout), { strategy: rule.strategy, f: f + copies });
          // The same cohort without the copies, the first copy standing where it arrived: the rules break
          // exact ties by arrival (Bulyan's last picks score by one nearest neighbour, so mutual
          // neighbours tie), so that is the order the copies must leave unchanged.
          const order = ids.filter((i, k) => i !== source || ids.indexOf(source) === k);
          const plain = aggregateUpdates(
            inMemorySource(
              order.map((i) => rows[i] as Float64Array),
              layout,
            ),
            {
              strategy: rule.strategy,
              f,
            },
          );
          expect(out.echoes).toEqual([ids.flatMap((i, k) => (i === source ? [k] : []))]);
          expect(out.used.map((k) => ids[k])).toEqual(plain.used.map((k) => order[k]));
          for (let k = 0; k < d; k++)
            expect(Math.abs((out.aggregate[k] as number) - (plain.aggregate[k] as number))).toBeLessThan(1e-12);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('property: honest updates never echo, with or without DP noise, however weak their consensus', () => {
    const d = 600;
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.integer({ min: 3, max: 24 }),
        fc.constantFrom(0, 0.01, 0.1, 1, 4),
        fc.constantFrom(0.05, 0.25, 1, 4),
        (seed, n, sigma, consensus) => {
          const rand = rng(seed);
          const craft = unit(rand, d);
          const rows = Array.from({ length: n }, () => {
            const own = unit(rand, d);
            const w = 0.3 + rand();
            return craft.map((x, k) => consensus * x + w * (own[k] as number) + sigma * gaussian(rand));
          });
          expect(groupsOf(rows)).toEqual([]);
        },
      ),
      { numRuns: 150 },
    );
  });
});
