import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { alignmentToMedian, roundTrustUpdates, similarities, type TrustSettings } from '../../src/council/trust.js';
import { gaussian, rng } from '../aggregation/helpers.js';

const SETTINGS: TrustSettings = { alpha: 0.3, threshold: 0.4, warmup: 3, tolerance: 1.5 };

/** The oracle: for each update, the whole coordinate-wise median of the others in memory, then a plain cosine. */
function naiveAlignment(rows: readonly Float64Array[]): number[] {
  const d = (rows[0] as Float64Array).length;
  const dot = (a: Float64Array, b: Float64Array): number => a.reduce((s, v, i) => s + v * (b[i] as number), 0);
  return rows.map((r, i) => {
    const others = rows.filter((_, j) => j !== i);
    const med = new Float64Array(d);
    for (let k = 0; k < d; k++) {
      const col = others.map((o) => o[k] as number).sort((a, b) => a - b);
      const m = col.length >> 1;
      med[k] = col.length % 2 ? (col[m] as number) : ((col[m - 1] as number) + (col[m] as number)) / 2;
    }
    return dot(r, med) / Math.sqrt(dot(r, r) * dot(med, med));
  });
}

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
  it('alignment to the coordinate-wise median of the others: streamed chunks agree with the whole-vector oracle', () => {
    const rand = rng(7);
    const n = 7;
    const d = 301;
    const rows = Array.from({ length: n }, () => Float64Array.from({ length: d }, () => gaussian(rand)));
    const ranges: [number, number][] = [];
    for (let s = 0; s < d; s += 64) ranges.push([s, Math.min(d, s + 64)]);
    const got = alignmentToMedian((s, e) => rows.map((r) => r.subarray(s, e)), ranges, n);
    const want = naiveAlignment(rows);
    got.forEach((g, i) => expect(g).toBeCloseTo(want[i] as number, 12));
    // A non-finite update has no alignment and does not move the median of the others.
    const bad = rows.map((r) => Float64Array.from(r));
    (bad[0] as Float64Array)[3] = NaN;
    const withBad = alignmentToMedian((s, e) => bad.map((r) => r.subarray(s, e)), [[0, d]], n);
    expect(withBad[0]).toBeNaN();
    expect(withBad.slice(1).every(Number.isFinite)).toBe(true);
  });

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
