import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { roundTrustUpdates, similarities, type TrustSettings } from '../../src/council/trust.js';

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
