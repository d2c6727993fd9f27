import type { z } from 'zod';
import type { Ctx } from './context.js';
import type { Command } from './commands/types.js';
import { UsageError } from './errors.js';
import { writeJson } from './output/json.js';

/** Validates raw commander options with a command's schema; a failure names the flag. */
export function parseOptions<O extends z.ZodType>(cmd: { options: O }, raw: Record<string, unknown>): z.output<O> {
  const parsed = cmd.options.safeParse(raw);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const key = issue?.path[0];
  const flag = key === undefined ? 'options' : `--${String(key).replace(/[A-Z]/g, (m) => `-${m.toLowerCase()}`)}`;
  throw new UsageError(`${flag}: ${issue?.message ?? 'invalid value'}`);
}

/** Validates raw commander options with the command's schema, runs it and prints the result. */
export async function runCommand<O extends z.ZodType, R>(
  load: () => Promise<{ default: Command<O, R> }>,
  raw: Record<string, unknown>,
  ctx: Ctx,
): Promise<number> {
  const cmd = (await load()).default;
  const opts = parseOptions(cmd, raw);
  const result = await cmd.run(opts, ctx);
  const json = (raw as { json?: boolean }).json === true;
  if (json) {
    if (!cmd.streams?.(opts)) writeJson(ctx.stdout, result);
  } else if (cmd.render) {
    const text = cmd.render(result, ctx);
    if (text) ctx.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }
  return cmd.exitCode?.(result) ?? 0;
}
