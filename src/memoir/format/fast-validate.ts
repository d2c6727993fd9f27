import { AGENTS } from './agents.js';
import { EXTENSION_FIELDS, type ExtensionKind } from './fields.js';
import { isRecordedAt } from './scan/recorded-at.js';
import { ENTRY_TYPES, FELT, REASON_CLASSES, RESPONSE_KINDS, SOURCES, VISIBILITIES } from './sources.js';

/**
 * The hot path of reading: a hand-written check equivalent to `MemoirLineSchema.safeParse(x).success`
 * (zod stays the schema of record and produces every error message; a property test holds the two
 * in agreement). It exists because validation must stream at ≥ 50% of plain JSON.parse speed.
 */
const agents: ReadonlySet<unknown> = new Set(AGENTS);
const sources: ReadonlySet<unknown> = new Set(SOURCES);
const types: ReadonlySet<unknown> = new Set(ENTRY_TYPES);
const kinds: ReadonlySet<unknown> = new Set(RESPONSE_KINDS);
const felts: ReadonlySet<unknown> = new Set(FELT);
const reasons: ReadonlySet<unknown> = new Set(REASON_CLASSES);
const visibilities: ReadonlySet<unknown> = new Set(VISIBILITIES);

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isStrOrNull = (v: unknown): boolean => v === null || typeof v === 'string';
// zod's .int() accepts safe integers only
const isInt = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v);

/** Any JSON object (upstream `dict[str, Any]`); a known key of another type leaves the typed view (py-object.ts). */
function context(v: unknown): boolean {
  return v === null || v === undefined || isObj(v);
}

function response(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  return (
    isObj(v) &&
    kinds.has(v.kind) &&
    (v.delta === undefined || isStrOrNull(v.delta)) &&
    (v.felt === undefined || v.felt === null || felts.has(v.felt))
  );
}

function label(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  if (!isObj(v) || (v.weight !== undefined && typeof v.weight !== 'number')) return false;
  const pp = v.preference_pair;
  if (pp === null || pp === undefined) return true;
  if (!Array.isArray(pp)) return false;
  for (let i = 0; i < pp.length; i++) if (!isObj(pp[i])) return false;
  return true;
}

/** Each flag defaults to false upstream (parse.ts `withDefaults` fills it in). */
function split(v: unknown): boolean {
  return (
    isObj(v) &&
    (v.shared_eligible === undefined || typeof v.shared_eligible === 'boolean') &&
    (v.private_only === undefined || typeof v.private_only === 'boolean') &&
    !(v.shared_eligible === true && v.private_only === true)
  );
}

function interrupt(v: unknown): boolean {
  if (v === null || v === undefined) return true;
  return (
    isObj(v) &&
    agents.has(v.interrupting_agent) &&
    agents.has(v.target_agent) &&
    typeof v.target_turn === 'string' &&
    reasons.has(v.reason_class) &&
    visibilities.has(v.visibility)
  );
}

const EXT_KEYS = EXTENSION_FIELDS.map((f) => f.key);
const EXT_KINDS = EXTENSION_FIELDS.map((f) => f.kind);

/** One extension value as its kind requires (fields.ts); `undefined` (absent) is checked by the caller. */
export function isExtensionValue(kind: ExtensionKind, v: unknown): boolean {
  switch (kind) {
    case 'id':
      return typeof v === 'string' && v.length >= 1 && v.length <= 64;
    case 'timestamp':
      return isRecordedAt(v); // RecordedAtSchema's own pattern, without zod
    case 'entry_type':
      return types.has(v);
    case 'interrupt':
      return interrupt(v);
    case 'ref':
      return typeof v === 'string' && v.length >= 1;
    case 'text':
      return typeof v === 'string';
    case 'likert':
      return isInt(v) && (v as number) >= 1 && (v as number) <= 5;
    case 'object':
      return isObj(v);
  }
}

function extensions(o: Obj): boolean {
  for (let i = 0; i < EXT_KEYS.length; i++) {
    const v = o[EXT_KEYS[i] as string];
    if (v !== undefined && !isExtensionValue(EXT_KINDS[i] as ExtensionKind, v)) return false;
  }
  // interrupt details belong to entry_type "interrupt" (schema.ts interruptConsistency)
  return !(o.interrupt && o.entry_type !== undefined && o.entry_type !== 'interrupt');
}

/**
 * True when `v` is a valid stored memoir line (same verdict as MemoirLineSchema). A key upstream
 * gives a default may be absent (parse.ts `withDefaults` fills it in). Floats may be NaN or
 * infinite here (pydantic keeps them); `fastInput` refuses them in a new entry.
 */
export function isValidLine(v: unknown): boolean {
  if (!isObj(v)) return false;
  return (
    typeof v.scene_id === 'string' &&
    agents.has(v.agent) &&
    sources.has(v.source) &&
    context(v.context) &&
    (v.narrative_beat === undefined || isStrOrNull(v.narrative_beat)) &&
    (v.agent_proposed === undefined || isStrOrNull(v.agent_proposed)) &&
    response(v.player_response) &&
    (v.affinity_delta === undefined || typeof v.affinity_delta === 'number') &&
    label(v.training_label) &&
    (split(v.split) || v.split === undefined) &&
    extensions(v)
  );
}
