import { MAX_LINE_BYTES } from './limits.js';

/**
 * How `verify` shares a memoir between threads: the file is cut into blocks at line starts, and
 * each thread (the main one included) claims the next unclaimed block when it is done with one,
 * so a thread that starts late or runs slowly (a busy core, a cold JIT) reads less instead of
 * holding the others up. The claims are one shared Int32 per block; a thread claims by
 * compare-and-swap, so each block has exactly one reader.
 */

/** The main thread's id in the claims table (workers are 2, 3, …). */
export const MAIN_THREAD = 1;

/** Claims the first unclaimed block at or after `from` for `id`: its index, or -1 when none is left. */
export function claimBlock(owners: Int32Array, from: number, id: number): number {
  for (let k = Math.max(0, from); k < owners.length; k++) if (Atomics.compareExchange(owners, k, 0, id) === 0) return k;
  return -1;
}

/**
 * Block size for `threads` threads: about eight blocks per thread (a late thread's share is taken
 * by the others a block at a time), between 1 MiB and 8 MiB; smaller files get four per thread.
 */
export function blockBytes(size: number, threads: number): number {
  return Math.max(1, Math.min(8 << 20, Math.max(Math.min(MAX_LINE_BYTES, size / (threads * 4)), size / (threads * 8))));
}
