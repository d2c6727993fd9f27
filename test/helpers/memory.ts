import { readFileSync } from 'node:fs';
import type { z } from 'zod';
import { isLazyOptions, type Command } from '../../src/commands/types.js';
import { resolveOptions } from '../../src/run-command.js';
import synth from '../../src/commands/memoir/synth.js';
import type { TestCtx } from './ctx.js';

/** Parses raw options with the command's own schema (defaults applied), then runs it in-process. */
export async function runCmd<O extends z.ZodType, R>(
  cmd: Command<O, R>,
  raw: Record<string, unknown>,
  ctx: TestCtx,
): Promise<R> {
  const o = cmd.options;
  return cmd.run(isLazyOptions(o) ? await resolveOptions(cmd, raw) : o.parse(raw), ctx);
}

/** Writes the sample forge (4 sessions, seed 7) into ctx's KOURAI_HOME; returns its memoir paths. */
export async function sampleForge(ctx: TestCtx): Promise<string[]> {
  const r = await runCmd(synth, {}, ctx);
  return r.memoirs;
}

/** Parsed lines of a memoir file. */
export function lines(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}
