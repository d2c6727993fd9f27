import { EXTENSION_KEYS, STANDARD_KEYS, type Context, type MemoirLine, type PlayerResponse, type TrainingLabel } from './schema.js';
import { pyFloat, pyInt, pyString } from './python-json.js';

/**
 * One memoir line: the ten standard keys exactly as pydantic's `model_dump_json()` writes them,
 * then kourai's extensions in a fixed order, then any other keys the entry carried.
 * No trailing newline.
 */
export function encodeEntry(e: MemoirLine): string {
  let s = '{"scene_id":' + pyString(e.scene_id);
  s += ',"agent":' + pyString(e.agent);
  s += ',"source":' + pyString(e.source);
  s += ',"context":' + encodeContext(e.context);
  s += ',"narrative_beat":' + nullableString(e.narrative_beat);
  s += ',"agent_proposed":' + nullableString(e.agent_proposed);
  s += ',"player_response":' + encodeResponse(e.player_response);
  s += ',"affinity_delta":' + pyFloat(e.affinity_delta);
  s += ',"training_label":' + encodeLabel(e.training_label);
  s += ',"split":{"shared_eligible":' + String(e.split.shared_eligible) + ',"private_only":' + String(e.split.private_only) + '}';
  const rec = e as Record<string, unknown>;
  for (const k of EXTENSION_KEYS) {
    const v = rec[k];
    if (v !== undefined) s += `,${pyString(k)}:${JSON.stringify(v)}`;
  }
  for (const k of Object.keys(rec)) {
    if (STANDARD.has(k) || EXTENSIONS.has(k)) continue;
    const v = rec[k];
    if (v !== undefined) s += `,${pyString(k)}:${JSON.stringify(v)}`;
  }
  return s + '}';
}

const STANDARD: ReadonlySet<string> = new Set(STANDARD_KEYS);
const EXTENSIONS: ReadonlySet<string> = new Set(EXTENSION_KEYS);

function nullableString(v: string | null): string {
  return v === null ? 'null' : pyString(v);
}

function encodeContext(c: Context | null): string {
  if (c === null) return 'null';
  return `{"task_type":${pyString(c.task_type)},"transcript_hash":${pyString(c.transcript_hash)},"preceding_agents":[${c.preceding_agents.map(pyString).join(',')}]}`;
}

function encodeResponse(r: PlayerResponse | null): string {
  if (r === null) return 'null';
  return `{"kind":${pyString(r.kind)},"delta":${nullableString(r.delta)},"felt":${r.felt === null ? 'null' : pyString(r.felt)}}`;
}

function encodeLabel(t: TrainingLabel | null): string {
  if (t === null) return 'null';
  const pp = t.preference_pair === null ? 'null' : `[${t.preference_pair.map((p) => `{"text":${pyString(p.text)},"score":${pyInt(p.score)}}`).join(',')}]`;
  return `{"preference_pair":${pp},"weight":${pyFloat(t.weight)}}`;
}
