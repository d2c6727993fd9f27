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
