import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cohortFaultBound, poissonCohort, sampleCohort, smallestCohort } from '../../src/protocol/cohort.js';

const forges = (n: number): string[] => Array.from({ length: n }, (_, i) => `forge-${i}`);

describe('sampleCohort', () => {
  it('takes exactly size distinct eligible forges, and all of them when size reaches the count', () => {
    const c = sampleCohort(forges(50), { round: 3, seed: 'k', size: 10 });
    expect(c).toHaveLength(10);
    expect(new Set(c).size).toBe(10);
    for (const f of c) expect(forges(50)).toContain(f);
    expect(sampleCohort(forges(5), { round: 1, seed: 'k', size: 9 })).toEqual(forges(5).sort());
  });

  it('does not depend on the order forges are listed in', () => {
    fc.assert(
      fc.property(fc.shuffledSubarray(forges(40), { minLength: 40, maxLength: 40 }), fc.nat(100), (order, round) => {
        expect(sampleCohort(order, { round, seed: 's', size: 7 })).toEqual(
          sampleCohort(forges(40), { round, seed: 's', size: 7 }),
        );
      }),
      { numRuns: 50 },
    );
  });

  it('changes with the round and the seed', () => {
    const a = sampleCohort(forges(200), { round: 1, seed: 's', size: 20 });
    expect(sampleCohort(forges(200), { round: 2, seed: 's', size: 20 })).not.toEqual(a);
    expect(sampleCohort(forges(200), { round: 1, seed: 't', size: 20 })).not.toEqual(a);
  });

  it('keeps a sampled forge sampled when another forge joins, unless the newcomer displaces it', () => {
    const before = new Set(sampleCohort(forges(100), { round: 4, seed: 's', size: 10 }));
    const after = sampleCohort([...forges(100), 'newcomer'], { round: 4, seed: 's', size: 10 });
    const kept = after.filter((f) => before.has(f));
    expect(kept.length).toBeGreaterThanOrEqual(9);
  });

  it('samples each forge at about size/n over many rounds', () => {
    const n = 40;
    const counts = new Map<string, number>();
    const rounds = 2000;
    for (let r = 0; r < rounds; r++)
      for (const f of sampleCohort(forges(n), { round: r, seed: 'freq', size: 10 }))
        counts.set(f, (counts.get(f) ?? 0) + 1);
    // Expected 500 per forge, sd ≈ 19: 6 sd either side.
    for (const f of forges(n)) expect(Math.abs((counts.get(f) ?? 0) - 500)).toBeLessThan(115);
  });

  it('refuses a negative or fractional size', () => {
    expect(() => sampleCohort(forges(3), { round: 1, seed: 's', size: -1 })).toThrow(/cohort size/);
    expect(() => sampleCohort(forges(3), { round: 1, seed: 's', size: 1.5 })).toThrow(/cohort size/);
  });
});

describe('poissonCohort', () => {
  it('includes each forge with probability rate', () => {
    let total = 0;
    for (let r = 0; r < 200; r++) total += poissonCohort(forges(100), { round: r, seed: 'p', rate: 0.1 }).length;
    // Expected 2000 of 20,000 draws, sd ≈ 42.
    expect(Math.abs(total - 2000)).toBeLessThan(260);
    expect(poissonCohort(forges(10), { round: 1, seed: 'p', rate: 0 })).toEqual([]);
    expect(poissonCohort(forges(10), { round: 1, seed: 'p', rate: 1 })).toHaveLength(10);
  });

  it('refuses a rate outside [0, 1]', () => {
    expect(() => poissonCohort(forges(3), { round: 1, seed: 's', rate: 1.2 })).toThrow(/sampling rate/);
  });
});

describe('cohortFaultBound', () => {
  // Reference values: the smallest f with sf(f) ≤ δ from scipy.stats.hypergeom(N, b, K) / binom(b, K/N) (scipy 1.17).
  it.each([
    [1000, 200, 100, 'fixed', 1e-3, 32],
    [1000, 200, 100, 'poisson', 1e-3, 34],
    [1000, 200, 100, 'fixed', 1e-6, 39],
    [100, 20, 30, 'fixed', 1e-3, 12],
    [1000, 200, 500, 'fixed', 1e-3, 119],
    [1000, 200, 420, 'fixed', 1e-3, 103],
    [15, 3, 10, 'fixed', 1e-3, 3],
    [50, 10, 20, 'fixed', 1e-3, 8],
    [100000, 1000, 1000, 'fixed', 1e-3, 21],
  ] as const)('N %i, b %i, K %i, %s, δ %f: f = %i (scipy)', (population, byzantine, cohort, sampling, delta, f) => {
    expect(cohortFaultBound({ population, byzantine, cohort, sampling, delta })).toBe(f);
  });

  it('is b exactly when the cohort is the whole federation, and 0 without Byzantine forges', () => {
    expect(cohortFaultBound({ population: 11, byzantine: 2, cohort: 11 })).toBe(2);
    expect(cohortFaultBound({ population: 1000, byzantine: 0, cohort: 100 })).toBe(0);
  });

  it('bounds the Byzantine forges of sampled cohorts: at most about δ of the rounds exceed f', () => {
    const names = forges(200);
    const bad = new Set(names.slice(0, 40));
    const held = Array.from(
      { length: 600 },
      (_, r) => sampleCohort(names, { round: r + 1, seed: 'bound', size: 20 }).filter((n) => bad.has(n)).length,
    );
    const f = cohortFaultBound({ population: 200, byzantine: 40, cohort: 20, delta: 0.1 });
    const over = held.filter((h) => h > f).length / held.length;
    // Binomial(600, ≤ 0.1): 3 standard deviations above 0.1.
    expect(over).toBeLessThanOrEqual(0.1 + 3 * Math.sqrt((0.1 * 0.9) / held.length));
    // …and the mean K·b/N is no bound: more than a quarter of the cohorts exceed it.
    expect(held.filter((h) => h > 4).length / held.length).toBeGreaterThan(0.25);
  });

  it('refuses impossible counts', () => {
    expect(() => cohortFaultBound({ population: 10, byzantine: 11, cohort: 5 })).toThrow(/exceeds/);
    expect(() => cohortFaultBound({ population: 10, byzantine: 1.5, cohort: 5 })).toThrow(/whole number/);
  });
});

describe('smallestCohort', () => {
  // scipy: the smallest K ≥ 4f(K)+3 at N 1000, b 200 is 391 (f 97); K ≥ 2f(K)+3 is 27 (f 12).
  it('finds the smallest cohort that holds its own f', () => {
    expect(smallestCohort({ population: 1000, byzantine: 200 }, (f) => 4 * f + 3)).toBe(391);
    expect(smallestCohort({ population: 1000, byzantine: 200 }, (f) => 2 * f + 3)).toBe(27);
    expect(smallestCohort({ population: 10, byzantine: 5 }, (f) => 4 * f + 3)).toBeNull();
  });
});
