import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { poissonCohort, sampleCohort } from '../../src/protocol/cohort.js';

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
