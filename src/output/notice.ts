import type { Ctx } from '../context.js';
import { colors } from './color.js';
import { terminalSafe } from './sanitize.js';

type NoticeCtx = Pick<Ctx, 'stderr' | 'colorLevel' | 'quiet'>;

/**
 * Lines for the operator on stderr that are not errors: `note: …` (what kourai did on its own,
 * silenced by --quiet) and `warning: …` (something to look at; always shown). Errors are
 * printed by main.ts alone, as `kourai: …`. Text passes through the terminal sanitiser.
 */
export function note(ctx: NoticeCtx, text: string): void {
  if (ctx.quiet) return;
  writeNotice(ctx, colors(ctx.colorLevel).yellow('note'), text);
}

export function warn(ctx: NoticeCtx, text: string): void {
  writeNotice(ctx, colors(ctx.colorLevel).yellow('warning'), text);
}

function writeNotice(ctx: NoticeCtx, label: string, text: string): void {
  ctx.stderr.write(terminalSafe(`${label}: ${text}\n`, ctx.colorLevel > 0));
}

/** Human text on stdout (a render, the text replay), sanitised for the terminal. */
export function writeText(ctx: Pick<Ctx, 'stdout' | 'colorLevel'>, text: string): void {
  if (text === '') return;
  ctx.stdout.write(terminalSafe(text.endsWith('\n') ? text : `${text}\n`, ctx.colorLevel > 0));
}

/** A log line on stderr as a service writes it (no label), sanitised for the terminal. */
export function logLine(ctx: Pick<Ctx, 'stderr' | 'colorLevel'>, text: string): void {
  ctx.stderr.write(terminalSafe(`${text}\n`, ctx.colorLevel > 0));
}
