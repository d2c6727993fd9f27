import { CancelledError } from '../errors.js';

/**
 * Cooperative cancellation for long synchronous work. Node runs a SIGINT handler only when the
 * event loop is free, so a loop that never yields cannot see Ctrl-C: it must give the loop a
 * turn now and then. A checkpoint does that at most every `intervalMs` (50 ms: Ctrl-C is seen
 * well within a second, and a million-row loop yields a few hundred times), then throws
 * `CancelledError` (exit 130) if `ctx.signal` fired.
 *
 *   const cp = checkpoint(ctx.signal, { what: 'indexing cancelled' });
 *   for (const row of rows) {
 *     work(row);
 *     if (cp.due()) await cp.yield();   // hot loops: a clock read per row, nothing more
 *   }
 *   // or simply `await cp()` per batch
 *
 * Work between two checkpoints must leave a consistent state (one transaction per batch, a
 * temporary file renamed at the end): cancelling there is then "nothing half-written".
 */
export interface Checkpoint {
  /** Yields if it is time to, then throws CancelledError if cancelled. */
  (): Promise<void>;
  /** True when `intervalMs` has passed since the last yield (cheap: one clock read). */
  due(): boolean;
  /** Yields to the event loop now, then throws CancelledError if cancelled. */
  yield(): Promise<void>;
  /** Throws CancelledError if the signal has fired (never yields: use between steps). */
  throwIfCancelled(): void;
}

export function checkpoint(
  signal: AbortSignal,
  opts: { intervalMs?: number; what?: string; now?: () => number } = {},
): Checkpoint {
  const interval = opts.intervalMs ?? 50;
  const now = opts.now ?? (() => performance.now());
  let last = now();
  const throwIfCancelled = (): void => {
    if (signal.aborted) throw new CancelledError(opts.what ?? 'cancelled');
  };
  const pause = async (): Promise<void> => {
    await yieldToEventLoop();
    last = now();
    throwIfCancelled();
  };
  const due = (): boolean => now() - last >= interval;
  const cp = (async () => {
    if (due()) await pause();
    else throwIfCancelled();
  }) as Checkpoint;
  cp.due = due;
  cp.yield = pause;
  cp.throwIfCancelled = throwIfCancelled;
  return cp;
}

/** One turn of the event loop (signal handlers, timers and I/O callbacks run). */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Throws CancelledError when the signal has fired. */
export function throwIfCancelled(signal: AbortSignal, what = 'cancelled'): void {
  if (signal.aborted) throw new CancelledError(what);
}

/**
 * Waits for a promise unless the signal fires first (then rejects with CancelledError): for
 * awaits that do not take a signal themselves, such as reading stdin.
 */
export function untilCancelled<T>(signal: AbortSignal, work: Promise<T>, what = 'cancelled'): Promise<T> {
  if (signal.aborted) return Promise.reject(new CancelledError(what));
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(new CancelledError(what));
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e instanceof Error ? e : new Error(String(e)));
      },
    );
  });
}

/** setTimeout as a promise, rejecting with CancelledError (and clearing the timer) when the signal fires. */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new CancelledError());
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = (): void => {
      clearTimeout(t);
      reject(new CancelledError());
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
