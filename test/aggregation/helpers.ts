import { mulberry32 } from '../../src/runtime/seeded-random.js';

/** Seeded pseudo-random updates for aggregation tests (mulberry32 + Box-Muller). */
export const rng: (seed: number) => () => number = mulberry32;

export function gaussian(rand: () => number): number {
  const u = Math.max(rand(), 1e-300);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * rand());
}

/** n updates around a common centre (honest-looking), float64 or float32. */
export function honestRows(
  seed: number,
  n: number,
  d: number,
  opts: { f32?: boolean; spread?: number; centre?: number } = {},
): (Float64Array | Float32Array)[] {
  const rand = rng(seed);
  const centre = Array.from({ length: d }, () => (opts.centre ?? 1) * gaussian(rand));
  return Array.from({ length: n }, () => {
    const v = opts.f32 ? new Float32Array(d) : new Float64Array(d);
    for (let k = 0; k < d; k++) v[k] = (centre[k] as number) + (opts.spread ?? 0.1) * gaussian(rand);
    return v;
  });
}

export function permute<T>(xs: readonly T[], seed: number): { out: T[]; perm: number[] } {
  const rand = rng(seed);
  const perm = xs.map((_, i) => i);
  for (let i = perm.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [perm[i], perm[j]] = [perm[j] as number, perm[i] as number];
  }
  return { out: perm.map((i) => xs[i] as T), perm };
}

export function maxRelDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++)
    m = Math.max(m, Math.abs((a[i] as number) - (b[i] as number)) / Math.max(1, Math.abs(b[i] as number)));
  return m;
}
