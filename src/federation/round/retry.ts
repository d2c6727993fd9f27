/**
 * Riding out a council that is slow, down or restarting: a call that fails for the network (or a
 * 5xx/503 the client's own quick retries did not get past) is tried again with exponential
 * backoff — 1 s, 2 s, 4 s … at most 30 s apart — until it succeeds or `retryForMs` is used up.
 * The budget is the command's, not each call's: the time every failed attempt took (a silent
 * council's request deadline included) and every backoff are charged to one `spent` account
 * shared by the calls of a round, so a council that keeps failing gives the whole command up
 * after `retryForMs` plus at most one request deadline.
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
  /** Time charged so far to the budget (shared by every call of one command). */
  spent?: { ms: number };
}

/** A failure worth trying again: the network, or the council answering 5xx / 429. */
export function isTransient(err: unknown): boolean {
  if (err instanceof CouncilRequestError) return err.status >= 500 || err.status === 429;
  return err instanceof KouraiError && err.exitCode === ExitCode.network && err.code === 'network';
}

export async function withRetry<T>(what: string, fn: () => Promise<T>, p: RetryPolicy): Promise<T> {
  const spent = p.spent ?? { ms: 0 };
  for (let attempt = 1; ; attempt++) {
    if (p.signal?.aborted) throw new CancelledError(`cancelled while ${what}`);
    // An attempt's own duration is real time (a silent council's request deadline is not simulated).
    const began = performance.now();
    try {
      return await fn();
    } catch (err) {
      if (p.signal?.aborted) throw new CancelledError(`cancelled while ${what}`);
      if (!isTransient(err)) throw err;
      spent.ms += Math.max(0, performance.now() - began);
      const wait = Math.min(30_000, 1000 * 2 ** (attempt - 1));
      if (spent.ms + wait > p.retryForMs) throw err;
      p.onRetry?.(what, err as Error, wait, attempt);
      const slept = p.now();
      await p.sleep(wait, p.signal);
      spent.ms += Math.max(0, p.now() - slept);
    }
  }
}
