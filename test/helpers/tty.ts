import { EventEmitter } from 'node:events';
import type { Ctx } from '../../src/context.js';
import { capture, testCtx, type TestCtx } from './ctx.js';

/**
 * A pretend terminal for running Ink screens in-process through a command's `run()`:
 * stdin in raw mode (keys written with `type`), stdout with a size. Ink reads stdin through
 * 'readable' + read(), as it does a real TTY.
 */
export class FakeTtyIn extends EventEmitter {
  isTTY = true;
  private queue: string[] = [];
  setRawMode(): this {
    return this;
  }
  setEncoding(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }
  resume(): this {
    return this;
  }
  pause(): this {
    return this;
  }
  read(): string | null {
    return this.queue.shift() ?? null;
  }
  /** Sends keys (as a terminal would: `\r` Enter, `\u001b[C` →, `\u0003` Ctrl-C). */
  type(keys: string): void {
    this.queue.push(keys);
    this.emit('readable');
  }
  /** Closes the input, like a terminal that went away. */
  close(): void {
    this.emit('end');
  }
  /** True once a screen listens for keys. */
  get listening(): boolean {
    return this.listenerCount('readable') > 0;
  }
}

export class FakeTtyOut extends EventEmitter {
  isTTY = true;
  text = '';
  constructor(
    public columns = 120,
    public rows = 40,
  ) {
    super();
  }
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}

export const KEY = {
  enter: '\r',
  escape: '\u001b',
  right: '\u001b[C',
  left: '\u001b[D',
  up: '\u001b[A',
  down: '\u001b[B',
  backspace: '\u007f',
  ctrlC: '\u0003',
  ctrlD: '\u0004',
} as const;

export interface TtyCtx extends TestCtx {
  tty: { stdin: FakeTtyIn; stdout: FakeTtyOut };
}

/** A context whose session is interactive, on a pretend terminal of the given size. */
export function ttyCtx(opts: { home?: string; columns?: number; rows?: number; signal?: AbortSignal } = {}): TtyCtx {
  const stdin = new FakeTtyIn();
  const stdout = new FakeTtyOut(opts.columns ?? 120, opts.rows ?? 40);
  const base = testCtx({
    ...(opts.home ? { home: opts.home } : {}),
    interactive: true,
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  return {
    ...base,
    stdin: stdin as unknown as Ctx['stdin'],
    stdout: Object.assign(stdout, { text: '' }) as unknown as TestCtx['stdout'],
    stderr: capture(),
    tty: { stdin, stdout },
  };
}

/** Polls until `cond` holds (no timing assertions: the test's own timeout bounds the wait). */
export async function until(cond: () => boolean, what = 'condition'): Promise<void> {
  for (let i = 0; ; i++) {
    if (cond()) return;
    if (i > 2000) throw new Error(`gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Lets Ink process what was typed (its input and render run on later ticks). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  await new Promise((r) => setTimeout(r, 10));
}
