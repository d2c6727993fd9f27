import type { z } from 'zod';
import type { Ctx } from '../context.js';

/**
 * A command: an options schema, `run` returning a typed result, and a text renderer.
 * Output modes (one convention for every command, see run-command.ts):
 *   human    `render(result)` on stdout;
 *   --json   the result as one JSON document;
 *   --ndjson a stream of JSON records, one a line, written by the command itself while it runs.
 */
export interface Command<O extends z.ZodType, R, Opts extends O | LazyOptions<O> = O | LazyOptions<O>> {
  /** The options schema, or (for commands that must start fast) a check without zod and the schema loaded on demand. */
  options: Opts;
  run(opts: z.output<O>, ctx: Ctx): Promise<R>;
  render?(result: R, ctx: Ctx): string;
  /** Non-zero when the result itself is a failure (e.g. verify found problems). */
  exitCode?(result: R): number;
  /** Whether this run streams NDJSON (its records are its output; nothing is printed after them). */
  streams?(opts: z.output<O>): boolean;
  /**
   * A service (`council serve`) runs until SIGINT/SIGTERM: the signal is its normal end (exit
   * 0), and it may take the time it needs to finish what is in flight.
   */
  service?: boolean;
}

/**
 * Options of a command on a start-up path (`memoir inspect`, `score`): importing zod costs more
 * CPU than the rest of such a run. `fast` takes the usual raw options and returns them parsed,
 * or undefined for anything it does not handle; then the zod `schema` (the schema of record, which
 * words every error) is imported and decides. A property test per command holds the two together.
 */
export interface LazyOptions<O extends z.ZodType> {
  fast(raw: Readonly<Record<string, unknown>>): z.output<O> | undefined;
  schema(): Promise<O>;
}

export function isLazyOptions<O extends z.ZodType>(o: O | LazyOptions<O>): o is LazyOptions<O> {
  return (
    typeof (o as Partial<LazyOptions<O>>).schema === 'function' &&
    typeof (o as Partial<LazyOptions<O>>).fast === 'function'
  );
}

export function defineCommand<O extends z.ZodType, R>(c: Command<O, R, O>): Command<O, R, O>;
export function defineCommand<O extends z.ZodType, R>(c: Command<O, R, LazyOptions<O>>): Command<O, R, LazyOptions<O>>;
export function defineCommand<O extends z.ZodType, R>(c: Command<O, R>): Command<O, R> {
  return c;
}
