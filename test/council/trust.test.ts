import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ECHO_RATIO } from '../../src/aggregation/echo.js';
import {
  roundTrustUpdates,
  similarities,
  STRUCTURE_FLOOR,
  structureEvidence,
  support,
  type Evidence,
  type TrustSettings,
} from '../../src/council/trust.js';
import { gaussian, rng } from '../aggregation/helpers.js';

const SETTINGS: TrustSettings = { alpha: 0.3, threshold: 0.4, warmup: 3, tolerance: 1.5 };

/** Rounds of trust from per-forge distance² scores, as the council folds them. */
function playRounds(rounds: readonly { distance2: number[] }[]): {
  exiledAt: (number | null)[];
  trust: number[];
} {
  const n = (rounds[0] as { distance2: number[] }).distance2.length;
  const state = new Map(
    Array.from({ length: n }, (_, i) => [i, { trust: 1, roundsScored: 0, exiledAt: null as string | null }]),
  );
  const exiledAt: (number | null)[] = Array.from({ length: n }, () => null);
  rounds.forEach((r, k) => {
    const live = [...state.keys()].filter((i) => exiledAt[i] === null);
    const sims = similarities(
      live.map((i) => r.distance2[i] as number),
      SETTINGS.tolerance,
    );
    const ups = roundTrustUpdates(
      live.map((forgeId, j) => ({ forgeId, similarity: sims[j] as number })),
      state,
      SETTINGS,
    );
    for (const u of ups) {
      const f = state.get(u.forgeId) as { trust: number; roundsScored: number; exiledAt: string | null };
      state.set(u.forgeId, { trust: u.after, roundsScored: f.roundsScored + 1, exiledAt: u.exile ? 'x' : null });
      if (u.exile) exiledAt[u.forgeId] = k + 1;
    }
  });
  return { exiledAt, trust: [...state.values()].map((f) => f.trust) };
}

describe('trust', () => {
  it('property: an honest forge within the honest spread is never exiled, whatever a minority sends', () => {
    // Within the spread: every honest distance to the aggregate in [low, τ·low], honest forges a
    // strict majority; the attackers' distances are arbitrary (non-finite and negative included).
    const anyScore = fc.oneof(fc.double({ noNaN: false }), fc.constantFrom(Infinity, -Infinity, NaN, 0, -1, 1));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 1, max: 12 }),
        fc.double({ min: 1e-6, max: 1e6, noNaN: true }),
        fc.infiniteStream(fc.double({ min: 0, max: 1, noNaN: true })),
        fc.infiniteStream(anyScore),
        (honestN, badWanted, roundsN, low, honestDraws, badDraws) => {
          const bad = Math.min(badWanted, honestN - 1);
          const hi = honestDraws[Symbol.iterator]();
          const bi = badDraws[Symbol.iterator]();
          const rounds = Array.from({ length: roundsN }, () => {
            const distance2: number[] = [];
            for (let i = 0; i < honestN; i++) {
              const v = hi.next().value as number;
              distance2.push((low * (1 + (SETTINGS.tolerance - 1) * 0.999 * v)) ** 2);
            }
            for (let i = 0; i < bad; i++) distance2.push(bi.next().value as number);
            return { distance2 };
          });
          const { exiledAt, trust } = playRounds(rounds);
          for (let i = 0; i < honestN; i++) {
            expect(exiledAt[i]).toBeNull();
            expect(trust[i]).toBe(1);
          }
        },
      ),
      { numRuns: 300 },
    );
  });
});

/** Pairwise squared distances (row-major) and squared norms of updates, as the council computes them. */
function geometry(us: readonly Float64Array[]): { pair2: Float64Array; norm2: number[] } {
  const n = us.length;
  const pair2 = new Float64Array(n * n);
  for (let i = 0; i < n; i++)
    for (let j = 0; j < n; j++) {
      const a = us[i] as Float64Array;
      const b = us[j] as Float64Array;
      let s = 0;
      for (let k = 0; k < a.length; k++) s += ((a[k] as number) - (b[k] as number)) ** 2;
      pair2[i * n + j] = Number.isNaN(s) ? Infinity : s;
    }
  return { pair2, norm2: us.map((u) => u.reduce((s, x) => s + x * x, 0)) };
}

