import type { GramPool } from './gram-pool.js';
import { instantiateKernel, TILE_I, TILE_J, type Kernel } from './simd-kernel.js';
import type { Vec } from './vec.js';

/**
 * Pairwise squared Euclidean distances between updates, in float64 — the input of Krum,
 * Multi-Krum and Bulyan, and of the trust score.
 *
 * Fast path: the Gram matrix G = X·Xᵀ by blocks of coordinates (WebAssembly SIMD, see
 * simd-kernel.ts), then ‖xᵢ − xⱼ‖² = Gᵢᵢ + Gⱼⱼ − 2Gᵢⱼ. That form cancels catastrophically when two
 * updates are close compared with their norms (a large common offset), so every pair whose
 * rounding-error bound exceeds 1e-9 of its distance is recomputed directly as Σ(xᵢ − xⱼ)². Identical
 * updates therefore get exactly 0, and every distance is accurate to about 1e-9 relative or better.
 *
 * A row containing NaN or ±Infinity (or whose squared norm overflows float64) is marked non-finite:
 * its distances are +Infinity, so it can never be anyone's nearest neighbour and never selected.
 */
export interface DistanceMatrix {
  n: number;
  /** n×n, row-major; symmetric; 0 on the diagonal of finite rows. */
  d2: Float64Array;
  /** Rows with NaN/Inf (or an overflowing norm). */
  nonFinite: boolean[];
}

/** Coordinates per block: n rows × this many values stay in the L2 cache while every tile reuses them. */
const BLOCK_F32 = 2048;
const BLOCK_F64 = 1024;
const EPS = 2 ** -53;
/** Relative accuracy we require of each distance before trusting the Gram form. */
const TARGET = 1e-9;

/**
 * Accumulates the Gram matrix over blocks of coordinates, so that updates can be streamed (the
 * council reads them chunk by chunk from SQLite). Every `add` passes the same coordinate range of
 * each row; rows are all float32 or all float64.
 */
export class GramAccumulator {
  readonly n: number;
  private readonly nPad: number;
  private readonly kernel: Kernel | null;
  private readonly pool: GramPool | null;
  private readonly poolMinRows: number;
  private readonly g: Float64Array;
  /** Longest sequential chain of float64 additions into one entry so far (for the error bound). */
  private chain = 0;

  /**
   * `pool`: spread blocks over all cores (see gram-pool.ts), from `poolMinRows` updates on (default
   * 32: with fewer, the work per coordinate is too small for the copy-and-hand-off to pay — measured
   * on the 2-core benchmark machine, n = 20 never gained, n = 100 gained up to 2×).
   * `kernel: null` forces the scalar path.
   */
  constructor(n: number, opts: { kernel?: Kernel | null; pool?: GramPool | null; poolMinRows?: number } = {}) {
    if (!Number.isInteger(n) || n < 1) throw new RangeError(`need at least one update, got ${n}`);
    this.n = n;
    this.nPad = Math.ceil(n / TILE_I) * TILE_I;
    this.kernel = opts.kernel === undefined ? instantiateKernel() : opts.kernel;
    this.pool = this.kernel ? (opts.pool ?? null) : null;
    this.poolMinRows = opts.poolMinRows ?? 32;
    this.g = new Float64Array(n * n);
  }

  add(rows: readonly Vec[]): void {
    if (rows.length !== this.n) throw new RangeError(`expected ${this.n} rows, got ${rows.length}`);
    const first = rows[0] as Vec;
    const len = first.length;
    const f32 = first instanceof Float32Array;
    for (const r of rows) {
      if (r.length !== len) throw new RangeError(`rows differ in length (${r.length} vs ${len})`);
      if (r instanceof Float32Array !== f32) throw new TypeError('rows mix float32 and float64');
    }
    if (len === 0) return;
    const block = f32 ? BLOCK_F32 : BLOCK_F64;
    // Worth a round trip to the workers only when there are several blocks of real work.
    if (this.pool && len >= 4 * block && this.n >= Math.max(4, this.poolMinRows)) {
      this.pool.accumulate(rows, this.g, block);
      this.chain += Math.ceil(block / 4) + Math.ceil(len / block) + this.pool.threads + 1;
    } else if (this.kernel) this.addSimd(rows, len, f32, this.kernel);
    else this.addScalar(rows, len);
  }

