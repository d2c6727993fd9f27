import { describe, expect, it } from 'vitest';
import { AXIS_INFO, axisOf } from '../../src/memoir/sample/planted/catalogue.js';
import { COMMON_POLE_SHARE, playerName, populationProfile } from '../../src/simulation/forges.js';

describe('the simulated population', () => {
  it('three personal axes per player, one pole each; the same player and seed give the same profile', () => {
    for (let k = 0; k < 50; k++) {
      const p = populationProfile(playerName(k), 7);
      expect(p.preferences).toHaveLength(3);
      const axes = p.preferences.map((x) => axisOf(x).axis);
      expect(new Set(axes).size).toBe(3);
      for (const a of axes) expect(AXIS_INFO[a].craft).toBe(false);
      expect(populationProfile(playerName(k), 7)).toEqual(p);
    }
  });

  it('on every axis one pole is common: held by about 3 in 4 of the players who care about it', () => {
    const held = new Map<string, [number, number]>();
    for (let k = 0; k < 2000; k++)
      for (const pref of populationProfile(playerName(k), 8).preferences) {
        const { axis, index } = axisOf(pref);
        const c = held.get(axis) ?? [0, 0];
        c[index] += 1;
        held.set(axis, c);
      }
    expect(held.size).toBe(6);
    for (const [axis, [a, b]] of held) {
      const common = Math.max(a, b) / (a + b);
      // ~1000 players per axis: 3 standard errors ≈ 0.04
      expect(common, axis).toBeGreaterThan(COMMON_POLE_SHARE - 0.05);
      expect(common, axis).toBeLessThan(COMMON_POLE_SHARE + 0.05);
    }
    // the common pole of an axis is the seed's choice, not always the same one
    const commonPoles = (seed: number): string => {
      const count = new Map<string, number>();
      for (let k = 0; k < 400; k++)
        for (const pref of populationProfile(playerName(k), seed).preferences) {
          const { axis, index } = axisOf(pref);
          count.set(axis, (count.get(axis) ?? 0) + (index === 0 ? 1 : -1));
        }
      return [...count.entries()]
        .sort()
        .map(([axis, c]) => `${axis}:${c > 0 ? 0 : 1}`)
        .join();
    };
    expect(new Set([1, 2, 3, 4, 5, 6].map(commonPoles)).size).toBeGreaterThan(1);
  });
});
