import { CONTEXT_KEYS, EXTENSION_KEYS } from './fields.js';
import type { MemoirLine, PreferenceItem, TrainingLabel } from './schema.js';
import { pyFloatField, pyInt, pyString } from './python-json.js';
import { encodeObject, RAW } from './py-object.js';
import { unreadOf } from './unread.js';

/** The split object for each (shared_eligible, private_only), as pydantic writes it. */
const SPLITS = [false, true].flatMap((shared) =>
  [false, true].map((priv) => `{"shared_eligible":${shared},"private_only":${priv}}`),
);

/** `,"entry_id":` and so on: each extension key's prefix, encoded once. */
const EXTENSION_PREFIX = EXTENSION_KEYS.map((k) => `,${pyString(k)}:`);

/**
 * One memoir line: the ten standard keys exactly as pydantic's `model_dump_json()` writes them,
 * then kourai's extensions in a fixed order (one kourai could not read in its place, as read). A
 * top-level key no model declares is not written, as `model_dump_json()` leaves it out (`append`
 * and `supersede` warn about it; `memoir show` gives a stored line's own bytes).
 * No trailing newline. The entry must carry the ten standard keys (a `MemoirLine`).
 *
 * Speed (this is most of `append`'s CPU): every string goes through `quote`, which skips
 * JSON.stringify's escaping pass (and its fixed cost per call) for text that needs no escape;
 * a preference pair that repeats `agent_proposed` / `player_response.delta` (the usual label)
 * reuses their encoding. test/memoir/format/encode-equivalence.test.ts holds this to a field-by-field
 * reference, test/memoir/format/python-compat.test.ts to pydantic itself.
 */
export function encodeEntry(e: MemoirLine): string {
  const rec = e as Record<string, unknown>;
  let s = encodeStandard(e);
  const unread = unreadOf(e);
  for (let i = 0; i < EXTENSION_KEYS.length; i++) {
    const v = rec[EXTENSION_KEYS[i] as string];
    if (v === undefined) {
      // a value kourai could not read stays in its place, as it was (unread.ts)
      const u = unread?.get(EXTENSION_KEYS[i] as string);
      if (u !== undefined) s += (EXTENSION_PREFIX[i] as string) + u.json;
      continue;
    }
    s += (EXTENSION_PREFIX[i] as string) + (typeof v === 'string' ? quote(v) : JSON.stringify(v));
  }
  return s + '}';
}

/**
 * `JSON.stringify(s)` for a string. Text without a quote, a backslash, a control character or a
 * surrogate (half of a pair, or a lone one that JSON.stringify writes as `\udXXX`) is written
 * between quotes unchanged, which is exactly what JSON.stringify would write.
 */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;
export function quote(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : '"' + s + '"';
}

const quoteOrNull = (s: string | null): string => (s === null ? 'null' : quote(s));

const KOURAI_CONTEXT_KEYS = CONTEXT_KEYS;

/** The context kourai writes itself (its three keys, in order, nothing kept raw): the fast layout. */
export function isKouraiContext(
  c: NonNullable<MemoirLine['context']>,
): c is Required<Pick<NonNullable<MemoirLine['context']>, (typeof KOURAI_CONTEXT_KEYS)[number]>> {
  if ((c as { [RAW]?: unknown })[RAW] !== undefined) return false;
  let i = 0;
  for (const k in c) if (k !== KOURAI_CONTEXT_KEYS[i++]) return false;
  return i === 3;
}

/** The ten standard keys, without the closing brace. */
function encodeStandard(e: MemoirLine): string {
  const c = e.context;
  const r = e.player_response;
  const proposed = quoteOrNull(e.agent_proposed);
  const delta = r === null ? null : quoteOrNull(r.delta);
  let s =
    '{"scene_id":' + quote(e.scene_id) + ',"agent":' + quote(e.agent) + ',"source":' + quote(e.source) + ',"context":';
  if (c === null) s += 'null';
  else if (isKouraiContext(c)) {
    s +=
      '{"task_type":' + quote(c.task_type) + ',"transcript_hash":' + quote(c.transcript_hash) + ',"preceding_agents":[';
    const pa = c.preceding_agents;
    for (let i = 0; i < pa.length; i++) s += (i === 0 ? '' : ',') + quote(pa[i] as string);
    s += ']}';
  } else s += encodeObject(c);
  s += ',"narrative_beat":' + quoteOrNull(e.narrative_beat) + ',"agent_proposed":' + proposed + ',"player_response":';
  s +=
    r === null
      ? 'null'
      : '{"kind":' + quote(r.kind) + ',"delta":' + (delta as string) + ',"felt":' + quoteOrNull(r.felt) + '}';
  s += ',"affinity_delta":' + pyFloatField(e.affinity_delta);
  s +=
    ',"training_label":' +
    encodeLabel(e.training_label, e.agent_proposed, proposed, r === null ? null : r.delta, delta);
  return s + ',"split":' + SPLITS[(e.split.shared_eligible ? 2 : 0) + (e.split.private_only ? 1 : 0)];
}

/** A label; a pair text equal to the proposal or the correction reuses its encoding. */
function encodeLabel(
  t: TrainingLabel | null,
  proposed: string | null,
  proposedJson: string,
  delta: string | null,
  deltaJson: string | null,
): string {
  if (t === null) return 'null';
  const pp = t.preference_pair;
  let s = '{"preference_pair":';
  if (pp === null) s += 'null';
  else {
    s += '[';
    for (let i = 0; i < pp.length; i++) {
      const p = pp[i] as PreferenceItem;
      if (!isTextScore(p)) {
        s += (i === 0 ? '' : ',') + encodeObject(p);
        continue;
      }
      const text = p.text === proposed ? proposedJson : p.text === delta ? (deltaJson as string) : quote(p.text);
      s += (i === 0 ? '{"text":' : ',{"text":') + text + ',"score":' + pyInt(p.score) + '}';
    }
    s += ']';
  }
  return s + ',"weight":' + pyFloatField(t.weight) + '}';
}

/**
 * An item kourai writes in its own layout: exactly `text` then an integer `score`, nothing kept raw.
 * Any other item is written as the `dict[str, Any]` it is (py-object.ts).
 */
export function isTextScore(p: PreferenceItem): p is { text: string; score: number } {
  if ((p as { [RAW]?: unknown })[RAW] !== undefined) return false;
  if (typeof p.text !== 'string' || !Number.isSafeInteger(p.score)) return false;
  let i = 0;
  for (const k in p) if (k !== (i++ === 0 ? 'text' : 'score')) return false;
  return i === 2;
}
