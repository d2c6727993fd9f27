import type { DistanceMatrix } from './pairwise-distances.js';
import type { Vec } from './vec.js';

/**
 * Echoes: updates that are (near) the same vector as another's. Honest forges train on their own
 * data and draw their own noise, so no two honest updates spread over many values coincide;
 * colluders that send one vector do. Distance rules reward that: identical updates sit at distance
 * 0 from each other, so each one's Krum score counts its copies as free neighbours. So the robust
 * rules count each group of echoes once (`collapseEchoes`), and council trust scores an echo 0
 * (council/trust.ts): one definition, here, for both.
 *
 * "Near": closer than `ECHO_RATIO` of the round's median pairwise distance. Only updates that move
 * at least `ECHO_MIN_VALUES` values and are at least `ECHO_MIN_NORM` of the round's median norm can
 * echo: honest updates that move a handful of values (clipped, a partly federated adapter's are the
 * same vector) or carry almost nothing (a forge its data no longer moves) coincide without any
 * collusion. Zero and non-finite updates never echo, and are left out of the round's medians.
 */
export const ECHO_RATIO = 0.05;
export const ECHO_MIN_VALUES = 100;
export const ECHO_MIN_NORM = 0.5;

/** Per update: Σuᵢ², Σuᵢ⁴ and how many values are not zero (accumulated chunk by chunk). */
export interface UpdateStats {
  norm2: Float64Array;
  sum4: Float64Array;
  nonzero: Float64Array;
}

export function emptyStats(n: number): UpdateStats {
  return { norm2: new Float64Array(n), sum4: new Float64Array(n), nonzero: new Float64Array(n) };
}

/** Adds one chunk of every update (the same coordinate range of each) to `stats`. */
export function addStats(stats: UpdateStats, rows: readonly Vec[]): void {
  rows.forEach((r, i) => {
    let a = 0;
    let b = 0;
    let z = 0;
    for (let k = 0; k < r.length; k++) {
      const x2 = (r[k] as number) * (r[k] as number);
      a += x2;
      b += x2 * x2;
      if (x2 > 0) z++;
    }
    stats.norm2[i] = (stats.norm2[i] as number) + a;
    stats.sum4[i] = (stats.sum4[i] as number) + b;
    stats.nonzero[i] = (stats.nonzero[i] as number) + z;
  });
}

/** What `echoGroups` reads of a round: pairwise squared distances (n×n, row-major) and each update's stats. */
export interface EchoGeometry {
  pair2: ArrayLike<number>;
  norm2: ArrayLike<number>;
  nonzero: ArrayLike<number>;
}

/**
 * The round's echo groups: updates linked by an echo, transitively (two copies of one vector and a
 * third near both are one group). Each group has at least two updates, its indices ascending;
 * groups are ordered by their first index. Empty when nothing echoes.
 */
export function echoGroups(g: EchoGeometry): number[][] {
  const n = g.norm2.length;
  const d2 = (i: number, j: number): number => g.pair2[i * n + j] as number;
  const ids: number[] = [];
  for (let i = 0; i < n; i++) {
    const x = g.norm2[i] as number;
    if (Number.isFinite(x) && x > 0 && Number.isFinite(d2(i, i))) ids.push(i);
  }
  if (ids.length < 2) return [];
  const pairs: number[] = [];
  for (const i of ids) for (const j of ids) if (i < j && Number.isFinite(d2(i, j))) pairs.push(Math.sqrt(d2(i, j)));
  const medPair = median(pairs);
  if (!(medPair > 0)) return [];
  const medNorm = median(ids.map((i) => Math.sqrt(g.norm2[i] as number)));
  const can = ids.filter(
    (i) => (g.nonzero[i] as number) >= ECHO_MIN_VALUES && Math.sqrt(g.norm2[i] as number) >= ECHO_MIN_NORM * medNorm,
  );
  const parent = new Map(can.map((i) => [i, i]));
  const root = (i: number): number => {
    let r = i;
    while (parent.get(r) !== r) r = parent.get(r) as number;
    parent.set(i, r);
    return r;
  };
  const limit = ECHO_RATIO * medPair;
  for (const i of can)
    for (const j of can)
      if (i < j && Math.sqrt(d2(i, j)) < limit) {
        const a = root(i);
        const b = root(j);
        if (a !== b) parent.set(Math.max(a, b), Math.min(a, b));
      }
  const groups = new Map<number, number[]>();
  for (const i of can) {
    const r = root(i);
    groups.set(r, [...(groups.get(r) ?? []), i]);
  }
  return [...groups.values()].filter((x) => x.length > 1).sort((a, b) => (a[0] as number) - (b[0] as number));
}

/**
 * The distance matrix with each echo group counted once: its first update stands for it, its
 * other members leave. `original[k]` is the update the collapsed matrix's row k stands for;
 * `removed` how many left (every one a Byzantine update, since honest updates never echo: each
 * group holds at most one honest forge, so the rules may count them against f as they count
 * non-finite updates).
 */
export function collapseEchoes(
  dist: DistanceMatrix,
  groups: readonly (readonly number[])[],
): { dist: DistanceMatrix; original: number[]; removed: number } {
  if (groups.length === 0) return { dist, original: Array.from({ length: dist.n }, (_, i) => i), removed: 0 };
  const gone = new Set(groups.flatMap((g) => g.slice(1)));
  const original = Array.from({ length: dist.n }, (_, i) => i).filter((i) => !gone.has(i));
  const m = original.length;
  const d2 = new Float64Array(m * m);
  for (let a = 0; a < m; a++)
    for (let b = 0; b < m; b++)
      d2[a * m + b] = dist.d2[(original[a] as number) * dist.n + (original[b] as number)] as number;
  return {
    dist: { n: m, d2, nonFinite: original.map((i) => dist.nonFinite[i] as boolean) },
    original,
    removed: dist.n - m,
  };
}

function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}
