import type { z } from 'zod';
import type { Ctx } from '../context.js';

/**
 * A command: an options schema, `run` returning a typed result, and a text renderer.
 * Output modes (one convention for every command, see run-command.ts):
 *   human    `render(result)` on stdout;
 *   --json   the result as one JSON document;
 *   --ndjson a stream of JSON records, one a line, written by the command itself while it runs.
 */
export interface Command<O extends z.ZodType, R> {
  options: O;
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

export function defineCommand<O extends z.ZodType, R>(c: Command<O, R>): Command<O, R> {
  return c;
}
