import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ALIGNMENT_SLACK,
  alignmentSimilarities,
  alignmentToMedian,
  combinedSimilarities,
  roundTrustUpdates,
  type TrustSettings,
} from '../../src/council/trust.js';
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

/** Rounds of trust from per-forge (distance², alignment) scores, as the council folds them. */
function playRounds(rounds: readonly { distance2: number[]; alignment: number[] }[]): {
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
    const sims = combinedSimilarities(
      live.map((i) => r.distance2[i] as number),
      live.map((i) => r.alignment[i] as number),
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

describe('trust by direction', () => {
  it('alignment similarity: 1 from β× the median alignment up, (a/βm)² below, 0 at or below 0 and for non-finite', () => {
    // median of [0.4, 0.5, 0.6, 0.1, -0.3] = 0.4; βm = 0.2
    const s = alignmentSimilarities([0.4, 0.5, 0.6, 0.1, -0.3, NaN]);
    expect(ALIGNMENT_SLACK).toBe(0.5);
    expect(s.slice(0, 3)).toEqual([1, 1, 1]);
    expect(s[3]).toBeCloseTo(0.25, 12);
    expect(s[4]).toBe(0);
    expect(s[5]).toBe(0);
    // No consensus direction (median ≤ 0): direction says nothing.
    expect(alignmentSimilarities([-0.1, 0, -0.2])).toEqual([1, 1, 1]);
  });

  it('the combined score is the smaller of distance and direction', () => {
    const s = combinedSimilarities([1, 1, 1, 1, 9], [0.5, 0.5, 0.5, -0.5, 0.5], 1.5);
    expect(s.slice(0, 3)).toEqual([1, 1, 1]);
    expect(s[3]).toBe(0);
    expect(s[4]).toBeCloseTo(0.25, 12);
  });

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

  it('every attack inside the clip norm is exiled after the warm-up; no honest forge is', () => {
    // 9 honest forges: a shared direction plus their own heterogeneity (cosine to the mean ≈ 0.45),
    // clipped to S = 1; 2 attackers of each kind, re-drawn every round.
    const d = 2000;
    const rand = rng(101);
    const unit = (v: Float64Array): Float64Array => {
      const m = Math.sqrt(v.reduce((s, x) => s + x * x, 0));
      return v.map((x) => x / m);
    };
    for (const attack of ['sign-flip', 'collude', 'noise', 'ipm'] as const) {
      const rounds = Array.from({ length: 6 }, () => {
        const centre = unit(Float64Array.from({ length: d }, () => gaussian(rand)));
        const honest = Array.from({ length: 9 }, () =>
          unit(Float64Array.from(centre, (c) => c + (2 * gaussian(rand)) / Math.sqrt(d))),
        );
        const mean = Float64Array.from(centre, (_, k) => honest.reduce((s, h) => s + (h[k] as number), 0) / 9);
        const bad = Array.from({ length: 2 }, (_, j) => {
          if (attack === 'sign-flip') return (honest[j] as Float64Array).map((x) => -x);
          if (attack === 'collude') return unit(mean.map((x) => -x));
          if (attack === 'ipm') return mean.map((x) => -9 * x).map((x) => x / 4);
          return unit(Float64Array.from({ length: d }, () => gaussian(rand)));
        });
        const all = [...honest, ...bad];
        const agg = mean;
        const distance2 = all.map((u) => u.reduce((s, x, k) => s + (x - (agg[k] as number)) ** 2, 0));
        return { distance2, alignment: alignmentToMedian((s, e) => all.map((r) => r.subarray(s, e)), [[0, d]], 11) };
      });
      const { exiledAt } = playRounds(rounds);
      expect(exiledAt.slice(0, 9), attack).toEqual(Array.from({ length: 9 }, () => null));
      expect(exiledAt.slice(9), attack).toEqual([3, 3]);
    }
  });

  it('property: an honest forge within the honest spread is never exiled, whatever a minority sends', () => {
    // Within the spread: every honest alignment in [β·top, top] and every honest distance in
    // [low, τ·low], honest forges a strict majority; the attackers' scores are arbitrary.
    const anyScore = fc.oneof(fc.double({ noNaN: false }), fc.constantFrom(Infinity, -Infinity, NaN, 0, -1, 1));
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 1, max: 12 }),
        fc.double({ min: 1e-6, max: 1, noNaN: true }),
        fc.double({ min: 1e-6, max: 1e6, noNaN: true }),
        fc.infiniteStream(
          fc.tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true })),
        ),
        fc.infiniteStream(fc.tuple(anyScore, anyScore)),
        (honestN, badWanted, roundsN, top, low, honestDraws, badDraws) => {
          const bad = Math.min(badWanted, honestN - 1);
          const hi = honestDraws[Symbol.iterator]();
          const bi = badDraws[Symbol.iterator]();
          const rounds = Array.from({ length: roundsN }, () => {
            const distance2: number[] = [];
            const alignment: number[] = [];
            for (let i = 0; i < honestN; i++) {
              const [u, v] = hi.next().value as [number, number];
              alignment.push(top * (ALIGNMENT_SLACK * 1.001 + (1 - ALIGNMENT_SLACK * 1.001) * u));
              distance2.push((low * (1 + (SETTINGS.tolerance - 1) * 0.999 * v)) ** 2);
            }
            for (let i = 0; i < bad; i++) {
              const [a, dd] = bi.next().value as [number, number];
              alignment.push(a);
              distance2.push(dd);
            }
            return { distance2, alignment };
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
