/**
 * Trust and exile (the Stoa Falls).
 *
 * After each round, every forge whose update for an agent was aggregated gets a similarity from
 * its distance to that agent's aggregate update, relative to the other forges:
 *
 *     dₖ = ‖uₖ − ū‖,   m = median over forges of dₖ,   ρₖ = dₖ / m
 *     sₖ = 1                 if ρₖ ≤ τ
 *     sₖ = (τ / ρₖ)²         otherwise                   (in (0, 1]; 0 for a non-finite update)
 *
 * Relative, because differential-privacy noise makes every honest update far from the aggregate
 * in absolute terms (‖noise‖ ≈ σS√d) but about equally far; τ (default 1.5) is the slack honest
 * heterogeneity gets.
 *
 * Each forge's alignment (the cosine between its update and the coordinate-wise median of the
 * other forges' updates, `alignmentToMedian`) is recorded beside the similarity for the operator,
 * but does not count: in simulated federations an honest forge whose player holds a minority pole
 * points against the others as persistently as a sign-flipping or colluding attacker does
 * (docs/evaluation.md, "Exile"), so a direction rule exiles honest minorities. A forge's round similarity is the mean over the agents it sent. Trust is an
 * exponential moving average of it, starting at 1:
 *
 *     T ← (1 − α)·T + α·s          (default α = 0.3)
 *
 * the reputation recurrence of trust-based removal schemes. Once a forge has been scored in at
 * least `warmup` rounds (default 3), trust below `threshold` (default 0.4) exiles it: its updates
 * are refused from then on, its round status says so, and a `stoa_falls` event is recorded. A
 * forge that keeps sending updates 3× as far as the median (s ≈ 0.25) falls in about 5 rounds;
 * one wildly off (s ≈ 0) in 3; an honest forge with an occasional bad round recovers.
 */
export interface TrustSettings {
  alpha: number;
  threshold: number;
  warmup: number;
  tolerance: number;
}

export function similarities(distance2: readonly number[], tolerance: number): number[] {
  const d = distance2.map((x) => (Number.isFinite(x) && x >= 0 ? Math.sqrt(x) : Infinity));
  const finite = d.filter(Number.isFinite).sort((a, b) => a - b);
  if (finite.length === 0) return d.map(() => 0);
  const mid = finite.length >> 1;
  const m = finite.length % 2 ? (finite[mid] as number) : ((finite[mid - 1] as number) + (finite[mid] as number)) / 2;
  return d.map((x) => {
    if (!Number.isFinite(x)) return 0;
    if (x <= tolerance * m) return 1;
    if (m === 0) return 0;
    return ((tolerance * m) / x) ** 2;
  });
}

/**
 * Each update's cosine to the coordinate-wise median of the other updates (leave-one-out: an
 * update is not measured against a median it helped make), streamed chunk by chunk
 * (`read(start, end)` gives every update's coordinates [start, end)). NaN for an update that is
 * not finite or is zero; non-finite values are left out of every median.
 */
export function alignmentToMedian(
  read: (start: number, end: number) => readonly ArrayLike<number>[],
  ranges: readonly (readonly [number, number])[],
  n: number,
): number[] {
  const dot = new Float64Array(n);
  const sq = new Float64Array(n);
  const medSq = new Float64Array(n);
  const bad = new Uint8Array(n);
  const col = new Float64Array(n);
  for (const [s, e] of ranges) {
    const rows = read(s, e);
    for (let k = 0; k < e - s; k++) {
      let c = 0;
      for (let i = 0; i < n; i++) {
        const v = (rows[i] as ArrayLike<number>)[k] as number;
        if (Number.isFinite(v)) col[c++] = v;
        else bad[i] = 1;
      }
      const sorted = col.subarray(0, c).sort();
      for (let i = 0; i < n; i++) {
        const v = (rows[i] as ArrayLike<number>)[k] as number;
        const finite = Number.isFinite(v);
        const med = finite ? medianWithout(sorted, lowerBound(sorted, v)) : medianWithout(sorted, -1);
        medSq[i] = (medSq[i] as number) + med * med;
        if (!finite) continue;
        dot[i] = (dot[i] as number) + v * med;
        sq[i] = (sq[i] as number) + v * v;
      }
    }
  }
  return Array.from({ length: n }, (_, i) => {
    const un = Math.sqrt(sq[i] as number);
    const mn = Math.sqrt(medSq[i] as number);
    if (bad[i] || !(un > 0) || !(mn > 0)) return NaN;
    return (dot[i] as number) / (un * mn);
  });
}

function lowerBound(v: Float64Array, x: number): number {
  let lo = 0;
  let hi = v.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((v[mid] as number) < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The median of a sorted array with the element at `skip` left out (−1: none left out); 0 when nothing is left. */
function medianWithout(v: Float64Array, skip: number): number {
  const len = skip < 0 ? v.length : v.length - 1;
  if (len <= 0) return 0;
  const at = (j: number): number => v[skip >= 0 && j >= skip ? j + 1 : j] as number;
  const mid = len >> 1;
  return len % 2 ? at(mid) : (at(mid - 1) + at(mid)) / 2;
}

export function nextTrust(previous: number, similarity: number, alpha: number): number {
  return (1 - alpha) * previous + alpha * similarity;
}

/** Exile after the warm-up when trust has fallen below the threshold. */
export function shouldExile(trust: number, roundsScored: number, s: TrustSettings): boolean {
  return roundsScored >= s.warmup && trust < s.threshold;
}

/**
 * The trust changes a finished round brings: each scored forge's mean similarity over the
 * agents it sent, folded into its trust, and whether it falls.
 */
export function roundTrustUpdates(
  scores: readonly { forgeId: number; similarity: number }[],
  forges: ReadonlyMap<number, { trust: number; roundsScored: number; exiledAt: string | null }>,
  s: TrustSettings,
): { forgeId: number; similarity: number; before: number; after: number; exile: boolean }[] {
  const byForge = new Map<number, number[]>();
  for (const x of scores) byForge.set(x.forgeId, [...(byForge.get(x.forgeId) ?? []), x.similarity]);
  const out = [];
  for (const [forgeId, sims] of byForge) {
    const f = forges.get(forgeId);
    if (!f) continue;
    const similarity = sims.reduce((a, b) => a + b, 0) / sims.length;
    const after = nextTrust(f.trust, similarity, s.alpha);
    out.push({
      forgeId,
      similarity,
      before: f.trust,
      after,
      exile: f.exiledAt === null && shouldExile(after, f.roundsScored + 1, s),
    });
  }
  return out;
}
