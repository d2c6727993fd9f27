import { randomBytes } from 'node:crypto';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** A writable stream as commands see it (process.stdout or a test buffer). */
export interface OutStream {
  write(chunk: string): boolean;
  isTTY?: boolean;
  columns?: number;
  rows?: number;
}

/**
 * Everything a command touches from the outside world. Commands never read process globals,
 * so tests can call `run(opts, ctx)` in-process with a temporary KOURAI_HOME.
 */
export interface Ctx {
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };
  stdout: OutStream;
  stderr: OutStream;
  /** True when prompts may be shown: not CI, stdin and stdout are TTYs, and no --no-input. */
  interactive: boolean;
  /** Colour level for the one Chalk instance (0 = none). */
  colorLevel: 0 | 1 | 2 | 3;
  now: () => Date;
  /** Cryptographically secure bytes: ids, tokens and noise use this, never Math.random. */
  secureRandom: (n: number) => Buffer;
  /**
   * Fired on Ctrl-C (SIGINT) or SIGTERM. Long work honours it within a second: loops yield with
   * `checkpoint(ctx.signal)` (runtime/cancel.ts) and stop with CancelledError (exit 130).
   */
  signal: AbortSignal;
  /** --quiet: no progress and no notes on stderr (warnings and errors still print). */
  quiet?: boolean;
}

export function kouraiHome(ctx: Pick<Ctx, 'env' | 'cwd'>): string {
  const fromEnv = ctx.env.KOURAI_HOME;
  if (fromEnv && fromEnv.trim() !== '') return resolve(ctx.cwd, fromEnv);
  return join(ctx.env.HOME ?? homedir(), '.kourai_khryseai');
}

export function isCI(env: Ctx['env']): boolean {
  const ci = env.CI;
  return ci !== undefined && ci !== '' && ci !== '0' && ci.toLowerCase() !== 'false';
}

export function detectColorLevel(env: Ctx['env'], stdoutIsTTY: boolean, noColorFlag: boolean): 0 | 1 | 2 | 3 {
  const force = env.FORCE_COLOR;
  if (force !== undefined && force !== '' && force !== '0' && force !== 'false') {
    const n = Number(force);
    return n >= 1 && n <= 3 ? (n as 1 | 2 | 3) : 1;
  }
  if (noColorFlag || (env.NO_COLOR !== undefined && env.NO_COLOR !== '') || !stdoutIsTTY) return 0;
  if (env.COLORTERM === 'truecolor' || env.COLORTERM === '24bit') return 3;
  return env.TERM?.includes('256') ? 2 : 1;
}

/** The context of a real process. Only main.ts calls this. */
export function processContext(opts: {
  noInput: boolean;
  noColor: boolean;
  quiet?: boolean;
  signal: AbortSignal;
}): Ctx {
  const stdout = process.stdout as unknown as OutStream;
  const interactive =
    !opts.noInput && !isCI(process.env) && Boolean(process.stdin.isTTY) && Boolean(process.stdout.isTTY);
  return {
    cwd: process.cwd(),
    env: process.env,
    stdin: process.stdin,
    stdout,
    stderr: process.stderr as unknown as OutStream,
    interactive,
    colorLevel: detectColorLevel(process.env, Boolean(process.stdout.isTTY), opts.noColor),
    now: () => new Date(),
    secureRandom: (n) => randomBytes(n),
    signal: opts.signal,
    quiet: opts.quiet ?? false,
  };
}
