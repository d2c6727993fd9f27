import { AGENTS } from './agents.js';
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
const isFinite = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
// zod's .int() accepts safe integers only
const isInt = (v: unknown): boolean => typeof v === 'number' && Number.isSafeInteger(v);


function context(v: unknown): boolean {
  if (v === null) return true;
  if (!isObj(v) || typeof v.task_type !== 'string' || typeof v.transcript_hash !== 'string') return false;
  const p = v.preceding_agents;
  if (!Array.isArray(p)) return false;
  for (const a of p) if (!agents.has(a)) return false;
  return true;
}

function response(v: unknown): boolean {
  if (v === null) return true;
  return isObj(v) && kinds.has(v.kind) && isStrOrNull(v.delta) && (v.felt === null || felts.has(v.felt));
}

function label(v: unknown): boolean {
  if (v === null) return true;
  if (!isObj(v) || !isFinite(v.weight)) return false;
  const pp = v.preference_pair;
  if (pp === null) return true;
  if (!Array.isArray(pp) || pp.length !== 2) return false;
  for (const it of pp) if (!isObj(it) || typeof it.text !== 'string' || !isInt(it.score)) return false;
  return true;
}

function split(v: unknown): boolean {
  return isObj(v) && typeof v.shared_eligible === 'boolean' && typeof v.private_only === 'boolean' && !(v.shared_eligible && v.private_only);
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

function extensions(o: Obj): boolean {
  const id = o.entry_id;
  if (id !== undefined && (typeof id !== 'string' || id.length < 1 || id.length > 64)) return false;
  const at = o.recorded_at;
  if (at !== undefined && !isRecordedAt(at)) return false; // RecordedAtSchema's own pattern, without zod
  const t = o.entry_type;
  if (t !== undefined && !types.has(t)) return false;
  if (!interrupt(o.interrupt)) return false;
  if (o.interrupt && t !== undefined && t !== 'interrupt') return false;
  const sup = o.supersedes;
  if (sup !== undefined && (typeof sup !== 'string' || sup.length < 1)) return false;
  if (o.revision_reason !== undefined && typeof o.revision_reason !== 'string') return false;
  const lk = o.likert;
  if (lk !== undefined && (!isInt(lk) || (lk as number) < 1 || (lk as number) > 5)) return false;
  if (o.comment !== undefined && typeof o.comment !== 'string') return false;
  if (o.episode !== undefined && !isObj(o.episode)) return false;
  if (o.council !== undefined && !isObj(o.council)) return false;
  return true;
}

/** True when `v` is a valid stored memoir line (same verdict as MemoirLineSchema). */
export function isValidLine(v: unknown, opts?: { splitOptional?: boolean }): boolean {
  if (!isObj(v)) return false;
  return (
    typeof v.scene_id === 'string' &&
    v.scene_id.length > 0 &&
    agents.has(v.agent) &&
    sources.has(v.source) &&
    context(v.context) &&
    isStrOrNull(v.narrative_beat) &&
    isStrOrNull(v.agent_proposed) &&
    response(v.player_response) &&
    isFinite(v.affinity_delta) &&
    label(v.training_label) &&
    (split(v.split) || (opts?.splitOptional === true && v.split === undefined)) &&
    extensions(v)
  );
}
