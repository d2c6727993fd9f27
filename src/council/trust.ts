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
 * heterogeneity gets. A forge's round similarity is the mean over the agents it sent. Trust is an
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
