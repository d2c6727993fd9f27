/**
 * Riding out a council that is slow, down or restarting: a call that fails for the network (or a
 * 5xx/503 the client's own quick retries did not get past) is tried again with exponential
 * backoff — 1 s, 2 s, 4 s … at most 30 s apart — until it succeeds or `retryForMs` has passed.
 * Every council call of a round is idempotent (submissions replay to the same receipt, seals are
 * idempotent, the rest are reads), so trying again is always safe. Refusals (4xx) are not retried.
 */
import { CancelledError, ExitCode, KouraiError } from '../../errors.js';
import { CouncilRequestError } from '../council-client.js';

export interface RetryPolicy {
  /** Give up after this long (ms) without success. */
  retryForMs: number;
  now: () => number;
  /** Abortable sleep (injected: a simulation advances a virtual clock instead of waiting). */
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  signal?: AbortSignal;
  onRetry?: (what: string, err: Error, inMs: number, attempt: number) => void;
}

/** A failure worth trying again: the network, or the council answering 5xx / 429. */
export function isTransient(err: unknown): boolean {
  if (err instanceof CouncilRequestError) return err.status >= 500 || err.status === 429;
  return err instanceof KouraiError && err.exitCode === ExitCode.network && err.code === 'network';
}

export async function withRetry<T>(what: string, fn: () => Promise<T>, p: RetryPolicy): Promise<T> {
  const start = p.now();
  for (let attempt = 1; ; attempt++) {
    if (p.signal?.aborted) throw new CancelledError(`cancelled while ${what}`);
    try {
      return await fn();
    } catch (err) {
      if (p.signal?.aborted) throw new CancelledError(`cancelled while ${what}`);
      if (!isTransient(err)) throw err;
      const wait = Math.min(30_000, 1000 * 2 ** (attempt - 1));
      if (p.now() - start + wait > p.retryForMs) throw err;
      p.onRetry?.(what, err as Error, wait, attempt);
      await p.sleep(wait, p.signal);
    }
  }
}

