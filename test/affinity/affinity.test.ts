import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AffinityAccumulator,
  computeAffinity,
  downsample,
  nextTier,
  TIERS,
  tierOf,
  TREND_POINTS,
  type AffinityChange,
} from '../../src/affinity/affinity.js';
import { AGENTS, type Agent } from '../../src/memoir/format/agents.js';

const change = (agent: Agent, delta: number, i = 0): AffinityChange => ({
  agent,
  delta,
  entry_id: `e${i}`,
  scene_id: `s.turn-${i}`,
  recorded_at: null,
});

describe('affinity tiers', () => {
  it('breaks at 0.15, 0.4 and 0.7 (lower bounds inclusive)', () => {
    expect(TIERS.map((t) => t.min)).toEqual([Number.NEGATIVE_INFINITY, 0.15, 0.4, 0.7]);
    expect(tierOf(-1)).toBe('stranger');
    expect(tierOf(0)).toBe('stranger');
    expect(tierOf(0.1499)).toBe('stranger');
    expect(tierOf(0.15)).toBe('familiar');
    expect(tierOf(0.39)).toBe('familiar');
    expect(tierOf(0.4)).toBe('trusted');
    expect(tierOf(0.7)).toBe('bonded');
    expect(tierOf(3)).toBe('bonded');
  });

  it('does not let float noise keep a sum just below a tier', () => {
    // 0.1 + 0.05 is 0.15000000000000002 in floats; 0.05 * 3 is 0.15000000000000002 too; 0.02 * 20 can land below 0.4.
    const sum = computeAffinity([change('metis', 0.1), change('metis', 0.05)]).find((a) => a.agent === 'metis');
    expect(sum?.tier).toBe('familiar');
    const twenty = computeAffinity(Array.from({ length: 20 }, (_, i) => change('techne', 0.02, i))).find(
      (a) => a.agent === 'techne',
    );
    expect(twenty?.affinity).toBe(0.4);
    expect(twenty?.tier).toBe('trusted');
  });

  it('names the next tier and what is missing', () => {
    expect(nextTier(0.05)).toEqual({ name: 'familiar', min: 0.15, missing: 0.1 });
    expect(nextTier(0.7)).toBeNull();
  });
});

describe('AffinityAccumulator', () => {
  it('sums per agent, keeps the last change, ignores zero deltas, reports every asked agent', () => {
    const rows = computeAffinity([
      change('metis', 0.02, 1),
      change('techne', -0.05, 2),
      change('metis', 0, 3),
      change('metis', 0.01, 4),
    ]);
    expect(rows.map((r) => r.agent)).toEqual([...AGENTS]);
    const metis = rows.find((r) => r.agent === 'metis');
    expect(metis).toMatchObject({
      affinity: 0.03,
      tier: 'stranger',
      changes: 2,
      next_tier: 'familiar',
      to_next_tier: 0.12,
    });
    expect(metis?.last_change).toEqual({ entry_id: 'e4', scene_id: 's.turn-4', delta: 0.01, recorded_at: null });
    expect(metis?.trend).toEqual([0, 0.02, 0.03]);
    const aidos = rows.find((r) => r.agent === 'aidos');
    expect(aidos).toMatchObject({ affinity: 0, changes: 0, last_change: null, trend: [0] });
  });

  it('keeps the trend bounded however long the history', () => {
    const acc = new AffinityAccumulator();
    for (let i = 0; i < 100_000; i++) acc.add(change('kallos', 0.001, i));
    const [k] = acc.result(['kallos']);
    expect(k?.affinity).toBe(100);
    expect(k?.trend.length).toBeLessThanOrEqual(TREND_POINTS);
    expect(k?.trend[0]).toBe(0);
    expect(k?.trend[k.trend.length - 1]).toBe(100);
    // Rising history, rising trend.
    expect([...(k?.trend ?? [])].sort((a, b) => a - b)).toEqual(k?.trend);
  });

  it('property: the total is the sum of the deltas; the trend ends at the total and stays bounded', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: -50, max: 50 }), { maxLength: 400 }), (cents) => {
        const deltas = cents.map((c) => c / 1000);
        const [row] = computeAffinity(
          deltas.map((d, i) => change('mneme', d, i)),
          ['mneme'],
        );
        const expected = Math.round(deltas.reduce((a, b) => a + b, 0) * 1e6) / 1e6 + 0;
        expect(Math.round((row?.affinity ?? NaN) * 1e6) / 1e6 + 0).toBe(expected);
        expect(row?.trend.length).toBeLessThanOrEqual(TREND_POINTS);
        expect(row?.trend[row.trend.length - 1]).toBe(row?.affinity);
        expect(row?.changes).toBe(deltas.filter((d) => d !== 0).length);
      }),
    );
  });
});

describe('downsample', () => {
  it('keeps short series and the ends of long ones', () => {
    expect(downsample([1, 2, 3], 5)).toEqual([1, 2, 3]);
    const d = downsample(
      Array.from({ length: 100 }, (_, i) => i),
      5,
    );
    expect(d).toEqual([0, 25, 50, 74, 99]);
  });
});
