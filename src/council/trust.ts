import { echoGroups } from '../aggregation/echo.js';

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
 *   - an echo: (near) the same vector as another forge's (aggregation/echo.ts, whose definition
 *     the robust rules share: they count each group of echoes once). Honest forges train on their
 *     own data and draw their own noise, so no two honest updates spread over many values
 *     coincide; colluders that send one vector do.
 *   - no structure: an update that correlates with no other forge's, |cos| < `STRUCTURE_FLOOR`/√d
 *     with every one — what a random vector does (|cos|·√d is then about N(0, 1)) — in a round
 *     whose median forge correlates with another well above it (`STRUCTURE_GATE`), and only of
 *     an update spread over the values as noise is (a concentrated update is structure). Under DP
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

/** |cos|·√d below this with every other update: no structure (a random vector's is about N(0, 1)). */
export const STRUCTURE_FLOOR = 8;
/**
 * The round has structure when its median forge's largest |cos| reaches both this times 1/√d and
 * `STRUCTURE_GATE_COS`: the second keeps the gate shut when the noise lives in fewer values than d
 * (an adapter that federates only some of its values), where random vectors correlate more.
 */
const STRUCTURE_GATE = 40;
const STRUCTURE_GATE_COS = 0.2;

/**
 * No structure is judged only of updates spread like noise: a participation ratio (`support`) of
 * at least this share of d. Gaussian noise has about a third; honest adapter updates put nearly
 * all their weight on a few values.
 */
const STRUCTURELESS_MIN_SUPPORT = 0.1;

export type Evidence = 'echo' | 'structureless';

/** The participation ratio of a vector from Σuᵢ² and Σuᵢ⁴: how many values it is spread over (0 for zero). */
export function support(sum2: number, sum4: number): number {
  return sum4 > 0 ? (sum2 * sum2) / sum4 : 0;
}

/** What the council measures of each update of a round, for `structureEvidence`. */
interface RoundGeometry {
  /** Pairwise squared distances, n×n, row-major. */
  pair2: ArrayLike<number>;
  /** Each update's squared norm. */
  norm2: readonly number[];
  /** Each update's participation ratio (`support`). */
  supports: readonly number[];
  /** How many of its values are not zero. */
  nonzero: readonly number[];
}

/**
 * What each forge's update shows against it this round (null: nothing), in d dimensions. A zero or
 * non-finite update shows nothing here (it carries nothing; the distance score handles non-finite
 * ones), and is left out of the round's medians.
 */
export function structureEvidence(g: RoundGeometry, dim: number): (Evidence | null)[] {
  const { pair2, norm2, supports, nonzero } = g;
  const n = norm2.length;
  const live = norm2.map((x, i) => Number.isFinite(x) && x > 0 && Number.isFinite(pair2[i * n + i] as number));
  const ids = live.flatMap((ok, i) => (ok ? [i] : []));
  const out: (Evidence | null)[] = norm2.map(() => null);
  if (ids.length < 2) return out;
  const d2 = (i: number, j: number): number => pair2[i * n + j] as number;
  for (const group of echoGroups({ pair2, norm2, nonzero })) for (const i of group) out[i] = 'echo';
  const root = Math.sqrt(dim);
  const maxCos = new Map<number, number>();
  for (const i of ids) {
    let best = 0;
    for (const j of ids) {
      if (j === i || !Number.isFinite(d2(i, j))) continue;
      const a = norm2[i] as number;
      const b = norm2[j] as number;
      best = Math.max(best, Math.abs((a + b - d2(i, j)) / (2 * Math.sqrt(a * b))));
    }
    maxCos.set(i, best * root);
  }
  const mid = median([...maxCos.values()]);
  if (mid >= STRUCTURE_GATE && mid >= STRUCTURE_GATE_COS * root)
    for (const [i, c] of maxCos)
      if (out[i] === null && c < STRUCTURE_FLOOR && (supports[i] ?? 0) >= STRUCTURELESS_MIN_SUPPORT * dim)
        out[i] = 'structureless';
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
