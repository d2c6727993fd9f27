/**
 * The keys of a memoir line, in the order they are written: the one list every path that reads
 * or writes a line without zod takes them from (fast-validate.ts, the byte scanner, both
 * encoders, fast-input.ts; schema.ts builds its zod shapes from it too). An extension field of a
 * kind listed here is added by one row in EXTENSION_FIELDS.
 */

/** The ten upstream keys (pydantic `MemoirEntry`), in its order. */
export const STANDARD_KEYS = [
  'scene_id',
  'agent',
  'source',
  'context',
  'narrative_beat',
  'agent_proposed',
  'player_response',
  'affinity_delta',
  'training_label',
  'split',
] as const;

/** The context keys kourai reads (typed when present), in the order kourai writes them. */
export const CONTEXT_KEYS = ['task_type', 'transcript_hash', 'preceding_agents'] as const;

/**
 * What an extension field holds:
 *   id         entry id: 1–64 characters
 *   timestamp  ISO 8601 with seconds and a zone (RECORDED_AT_RE)
 *   entry_type one of ENTRY_TYPES
 *   interrupt  interrupt details, or null
 *   ref        a non-empty string (an entry id)
 *   text       any string
 *   likert     an integer 1–5
 *   object     any JSON object
 */
export type ExtensionKind = 'id' | 'timestamp' | 'entry_type' | 'interrupt' | 'ref' | 'text' | 'likert' | 'object';

/** kourai's extension keys, after the ten, in the order kourai writes them (Python hosts ignore them). */
export const EXTENSION_FIELDS = [
  { key: 'entry_id', kind: 'id' },
  { key: 'recorded_at', kind: 'timestamp' },
  { key: 'entry_type', kind: 'entry_type' },
  { key: 'interrupt', kind: 'interrupt' },
  { key: 'supersedes', kind: 'ref' },
  { key: 'revision_reason', kind: 'text' },
  { key: 'likert', kind: 'likert' },
  { key: 'comment', kind: 'text' },
  { key: 'episode', kind: 'object' },
  { key: 'council', kind: 'object' },
] as const satisfies readonly { key: string; kind: ExtensionKind }[];

export type ExtensionKey = (typeof EXTENSION_FIELDS)[number]['key'];
export const EXTENSION_KEYS: readonly ExtensionKey[] = EXTENSION_FIELDS.map((f) => f.key);
