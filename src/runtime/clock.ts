/**
 * Time as something passed in: the wall clock for servers, a virtual clock for simulations and
 * tests, where time is the subject and must not depend on how loaded the machine is.
 */
export interface Clock {
  now(): Date;
  /** Calls `fn` once, `ms` from now (never keeps the process alive by itself). */
  setTimer(ms: number, fn: () => void): Timer;
}

export interface Timer {
  cancel(): void;
}

function realTimer(ms: number, fn: () => void): Timer {
  const t = setTimeout(fn, Math.max(0, Math.min(2 ** 31 - 1, ms)));
  t.unref();
  return { cancel: () => clearTimeout(t) };
}

export const systemClock: Clock = { now: () => new Date(), setTimer: realTimer };

/** A clock over a `now` function (e.g. ctx.now) with real timers. */
export function clockFrom(now: () => Date): Clock {
  return { now, setTimer: realTimer };
}

/**
 * A clock that moves only when told to. `advance(ms)` moves time forward and runs every timer
 * that falls due, in order of due time, each at its own due time.
 */
export class VirtualClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start: Date | number = Date.UTC(2026, 0, 1)) {
    this.t = typeof start === 'number' ? start : start.getTime();
  }

  now(): Date {
    return new Date(this.t);
  }

  setTimer(ms: number, fn: () => void): Timer {
    const id = this.seq++;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return { cancel: () => this.timers.delete(id) };
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.timers.size;
  }

  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers)
        if (e[1].at <= end && (!next || e[1].at < next[1].at || (e[1].at === next[1].at && e[0] < next[0]))) next = e;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = end;
  }
}
