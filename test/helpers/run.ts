import type { Command } from '../../src/commands/types.js';
import { runCommand } from '../../src/run-command.js';
import type { TestCtx } from './ctx.js';

/** Runs a command module as the CLI would (zod-validated raw options), capturing output. */
export async function runCli(
  load: () => Promise<{ default: unknown }>,
  raw: Record<string, unknown>,
  ctx: TestCtx,
): Promise<{ code: number; stdout: string; stderr: string; json: unknown }> {
  const before = ctx.stdout.chunks.length;
  const code = await runCommand(load as () => Promise<{ default: Command<never, unknown> }>, raw, ctx);
  const stdout = ctx.stdout.chunks.slice(before).join('');
  let json: unknown;
  if (raw.json === true) json = JSON.parse(stdout);
  return { code, stdout, stderr: ctx.stderr.text, json };
}
