import { MAX_LINE_BYTES } from '../format/limits.js';

/**
 * How `verify` shares a memoir between threads: the file is cut into blocks at line starts, and
 * each thread (the main one included) claims the next unclaimed block when it is done with one,
 * so a thread that starts late or runs slowly (a busy core, a cold JIT) reads less instead of
 * holding the others up. The claims are one shared Int32 per block; a thread claims by
 * compare-and-swap, so each block has exactly one reader.
 */

/** The main thread's id in the claims table (workers are 2, 3, …). */
export const MAIN_THREAD = 1;

/**
 * No thread reads a block READ_AHEAD or more past the first one not merged yet: what a thread reads
 * ahead is kept (compact chunks) until its turn, and a worker stalled on an early block (a busy
 * core) would otherwise let the others read, and keep, the rest of the file.
 */
export const READ_AHEAD = 6;

/** Claims the first unclaimed block in [from, limit) for `id`: its index, or -1 when there is none. */
export function claimBlock(owners: Int32Array, from: number, id: number, limit = owners.length): number {
  const end = Math.min(limit, owners.length);
  for (let k = Math.max(0, from); k < end; k++) if (Atomics.compareExchange(owners, k, 0, id) === 0) return k;
  return -1;
}

/** Whether some block at or after `from` is still unclaimed. */
export function unclaimedFrom(owners: Int32Array, from: number): boolean {
  for (let k = Math.max(0, from); k < owners.length; k++) if (Atomics.load(owners, k) === 0) return true;
  return false;
}

/**
 * Block size for `threads` threads: about eight blocks per thread (a late thread's share is taken
 * by the others a block at a time), between 1 MiB and 8 MiB; smaller files get four per thread.
 */
export function blockBytes(size: number, threads: number): number {
  return Math.max(1, Math.min(8 << 20, Math.max(Math.min(MAX_LINE_BYTES, size / (threads * 4)), size / (threads * 8))));
}

/**
 * Below this size the default is one thread. Each thread is its own V8 isolate: it interprets the
 * scanner cold (~25 µs a line for its first few thousand lines, ~2.5 µs warm) and compiles it
 * again on V8's helper threads, ~0.45 s of CPU per worker in all, which competes for the same two
 * cores. Measured on the 2-core machine (load ~2): 100k entries (70 MB) 0.38–0.45 s on one
 * thread vs 0.47–0.53 s on two; 200k (147 MB) even; 400k (295 MB) 1.09–1.35 s vs 0.83–1.02 s.
 * An explicit thread count (KOURAI_VERIFY_THREADS) is used for any file over MIN_SPLIT_BYTES.
 */
export const DEFAULT_SPLIT_BYTES = 256 << 20;
