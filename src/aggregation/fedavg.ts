import type { RuleResult } from './rule-result.js';
import type { GramPool } from './gram-pool.js';
import { AXPY_ROWS, instantiateKernel, type Kernel } from './simd-kernel.js';
import { AggregationError, commonLength, finiteIndices, normaliseWeights, type Vec } from './vec.js';

/**
 * FedAvg (McMahan et al. 2017): the weighted mean of the updates, Σ pᵢ xᵢ with Σ pᵢ = 1.
 * Weights are uniform unless given (the council uses forges' noised sample counts only when its
 * operator asks for them: exact counts leak). Not robust: one Byzantine update moves it anywhere.
 */
export function fedavg(
  rows: readonly Vec[],
  weights?: readonly number[],
  opts: { kernel?: Kernel | null; pool?: GramPool | null } = {},
): RuleResult {
  const d = commonLength(rows, 'fedavg');
  const all = rows.map((_, i) => i);
  const w = normaliseWeights(rows.length, weights, 'fedavg');
  const out = new Float64Array(d);
  const kernel =
    opts.kernel === undefined
      ? d >= SIMD_MIN && rows[0] instanceof Float32Array
        ? instantiateKernel()
        : null
      : opts.kernel;
  weightedMeanInto(out, rows, all, w, kernel, opts.pool ?? null);
  // A non-finite input always makes its coordinates non-finite (weights are finite and > 0), so
  // one cheap check on the output tells whether any update must be dropped.
  if (allFinite(out)) return { aggregate: out, used: all, nonFinite: [] };
  const { finite, nonFinite } = finiteIndices(rows);
  if (finite.length === 0) throw new AggregationError('fedavg: every update contains NaN or Inf', 'no_finite_updates');
  const wf = normaliseWeights(
    finite.length,
    finite.map((i) => (weights ? (weights[i] as number) : 1)),
    'fedavg',
  );
  weightedMeanInto(out.fill(0), rows, finite, wf, kernel, opts.pool ?? null);
  return { aggregate: out, used: finite, nonFinite };
}

/** Below this many coordinates the scalar loop is as fast as copying into WebAssembly memory. */
const SIMD_MIN = 4096;
/** Below this many coordinates one thread is faster than handing blocks to the pool. */
const POOL_MIN = 65536;
/** Coordinates per block: the float64 accumulator (32 KiB) and eight float32 rows stay in L1/L2. */
const AXPY_BLOCK = 4096;

/**
 * out[k] += Σⱼ w[j] · rows[indices[j]][k] (w aligned with indices). The hot loop of FedAvg and of
 * Multi-Krum's mean: four updates per pass over `out`, so the accumulator is read and written a
 * quarter as often. With a kernel and float32 rows, block by block in WebAssembly SIMD (each
 * block of eight rows is copied in — a memcpy — and accumulated in float64, eight rows per pass),
 * or on every core when a pool is passed explicitly (`fedavg(rows, w, { pool })`: it pays only
 * when a core is idle — on the shared benchmark machine it ranged from 1.4× faster to 2× slower,
 * so the council does not use it). The sums are the same, in the same order, on every path.
 */
export function weightedMeanInto(
  out: Float64Array,
  rows: readonly Vec[],
  indices: readonly number[],
  w: Float64Array,
  kernel: Kernel | null = null,
  pool: GramPool | null = null,
): void {
  const d = out.length;
  if (pool && d >= POOL_MIN && indices.length > 0 && indices.every((i) => rows[i] instanceof Float32Array)) {
    pool.weightedSum(
      indices.map((i) => rows[i] as Float32Array),
      w,
      out,
    );
    return;
  }
  if (kernel && d >= SIMD_MIN && indices.length > 0 && rows[indices[0] as number] instanceof Float32Array) {
    simdWeightedMean(out, rows, indices, w, kernel);
    return;
  }
  let j = 0;
  for (; j + 4 <= indices.length; j += 4) {
    const r0 = rows[indices[j] as number] as Vec;
    const r1 = rows[indices[j + 1] as number] as Vec;
    const r2 = rows[indices[j + 2] as number] as Vec;
    const r3 = rows[indices[j + 3] as number] as Vec;
    const w0 = w[j] as number;
    const w1 = w[j + 1] as number;
    const w2 = w[j + 2] as number;
    const w3 = w[j + 3] as number;
    for (let k = 0; k < d; k++) {
      out[k] =
        (out[k] as number) +
        w0 * (r0[k] as number) +
        w1 * (r1[k] as number) +
        w2 * (r2[k] as number) +
        w3 * (r3[k] as number);
    }
  }
  for (; j < indices.length; j++) {
    const r = rows[indices[j] as number] as Vec;
    const wj = w[j] as number;
    for (let k = 0; k < d; k++) out[k] = (out[k] as number) + wj * (r[k] as number);
  }
}

export function allFinite(v: Float64Array): boolean {
  let s = 0;
  for (let k = 0; k < v.length; k++) s += (v[k] as number) * 0;
  return s === 0;
}

function simdWeightedMean(
  out: Float64Array,
  rows: readonly Vec[],
  indices: readonly number[],
  w: Float64Array,
  kernel: Kernel,
): void {
  const B = AXPY_BLOCK;
  const R = AXPY_ROWS;
  const accBase = 0;
  const xBase = B * 8;
  const zeroBase = xBase + R * B * 4;
  kernel.ensure(zeroBase + B * 4);
  const buf = kernel.memory.buffer;
  const acc = new Float64Array(buf, accBase, B);
  const xs = Array.from({ length: R }, (_, j) => new Float32Array(buf, xBase + j * B * 4, B));
  new Float32Array(buf, zeroBase, B).fill(0);
  const m = indices.length;
  const d = out.length;
  const args = new Array<number>(2 * R + 2);
  for (let k0 = 0; k0 < d; k0 += B) {
    const len = Math.min(B, d - k0);
    const lenPad = Math.ceil(len / 4) * 4;
    acc.set(out.subarray(k0, k0 + len));
    acc.fill(0, len, lenPad);
    for (let j = 0; j < m; j += R) {
      args[0] = accBase;
      for (let t = 0; t < R; t++) {
        if (j + t < m) {
          const x = xs[t] as Float32Array;
          x.set((rows[indices[j + t] as number] as Float32Array).subarray(k0, k0 + len));
          x.fill(0, len, lenPad);
          args[1 + t] = xBase + t * B * 4;
          args[1 + R + t] = w[j + t] as number;
        } else {
          args[1 + t] = zeroBase;
          args[1 + R + t] = 0;
        }
      }
      args[2 * R + 1] = lenPad * 4;
      kernel.axpy8F32(...(args as [number, ...number[]]));
    }
    out.set(acc.subarray(0, len), k0);
  }
}
