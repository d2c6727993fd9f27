import type { z } from 'zod';
import type { Ctx } from './context.js';
import { optionError } from './commands/option-errors.js';
import { isLazyOptions, type Command } from './commands/types.js';
import { CancelledError, UsageError } from './errors.js';
import { writeJson } from './output/json.js';
import { writeText } from './output/notice.js';

/**
 * Any command's options: lazy options (types.ts) take their fast path when it applies and load
 * their schema otherwise; a plain schema parses as `parseOptions`.
 */
export async function resolveOptions<O extends z.ZodType>(
  cmd: Pick<Command<O, unknown>, 'options'>,
  raw: Record<string, unknown>,
): Promise<z.output<O>> {
  const o = cmd.options;
  if (isLazyOptions(o)) return o.fast(raw) ?? parseOptions({ options: await o.schema() }, raw);
  return parseOptions({ options: o }, raw);
}

/** Validates raw commander options with a command's schema; a failure is one plain line naming the flag. */
export function parseOptions<O extends z.ZodType>(cmd: { options: O }, raw: Record<string, unknown>): z.output<O> {
  const parsed = cmd.options.safeParse(raw, { error: (iss) => optionError(iss, raw) });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const key = issue?.path[0];
  const flag = key === undefined ? 'options' : `--${String(key).replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`)}`;
  throw new UsageError(`${flag}: ${issue?.message ?? 'invalid value'}`);
}

export type OutputMode = 'human' | 'json' | 'ndjson';

/**
 * The output convention: `--json` is one JSON document; `--ndjson` a stream of JSON records
 * (a command that only streams also takes `--json` for it, see cli.ts). In both, stdout carries
 * nothing else; summaries and notes go to stderr.
 */
export function outputMode<O extends z.ZodType>(
  cmd: Pick<Command<O, unknown>, 'streams'>,
  opts: z.output<O>,
  raw: Record<string, unknown>,
): OutputMode {
  if (raw.ndjson === true || (raw.json === true && cmd.streams?.(opts) === true)) return 'ndjson';
  return raw.json === true ? 'json' : 'human';
}

/**
 * Validates raw commander options with the command's schema, runs it and prints the result.
 * Ctrl-C during the run (ctx.signal) is exit 130 even if the command finished its work: the
 * operator asked it to stop, and a result printed after that would be read as success.
 */
export async function runCommand<O extends z.ZodType, R>(
  load: () => Promise<{ default: Command<O, R> }>,
  raw: Record<string, unknown>,
  ctx: Ctx,
  onLoaded?: (cmd: Command<O, R>) => void,
): Promise<number> {
  const cmd = (await load()).default;
  onLoaded?.(cmd);
  const opts = await resolveOptions(cmd, raw);
  if (ctx.signal.aborted) throw new CancelledError();
  const result = await cmd.run(opts, ctx);
  if (ctx.signal.aborted && !cmd.service) throw new CancelledError();
  const mode = outputMode(cmd, opts, raw);
  if (mode === 'json') writeJson(ctx.stdout, result);
  else if (mode === 'human' && cmd.render) writeText(ctx, cmd.render(result, ctx));
  return cmd.exitCode?.(result) ?? 0;
}
