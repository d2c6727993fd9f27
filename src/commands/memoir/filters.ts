import { z } from 'zod';
import { AGENTS } from '../../memoir/agents.js';
import { ENTRY_TYPES, SOURCES } from '../../memoir/sources.js';
import { UsageError } from '../../errors.js';
import type { EntryFilter } from '../../store/memoir-index.js';

const listOf = <T extends readonly [string, ...string[]]>(values: T, flag: string) =>
  z
    .array(z.string())
    .default([])
    .transform((xs, ctx) => {
      for (const x of xs) {
        if (!(values as readonly string[]).includes(x)) {
          ctx.addIssue({ code: 'custom', message: `unknown ${flag.replace('--', '')} "${x}"; expected one of: ${values.join(', ')}` });
          return z.NEVER;
        }
      }
      return xs;
    });

const time = (flag: string) =>
  z
    .string()
    .optional()
    .transform((s, ctx) => {
      if (s === undefined) return undefined;
      const d = new Date(s);
      if (Number.isNaN(d.getTime())) {
        ctx.addIssue({ code: 'custom', message: `${flag} "${s}" is not a date or time (use ISO 8601, e.g. 2026-11-22 or 2026-11-22T10:00:00Z)` });
        return z.NEVER;
      }
      return d.toISOString();
    });

/** Filter flags shared by inspect, search and replay. */
export const filterShape = {
  agent: listOf(AGENTS as unknown as readonly [string, ...string[]], '--agent'),
  source: listOf(SOURCES, '--source'),
  type: listOf(ENTRY_TYPES, '--type'),
  split: z.enum(['shared', 'private']).optional(),
  scene: z.string().optional(),
  since: time('--since'),
  until: time('--until'),
  text: z.string().optional(),
};

export function toFilter(o: { agent: string[]; source: string[]; type: string[]; split?: 'shared' | 'private' | undefined; scene?: string | undefined; since?: string | undefined; until?: string | undefined; text?: string | undefined }): EntryFilter {
  if (o.text !== undefined && o.text.trim() === '') throw new UsageError('--text needs at least one word');
  return {
    agents: o.agent,
    sources: o.source,
    types: o.type,
    ...(o.split ? { split: o.split } : {}),
    ...(o.scene ? { scenePrefix: o.scene } : {}),
    ...(o.since ? { since: o.since } : {}),
    ...(o.until ? { until: o.until } : {}),
    ...(o.text ? { text: o.text } : {}),
  };
}
