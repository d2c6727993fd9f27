import { EXTENSION_FIELDS, type ExtensionKind } from './fields.js';
import { isExtensionValue } from './fast-validate.js';
import { encodeValue, memberEncodings, parseLoses } from './py-object.js';
import { ENTRY_TYPES } from './sources.js';

/**
 * kourai's extension keys holding a value kourai cannot read (`"likert": 9`, `"entry_id": ""`).
 * pydantic ignores every key it does not declare, so such a line is an entry: the value is taken
 * out of the entry's typed view (kourai reads the entry as if the key were absent) and kept beside
 * it under the UNREAD symbol, written back in its place as pydantic writes a JSON value. The split
 * rule holds such an entry private (split-rule.ts): what the writer meant by the value is unknown,
 * and it may have been meant to narrow the entry.
 */
export const UNREAD: unique symbol = Symbol('kourai.unread-extensions');

interface UnreadValue {
  /** The value as pydantic writes it. */
  json: string;
  /** Why kourai cannot read it, in words (for `verify`). */
  why: string;
}

/** Extension key -> what it held, in the order the keys are written (fields.ts). */
export type Unread = ReadonlyMap<string, UnreadValue>;

/** What each kind of extension must hold (fields.ts ExtensionKind). */
const MEANT: Readonly<Record<ExtensionKind, string>> = {
  id: 'an entry id (a string of 1 to 64 characters)',
  timestamp: 'an ISO 8601 timestamp with seconds and a zone',
  entry_type: `one of ${ENTRY_TYPES.join(', ')}`,
  interrupt: 'interrupt details (interrupting_agent, target_agent, target_turn, reason_class, visibility) or null',
  ref: 'an entry id (a non-empty string)',
  text: 'a string',
  likert: 'an integer from 1 to 5',
  object: 'a JSON object',
};

type Obj = Record<string, unknown> & { [UNREAD]?: Unread };

/**
 * Takes each extension value kourai cannot read out of `o`, in place: the values taken, in
 * EXTENSION_FIELDS order with why each is unread, or undefined when every one is readable.
 * Interrupt details on an entry whose explicit type is not `interrupt` are unread too.
 */
export function setAsideExtensions(o: Obj): Map<string, { value: unknown; why: string }> | undefined {
  let out: Map<string, { value: unknown; why: string }> | undefined;
  // entry_type comes before interrupt: by then an unreadable type is already taken out
  for (const f of EXTENSION_FIELDS) {
    const v = o[f.key];
    if (v === undefined) continue;
    let why: string;
    if (!isExtensionValue(f.kind, v)) why = `not ${MEANT[f.kind]}`;
    else if (f.key === 'interrupt' && v !== null && o.entry_type !== undefined && o.entry_type !== 'interrupt')
      why = `interrupt details on an entry of type ${o.entry_type as string} (they belong to type interrupt)`;
    else continue;
    (out ??= new Map()).set(f.key, { value: v, why });
    delete o[f.key];
  }
  return out;
}

/**
 * The values `setAsideExtensions` took, as an entry keeps them (`entry[UNREAD] = …`). `text`: the
 * entry's JSON text, where a number's spelling (`9.0`, an integer past 2^53) is read from; without
 * it (a new entry given to `append`) each value is written from itself.
 */
export function toUnread(taken: ReadonlyMap<string, { value: unknown; why: string }>, text?: string): Unread {
  let enc: Map<string, string> | undefined;
  if (text !== undefined) {
    for (const t of taken.values())
      if (parseLoses(t.value)) {
        enc = memberEncodings(text, new Set(taken.keys()));
        break;
      }
  }
  const unread = new Map<string, UnreadValue>();
  for (const [k, t] of taken) unread.set(k, { json: enc?.get(k) ?? encodeValue(t.value), why: t.why });
  return unread;
}

/** Keeps the values `setAsideExtensions` took from a line on the entry read from it. */
export function keepUnread(
  entry: object,
  taken: ReadonlyMap<string, { value: unknown; why: string }>,
  text?: string,
): void {
  (entry as Obj)[UNREAD] = toUnread(taken, text);
}

/** The unread extension values an entry holds, or undefined. */
export function unreadOf(entry: object): Unread | undefined {
  return (entry as Obj)[UNREAD];
}

/** `likert holds 9, not an integer from 1 to 5`: one unread value in words. */
export function describeUnread(key: string, u: UnreadValue): string {
  const shown = u.json.length > 40 ? `${u.json.slice(0, 37)}...` : u.json;
  return u.why.startsWith('not ') ? `${key} holds ${shown}, ${u.why}` : `${key} holds ${shown}: ${u.why}`;
}
