import type { z } from 'zod';
import type { Ctx } from '../context.js';

/**
 * A command: an options schema, `run` returning a typed result, and a text renderer.
 * `--json` prints the result itself (validated by `result` in tests); otherwise `render`.
 */
export interface Command<O extends z.ZodType, R> {
  options: O;
  run(opts: z.output<O>, ctx: Ctx): Promise<R>;
  render?(result: R, ctx: Ctx): string;
  /** Non-zero when the result itself is a failure (e.g. verify found problems). */
  exitCode?(result: R): number;
  /** Streaming commands write NDJSON themselves; the runner prints nothing for them in JSON mode. */
  streams?(opts: z.output<O>): boolean;
}

export function defineCommand<O extends z.ZodType, R>(c: Command<O, R>): Command<O, R> {
  return c;
}