function evidenceOf(us: readonly Float64Array[]): (Evidence | null)[] {
  const { pair2, norm2 } = geometry(us);
  const supports = us.map((u) =>
    support(
      u.reduce((s, x) => s + x * x, 0),
      u.reduce((s, x) => s + x ** 4, 0),
    ),
  );
  const nonzero = us.map((u) => u.filter((x) => x !== 0).length);
  return structureEvidence({ pair2, norm2, supports, nonzero }, (us[0] as Float64Array).length);
}

const DIM = 4096;

function unit(rand: () => number, d = DIM): Float64Array {
  const v = Float64Array.from({ length: d }, () => gaussian(rand));
  const n = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
  return v.map((x) => x / n);
}

function combo(parts: readonly [number, Float64Array][]): Float64Array {
  const out = new Float64Array(DIM);
  for (const [k, v] of parts) for (let i = 0; i < DIM; i++) out[i] = (out[i] as number) + k * (v[i] as number);
  return out;
}

/**
 * A federation's honest updates: the shared craft direction, each player's tastes on axes that
 * several players hold (a minority pole points against the others), the forge's own data, and
 * optionally DP noise of σ per value.
 */
function honestUpdates(rand: () => number, n: number, sigma: number, minority: readonly number[] = []): Float64Array[] {
  const craft = unit(rand);
  const axes = [unit(rand), unit(rand), unit(rand)];
  return Array.from({ length: n }, (_, i) => {
    const pole = minority.includes(i) ? -1 : 1;
    const v = combo([
      [0.5 + 0.5 * rand(), craft],
      ...axes.map((a) => [pole * (0.6 + 0.6 * rand()), a] as [number, Float64Array]),
      [0.3 * rand(), unit(rand)],
    ]);
    if (sigma > 0) for (let k = 0; k < DIM; k++) v[k] = (v[k] as number) + sigma * gaussian(rand);
    return v;
  });
}

const ATTACKS = ['collude', 'noise', 'negated-mean', 'zero', 'nan', 'scaled-own'] as const;

/** What an attacker sends (never a copy of an honest forge's update: it does not see them before they are sent). */
function attackerUpdates(
  rand: () => number,
  kinds: readonly (typeof ATTACKS)[number][],
  honest: readonly Float64Array[],
  bound: number,
): Float64Array[] {
  const mean = combo(honest.map((h) => [1 / honest.length, h]));
  const shared = unit(rand);
  return kinds.map((k) => {
    switch (k) {
      case 'collude':
        return shared.map((x) => x * bound);
      case 'noise':
        return unit(rand).map((x) => x * bound * rand());
      case 'negated-mean':
        return mean.map((x) => -x);
      case 'zero':
        return new Float64Array(DIM);
      case 'nan':
        return Float64Array.from({ length: DIM }, () => NaN);
      case 'scaled-own':
        return combo([
          [-1, unit(rand)],
          [-0.5, mean],
        ]);
    }
  });
}

