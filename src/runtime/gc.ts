import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection on demand, for long streaming jobs that must stay in bounded memory
 * (verify of a million entries): V8 otherwise lets short-lived garbage pile up in old space
 * before its first major GC. Returns a no-op if the runtime refuses.
 */
export function collector(): () => void {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as unknown;
    if (typeof gc === 'function') return gc as () => void;
  } catch {
    // not available: memory is then bounded only by V8's own heuristics
  }
  return () => undefined;
}

/**
 * A check for long streaming jobs, called every few thousand items: a full collection only when the
 * heap and array buffers grew by more than `slack` bytes since the last one. A collection costs
 * ~10-20 ms whatever the heap's size, so collecting on a fixed schedule cost `verify` ~100 ms per
 * 400k entries while its heap stayed near 10 MB. The collector is set up at the first need.
 */
export function collectWhenGrown(slack: number): () => void {
  let gc: (() => void) | undefined;
  const used = (): number => {
    const m = process.memoryUsage();
    return m.heapUsed + m.arrayBuffers;
  };
  let floor = used();
  return () => {
    if (used() - floor <= slack) return;
    gc ??= collector();
    gc();
    floor = used();
  };
}