  private addSimd(rows: readonly Vec[], len: number, f32: boolean, kernel: Kernel): void {
    const { n, nPad } = this;
    const el = f32 ? 4 : 8;
    const block = f32 ? BLOCK_F32 : BLOCK_F64;
    const stride = block * el;
    const gBytes = nPad * nPad * 8;
    const xBase = Math.ceil(gBytes / 64) * 64;
    kernel.ensure(xBase + nPad * stride);
    const buf = kernel.memory.buffer;
    const G = new Float64Array(buf, 0, nPad * nPad);
    G.fill(0);
    const X = f32 ? new Float32Array(buf, xBase, nPad * block) : new Float64Array(buf, xBase, nPad * block);
    X.fill(0);
    const tile = f32 ? kernel.gramF32 : kernel.gramF64;
    const gstride = nPad * 8;
    for (let k0 = 0; k0 < len; k0 += block) {
      const k1 = Math.min(len, k0 + block);
      const kLen = k1 - k0;
      const kPad = Math.ceil(kLen / 4) * 4;
      for (let r = 0; r < n; r++) {
        const src = (rows[r] as Vec).subarray(k0, k1);
        X.set(src as never, r * block);
        if (kPad > kLen) X.fill(0, r * block + kLen, r * block + kPad);
      }
      const kbytes = kPad * el;
      for (let i = 0; i < nPad; i += TILE_I) {
        for (let j = i; j < nPad; j += TILE_J) {
          tile(xBase + i * stride, xBase + j * stride, stride, kbytes, (i * nPad + j) * 8, gstride);
        }
      }
    }
    // Fold the padded tile matrix (upper triangle is authoritative) into the running sum.
    const g = this.g;
    for (let i = 0; i < n; i++) {
      for (let j = i; j < n; j++) {
        const v = G[i * nPad + j] as number;
        g[i * n + j] = (g[i * n + j] as number) + v;
      }
    }
    this.chain += Math.ceil(Math.min(len, block) / 4) + Math.ceil(len / block) + 1;
  }

  private addScalar(rows: readonly Vec[], len: number): void {
    const { n, g } = this;
    for (let i = 0; i < n; i++) {
      const a = rows[i] as Vec;
      for (let j = i; j < n; j++) {
        const b = rows[j] as Vec;
        let s = 0;
        for (let k = 0; k < len; k++) s += (a[k] as number) * (b[k] as number);
        g[i * n + j] = (g[i * n + j] as number) + s;
      }
    }
    this.chain += len + 1;
  }

  /** The Gram matrix so far (upper triangle filled; symmetric copy). */
  gram(): Float64Array {
    const { n } = this;
    const out = new Float64Array(this.g);
    for (let i = 0; i < n; i++) for (let j = 0; j < i; j++) out[i * n + j] = out[j * n + i] as number;
    return out;
  }

  /**
   * Squared distances, plus the pairs whose Gram-form error bound is too loose: the caller must
   * recompute those directly (`directSquaredDistance`) and patch them in.
   */
  distances(): { matrix: DistanceMatrix; recompute: [number, number][] } {
    const { n, g } = this;
    const d2 = new Float64Array(n * n);
    const nonFinite: boolean[] = [];
    for (let i = 0; i < n; i++) nonFinite.push(!Number.isFinite(g[i * n + i] as number));
    const gamma = (this.chain + 4) * EPS;
    const recompute: [number, number][] = [];
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        let v: number;
        if (nonFinite[i] || nonFinite[j]) v = Infinity;
        else {
          const gii = g[i * n + i] as number;
          const gjj = g[j * n + j] as number;
          const gij = g[i * n + j] as number;
          v = gii + gjj - 2 * gij;
          if (!Number.isFinite(v)) v = Infinity;
          else {
            const bound = 2 * gamma * (gii + gjj + 2 * Math.abs(gij));
            if (!(v > 0) || bound > TARGET * v) recompute.push([i, j]);
            if (v < 0) v = 0;
          }
        }
        d2[i * n + j] = v;
        d2[j * n + i] = v;
      }
      if (nonFinite[i]) d2[i * n + i] = Infinity;
    }
    return { matrix: { n, d2, nonFinite }, recompute };
  }
}

/** Σ (aₖ − bₖ)² in float64 (exact differences for float32 inputs), +Infinity if not finite. */
export function directSquaredDistance(a: Vec, b: Vec): number {
  let s = 0;
  const len = a.length;
  for (let k = 0; k < len; k++) {
    const t = (a[k] as number) - (b[k] as number);
    s += t * t;
  }
  return Number.isFinite(s) ? s : Infinity;
}

/** Pairwise squared distances of in-memory updates (all the same length and float kind). */
export function pairwiseSquaredDistances(
  rows: readonly Vec[],
  opts: { kernel?: Kernel | null; pool?: GramPool | null; poolMinRows?: number } = {},
): DistanceMatrix {
  const acc = new GramAccumulator(rows.length, opts);
  acc.add(rows);
  const { matrix, recompute } = acc.distances();
  for (const [i, j] of recompute) {
    const v = directSquaredDistance(rows[i] as Vec, rows[j] as Vec);
    matrix.d2[i * matrix.n + j] = v;
    matrix.d2[j * matrix.n + i] = v;
  }
  return matrix;
}

/** Builds a DistanceMatrix from explicit values (tests, or distances computed elsewhere). */
export function distanceMatrixFrom(d2: readonly (readonly number[])[]): DistanceMatrix {
  const n = d2.length;
  const out = new Float64Array(n * n);
  const nonFinite: boolean[] = [];
  for (let i = 0; i < n; i++) {
    nonFinite.push(false);
    for (let j = 0; j < n; j++) {
      const v = d2[i]?.[j] ?? NaN;
      out[i * n + j] = Number.isFinite(v) ? v : Infinity;
    }
  }
  return { n, d2: out, nonFinite };
}