describe('structure evidence', () => {
  it('property: no honest update shows an echo or no structure, whatever a minority sends', () => {
    // Honest forges carry signal (σ = 0 or small next to it) or are buried in DP noise (σ√d ≫ 1);
    // their players may hold minority tastes. The attackers send any of the simulation's kinds.
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 31 }),
        fc.integer({ min: 3, max: 9 }),
        fc.constantFrom(0, 0.001, 0.2, 1),
        fc.array(fc.constantFrom(...ATTACKS), { maxLength: 4 }),
        fc.array(fc.integer({ min: 0, max: 8 }), { maxLength: 3 }),
        (seed, honestN, sigma, kindsWanted, minority) => {
          const kinds = kindsWanted.slice(0, honestN - 1);
          const rand = rng(seed);
          const honest = honestUpdates(rand, honestN, sigma, minority);
          const bound = Math.max(...honest.map((h) => Math.hypot(...h))) * 1.1;
          const all = [...honest, ...attackerUpdates(rand, kinds, honest, bound)];
          const ev = evidenceOf(all);
          for (let i = 0; i < honestN; i++) expect(ev[i]).toBeNull();
        },
      ),
      { numRuns: 60 },
    );
  });

  it('colluders sending one vector and forges sending noise fall after the warm-up; minority and honest forges never', () => {
    const rand = rng(7);
    const honestN = 7;
    const settings = { ...SETTINGS };
    const state = new Map(
      Array.from({ length: honestN + 4 }, (_, i) => [
        i,
        { trust: 1, roundsScored: 0, exiledAt: null as string | null },
      ]),
    );
    const fell = new Map<number, number>();
    for (let round = 1; round <= 6; round++) {
      const honest = honestUpdates(rand, honestN, 0, [5, 6]);
      const bound = Math.max(...honest.map((h) => Math.hypot(...h)));
      const bad = attackerUpdates(rand, ['collude', 'collude', 'noise', 'noise'], honest, bound);
      const live = [...state.keys()].filter((i) => !fell.has(i));
      const us = live.map((i) => (i < honestN ? honest[i] : bad[i - honestN]) as Float64Array);
      const ev = evidenceOf(us);
      const agg = combo(us.map((u) => [1 / us.length, u]));
      const dist = similarities(
        us.map((u) => u.reduce((s, x, k) => s + (x - (agg[k] as number)) ** 2, 0)),
        settings.tolerance,
      );
      const ups = roundTrustUpdates(
        live.map((forgeId, j) => ({ forgeId, similarity: ev[j] ? 0 : (dist[j] as number) })),
        state,
        settings,
      );
      for (const u of ups) {
        const f = state.get(u.forgeId) as { trust: number; roundsScored: number; exiledAt: string | null };
        state.set(u.forgeId, { trust: u.after, roundsScored: f.roundsScored + 1, exiledAt: u.exile ? 'x' : null });
        if (u.exile) fell.set(u.forgeId, round);
      }
      if (round === 1) expect(ev.slice(honestN)).toEqual(['echo', 'echo', 'structureless', 'structureless']);
    }
    expect([...fell].sort((a, b) => a[0] - b[0])).toEqual([
      [7, 3],
      [8, 3],
      [9, 3],
      [10, 3],
    ]);
  });

  it('updates that coincide without collusion are no echo: spread over a handful of values, or next to nothing', () => {
    // A partly federated adapter whose honest updates move one value: clipped to S, they are the same vector.
    const rand = rng(5);
    const honest = honestUpdates(rand, 6, 0);
    const spike = (k: number): Float64Array => {
      const v = new Float64Array(DIM);
      v[7] = k;
      return v;
    };
    expect(evidenceOf([...honest, spike(1), spike(1)]).slice(-2)).toEqual([null, null]);
    // Two forges their data no longer moves send the same sliver.
    const sliver = (honest[0] as Float64Array).map((x) => x * 1e-4);
    expect(evidenceOf([...honest, sliver, Float64Array.from(sliver)]).slice(-2)).toEqual([null, null]);
    // A concentrated update that correlates with nothing is structure, not noise.
    const lone = new Float64Array(DIM);
    for (let k = 0; k < 8; k++) lone[DIM - 1 - k] = 1;
    expect(evidenceOf([...honest, lone]).slice(-1)).toEqual([null]);
  });

  it('under DP noise a noise sender cannot be told apart, and nobody is judged by structure', () => {
    const rand = rng(11);
    const honest = honestUpdates(rand, 8, 1);
    const bound = Math.max(...honest.map((h) => Math.hypot(...h)));
    expect(evidenceOf([...honest, ...attackerUpdates(rand, ['noise'], honest, bound)])).toEqual(Array(9).fill(null));
  });

  it('an echo is relative to the round: twins closer than the ratio of the median pairwise distance', () => {
    const rand = rng(3);
    const honest = honestUpdates(rand, 6, 0);
    const { pair2 } = geometry(honest);
    const pairs = [];
    for (let i = 0; i < 6; i++) for (let j = i + 1; j < 6; j++) pairs.push(Math.sqrt(pair2[i * 6 + j] as number));
    pairs.sort((a, b) => a - b);
    const med = ((pairs[7] as number) + (pairs[7] as number)) / 2;
    const near = (r: number): Float64Array => {
      const off = unit(rand);
      return (honest[0] as Float64Array).map((x, k) => x + r * med * (off[k] as number));
    };
    expect(evidenceOf([...honest, near(ECHO_RATIO * 0.5)]).slice(-1)).toEqual(['echo']);
    expect(evidenceOf([...honest, near(ECHO_RATIO * 3)]).slice(-1)).toEqual([null]);
    // No structure is judged only against what a random vector shows.
    expect(STRUCTURE_FLOOR / Math.sqrt(DIM)).toBeLessThan(0.2);
  });
});
