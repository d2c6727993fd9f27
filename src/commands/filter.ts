import { AGENTS } from '../memoir/format/agents.js';
import { ENTRY_TYPES, SOURCES } from '../memoir/format/sources.js';
import { UsageError } from '../errors.js';
import type { EntryFilter } from '../memoir-index/memoir-index.js';
import { optionalTime, stringList } from './fast-flags.js';

/**
 * The entry filter flags as commands receive them (`filterShape` in options.ts is their zod
 * schema), and the index filter they mean. No zod here: `memoir inspect` starts without it.
 */
export interface FilterFlags {
  agent: string[];
  source: string[];
  type: string[];
  split?: 'shared' | 'private' | undefined;
  scene?: string | undefined;
  since?: string | undefined;
  until?: string | undefined;
  text?: string | undefined;
}

export function toFilter(o: FilterFlags): EntryFilter {
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

const agents: ReadonlySet<string> = new Set(AGENTS);
const sources: ReadonlySet<string> = new Set(SOURCES);
const types: ReadonlySet<string> = new Set(ENTRY_TYPES);

/** The filter flags checked beyond their declaration (`filterChecks` in options.ts), without zod (fast-flags.ts). */
export const fastFilterChecks = {
  agent: (v: unknown) => stringList(v, agents),
  source: (v: unknown) => stringList(v, sources),
  type: (v: unknown) => stringList(v, types),
  since: optionalTime,
  until: optionalTime,
};
