import type { Kernel } from './simd-kernel.js';
import type { Vec } from './vec.js';

/**
 * Sorting every coordinate's n values at once, for the coordinate-wise rules (median, trimmed
 * mean, Bulyan's second stage).
 *
 * Instead of gathering one coordinate's n values and sorting them (a branchy loop per
 * coordinate), a block of coordinates of every row is copied into WebAssembly memory, one row
 * after the other, and a Batcher odd–even merge-sort network is applied "vertically": each
 * comparator (i, j) is a SIMD min/max of row i against row j over the whole block. Afterwards
 * row r of the block holds, for every coordinate, the value of rank r.
 */

/**
 * Batcher's odd–even merge sort comparators for n inputs: the network for the next power of two
 * with every comparator that touches a padding position dropped (padding would hold +∞, which
 * never moves, so the pruned network still sorts). Pairs (i, j) with i < j, flattened.
 */
export function batcherNetwork(n: number): Int32Array {
  const out: number[] = [];
  let N = 1;
  while (N < n) N <<= 1;
  for (let p = 1; p < N; p <<= 1) {
    for (let k = p; k >= 1; k >>= 1) {
      for (let j = k % p; j <= N - 1 - k; j += 2 * k) {
        for (let i = 0; i <= Math.min(k - 1, N - j - k - 1); i++) {
          if (Math.floor((i + j) / (2 * p)) === Math.floor((i + j + k) / (2 * p))) {
            const a = i + j;
            const b = i + j + k;
            if (b < n) out.push(a, b);
          }
        }
      }
    }
  }
  return Int32Array.from(out);
}

/** Block of sorted columns: `rank[r][c]` is the value of rank r of coordinate k0 + c. */
export interface SortedBlock {
  rank: (Float32Array | Float64Array)[];
  length: number;
}

/**
 * Sorts the columns of m rows block by block. One instance per call site (it owns a region of the
 * kernel's memory); `each` hands out the sorted blocks in order.
 */
export class ColumnSorter {
  private readonly network: Int32Array;
  constructor(
    private readonly kernel: Kernel,
    private readonly m: number,
  ) {
    this.network = batcherNetwork(m);
  }

  /** Calls `visit(block, k0)` for consecutive blocks covering coordinates [0, len) of `rows`. */
  each(rows: readonly Vec[], len: number, visit: (block: SortedBlock, k0: number) => void): void {
    const { m, kernel, network } = this;
    if (m === 0 || len === 0) return;
    const f32 = rows[0] instanceof Float32Array;
    const el = f32 ? 4 : 8;
    // About 256 KiB per block: the m rows stay in L2 while the network sweeps them.
    const block = Math.max(16, Math.min(8192, Math.floor(262144 / (m * el) / 16) * 16));
    const stride = block * el;
    kernel.ensure(m * stride);
    const buf = kernel.memory.buffer;
    const view = f32 ? new Float32Array(buf, 0, m * block) : new Float64Array(buf, 0, m * block);
    const rank = Array.from({ length: m }, (_, r) => view.subarray(r * block, (r + 1) * block));
    const cmpx = f32 ? kernel.cmpxF32 : kernel.cmpxF64;
    for (let k0 = 0; k0 < len; k0 += block) {
      const kLen = Math.min(block, len - k0);
      const padded = Math.ceil((kLen * el) / 16) * 16;
      for (let r = 0; r < m; r++) {
        view.set((rows[r] as Vec).subarray(k0, k0 + kLen) as never, r * block);
        if (padded > kLen * el) view.fill(0, r * block + kLen, r * block + padded / el);
      }
      for (let c = 0; c < network.length; c += 2)
        cmpx((network[c] as number) * stride, (network[c + 1] as number) * stride, padded);
      visit({ rank, length: kLen }, k0);
    }
  }
}
