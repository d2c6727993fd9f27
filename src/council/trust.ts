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
 *
 * Distance and direction alone cannot tell an attacker from an honest forge whose player holds
 * minority tastes: both sit far from the rest and point against it, round after round. Two things
 * an honest forge's update never is give the evidence instead (`structureEvidence`); each sets
 * the round's similarity to 0, so a forge that shows it every round falls after the warm-up:
 *   - an echo: (near) the same vector as another forge's. Honest forges train on their own data
 *     and draw their own noise, so no two honest updates coincide; colluders that send one vector
 *     do. "Near": closer than `ECHO_RATIO` of the round's median pairwise distance.
 *   - no structure: an update that correlates with no other forge's, |cos| < `STRUCTURE_FLOOR`/√d
 *     with every one — what a random vector does (|cos|·√d is then about N(0, 1)) — in a round
 *     whose median forge correlates with another well above it (`STRUCTURE_GATE`). Under DP
 *     noise every honest update is such a random vector too; then no forge passes the gate and
 *     none is judged by it.
 */
export interface TrustSettings {
  alpha: number;
  threshold: number;
  warmup: number;
  tolerance: number;
}

export function similarities(distance2: readonly number[], tolerance: number): number[] {
  const d = distance2.map((x) => (Number.isFinite(x) && x >= 0 ? Math.sqrt(x) : Infinity));
  const finite = d.filter(Number.isFinite);
  if (finite.length === 0) return d.map(() => 0);
  const m = median(finite);
  return d.map((x) => {
    if (!Number.isFinite(x)) return 0;
    if (x <= tolerance * m) return 1;
    if (m === 0) return 0;
    return ((tolerance * m) / x) ** 2;
  });
}

/** An echo is closer to another forge's update than this share of the round's median pairwise distance. */
export const ECHO_RATIO = 0.05;
/** |cos|·√d below this with every other update: no structure (a random vector's is about N(0, 1)). */
export const STRUCTURE_FLOOR = 8;
/**
 * The round has structure when its median forge's largest |cos| reaches both this times 1/√d and
 * `STRUCTURE_GATE_COS`: the second keeps the gate shut when the noise lives in fewer values than d
 * (an adapter that federates only some of its values), where random vectors correlate more.
 */
export const STRUCTURE_GATE = 40;
export const STRUCTURE_GATE_COS = 0.2;

export type Evidence = 'echo' | 'structureless';

/**
 * What each forge's update shows against it this round (null: nothing), from the pairwise squared
 * distances (n×n, row-major), each update's squared norm and the dimension d. A zero or non-finite
 * update shows nothing here (it carries nothing; the distance score handles non-finite ones), and
 * is left out of the round's medians.
 */
export function structureEvidence(
  pair2: ArrayLike<number>,
  norm2: readonly number[],
  dim: number,
): (Evidence | null)[] {
  const n = norm2.length;
  const live = norm2.map((x, i) => Number.isFinite(x) && x > 0 && Number.isFinite(pair2[i * n + i] as number));
  const ids = live.flatMap((ok, i) => (ok ? [i] : []));
  const out: (Evidence | null)[] = norm2.map(() => null);
  if (ids.length < 2) return out;
  const d2 = (i: number, j: number): number => pair2[i * n + j] as number;
  const pairs: number[] = [];
  for (const i of ids) for (const j of ids) if (i < j && Number.isFinite(d2(i, j))) pairs.push(Math.sqrt(d2(i, j)));
  const medPair = median(pairs);
  const root = Math.sqrt(dim);
  const maxCos = new Map<number, number>();
  for (const i of ids) {
    let best = 0;
    for (const j of ids) {
      if (j === i || !Number.isFinite(d2(i, j))) continue;
      const a = norm2[i] as number;
      const b = norm2[j] as number;
      best = Math.max(best, Math.abs((a + b - d2(i, j)) / (2 * Math.sqrt(a * b))));
      if (medPair > 0 && Math.sqrt(d2(i, j)) < ECHO_RATIO * medPair) out[i] = 'echo';
    }
    maxCos.set(i, best * root);
  }
  const mid = median([...maxCos.values()]);
  if (mid >= STRUCTURE_GATE && mid >= STRUCTURE_GATE_COS * root)
    for (const [i, c] of maxCos) if (out[i] === null && c < STRUCTURE_FLOOR) out[i] = 'structureless';
  return out;
}

function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
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
