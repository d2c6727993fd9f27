import { AGENTS } from '../memoir/format/agents.js';
import { ENTRY_TYPES, SOURCES } from '../memoir/format/sources.js';
import { UsageError } from '../errors.js';
import type { EntryFilter } from '../memoir-index/memoir-index.js';
import { optionalString, optionalTime, oneOf, stringList, type Maybe } from './fast-flags.js';

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

/** `filterShape` without zod (fast-flags.ts): each value as the schema gives it, or UNSURE. */
export function fastFilterFlags(raw: Readonly<Record<string, unknown>>): {
  [K in keyof Required<FilterFlags>]: Maybe<FilterFlags[K]>;
} {
  return {
    agent: stringList(raw.agent, agents),
    source: stringList(raw.source, sources),
    type: stringList(raw.type, types),
    split: oneOf(raw.split, ['shared', 'private'] as const),
    scene: optionalString(raw.scene),
    since: optionalTime(raw.since),
    until: optionalTime(raw.until),
    text: optionalString(raw.text),
  };
}
