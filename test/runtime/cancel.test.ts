import { describe, expect, it } from 'vitest';
import { CancelledError, ExitCode } from '../../src/errors.js';
import { checkpoint, untilCancelled } from '../../src/runtime/cancel.js';

describe('checkpoint: a long synchronous loop sees the abort signal', () => {
  it('stops a loop whose abort arrives from a timer (which only runs when the loop yields)', async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 0);
    const cp = checkpoint(controller.signal, { intervalMs: 1, what: 'loop cancelled' });
    const limit = 1e10;
    let i = 0;
    const run = async (): Promise<void> => {
      for (; i < limit; i++) {
        if (cp.due()) await cp.yield();
      }
    };
    const err = await run().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CancelledError);
    expect((err as CancelledError).exitCode).toBe(ExitCode.cancelled);
    expect((err as CancelledError).message).toBe('loop cancelled');
    expect(i).toBeLessThan(limit);
  });

  it('yields only when due, by the clock it is given', async () => {
    let t = 0;
    const cp = checkpoint(new AbortController().signal, { intervalMs: 10, now: () => t });
    expect(cp.due()).toBe(false);
    t = 9;
    expect(cp.due()).toBe(false);
    t = 10;
    expect(cp.due()).toBe(true);
    await cp();
    expect(cp.due()).toBe(false);
  });

  it('`await cp()` throws once the signal has fired, due or not', async () => {
    const controller = new AbortController();
    const cp = checkpoint(controller.signal, { intervalMs: 1e9 });
    await expect(cp()).resolves.toBeUndefined();
    controller.abort();
    await expect(cp()).rejects.toBeInstanceOf(CancelledError);
    expect(() => cp.throwIfCancelled()).toThrow(CancelledError);
  });
});

describe('untilCancelled', () => {
  it('rejects a wait that never ends when the signal fires', async () => {
    const controller = new AbortController();
    const never = new Promise<string>(() => undefined);
    const p = untilCancelled(controller.signal, never, 'reading stdin cancelled');
    controller.abort();
    await expect(p).rejects.toThrow('reading stdin cancelled');
  });

  it('passes the value through when the work ends first', async () => {
    await expect(untilCancelled(new AbortController().signal, Promise.resolve(3))).resolves.toBe(3);
  });
});
