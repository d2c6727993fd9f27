import { AGENTS } from './agents.js';
import { pyFloat, pyString } from './python-json.js';

/**
 * A JSON object that pydantic holds as `dict[str, Any]` (an entry's `context`, each item of its
 * `training_label.preference_pair`), re-encoded exactly as `model_dump_json()` writes it: keys in the order written, ints as ints (any size), floats with
 * a decimal point or an exponent, strings as raw UTF-8.
 *
 * JSON.parse loses three of those: `1.0` and `1` become the same number, an integer beyond 2^53
 * is rounded, and integer-like keys ("7") move to the front of the object. So when a parsed object
 * holds an integral number or an integer-like key anywhere inside, the pydantic encoding of each of
 * its values, and its key order, are kept beside it under the RAW symbol (enumerable, so `{...ctx}`
 * keeps it). A value replaced after parsing (not the same value any more) is encoded from itself.
 */
export const RAW: unique symbol = Symbol('kourai.pydantic-json');

export interface RawObject {
  /** Keys in the order written (a repeated key keeps its first place, as a Python dict does). */
  keys: readonly string[];
  /** Each key's value as pydantic writes it. */
  enc: ReadonlyMap<string, string>;
  /** Each key's parsed value when the encoding was taken (it applies while the value is the same). */
  vals: ReadonlyMap<string, unknown>;
  /**
   * Keys kept only here: a context key kourai types (`task_type`, …) holding a value of another
   * type. pydantic keeps it (`dict[str, Any]`); kourai's typed view leaves it out, and it is written
   * back in its place while the object holds no value of its own under that key.
   */
  hidden?: ReadonlySet<string>;
}

type Obj = Record<string, unknown> & { [RAW]?: RawObject };

/** An array-index key: JS enumerates these first, whatever order they were written in. */
const INDEX_KEY = /^(?:0|[1-9][0-9]*)$/;
const isIndexKey = (k: string): boolean => INDEX_KEY.test(k) && Number(k) < 4294967295;

/** Whether JSON.parse's value may differ from what pydantic read (see the module comment). */
export function parseLoses(v: unknown): boolean {
  if (typeof v === 'number') return Number.isInteger(v) || !Number.isFinite(v);
  if (typeof v !== 'object' || v === null) return false;
  if (Array.isArray(v)) {
    for (const x of v) if (parseLoses(x)) return true;
    return false;
  }
  for (const k in v) if (isIndexKey(k) || parseLoses((v as Obj)[k])) return true;
  return false;
}

/** The pydantic encoding of a value kourai holds (no source text: integral numbers are ints). */
export function encodeValue(v: unknown): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return pyString(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      // pydantic writes NaN and ±Infinity as null
      return Number.isSafeInteger(v) ? String(v) : Number.isFinite(v) ? pyFloat(v) : 'null';
    case 'bigint':
      return v.toString();
    case 'object':
      if (Array.isArray(v)) return `[${v.map(encodeValue).join(',')}]`;
      return encodeObject(v as Obj);
    default:
      throw new RangeError(`cannot encode a ${typeof v} as JSON`);
  }
}

/** An object as pydantic's `model_dump_json()` writes a `dict[str, Any]`. */
export function encodeObject(o: Obj): string {
  const raw = o[RAW];
  let s = '{';
  if (raw !== undefined) {
    for (const k of raw.keys) {
      const v = o[k];
      if (v === undefined) {
        if (raw.hidden?.has(k) === true)
          s += (s.length === 1 ? '' : ',') + pyString(k) + ':' + (raw.enc.get(k) as string);
        continue;
      }
      if (!Object.hasOwn(o, k)) continue;
      const kept = raw.vals.get(k) === v ? raw.enc.get(k) : undefined;
      s += (s.length === 1 ? '' : ',') + pyString(k) + ':' + (kept ?? encodeValue(v));
    }
  }
  for (const k of Object.keys(o)) {
    if (raw !== undefined && raw.enc.has(k)) continue;
    const v = o[k];
    if (v === undefined) continue;
    s += (s.length === 1 ? '' : ',') + pyString(k) + ':' + encodeValue(v);
  }
  return s + '}';
}

/**
 * Keeps the pydantic encoding of what JSON.parse would lose in each entry: its `context` and the
 * objects of its `training_label.preference_pair` (both `dict[str, Any]` upstream), and an integer
 * `-0` given to a float field (pydantic reads it as 0.0, JSON.parse as -0). A context key kourai
 * types but holding another type is moved out of the typed view (RawObject.hidden). `text` is the
 * JSON that `parsed` came from: one entry (an object) or an array of entries.
 */
export function keepRawContexts(text: string, parsed: unknown): void {
  if (Array.isArray(parsed)) {
    if (!parsed.some((e) => entryLoses(e, text))) return;
  } else if (!entryLoses(parsed, text)) return;
  const r = new PyJsonReader(text);
  r.ws();
  if (r.peek() === 0x5b) {
    const items = parsed as unknown[];
    r.p++;
    r.ws();
    if (r.peek() === 0x5d) return;
    for (let i = 0; ; i++) {
      r.ws();
      if (r.peek() === 0x7b && entryLoses(items[i], text)) r.entry(items[i] as Obj);
      else r.skip();
      r.ws();
      if (r.peek() !== 0x2c) return;
      r.p++;
    }
  }
  if (r.peek() === 0x7b) r.entry(parsed as Obj);
}

/**
 * The pydantic encoding of some top-level members of one entry's JSON text (the last of a repeated
 * key wins, as in JSON.parse): values kourai keeps without reading them (unread.ts).
 */
export function memberEncodings(text: string, keys: ReadonlySet<string>): Map<string, string> {
  const r = new PyJsonReader(text);
  r.ws();
  return r.encodingsOf(keys);
}

/** The context keys kourai types, and the type each must have to be in the typed view. */
const TYPED_CONTEXT: Readonly<Record<string, (v: unknown) => boolean>> = {
  task_type: (v) => typeof v === 'string',
  transcript_hash: (v) => typeof v === 'string',
  preceding_agents: (v) => Array.isArray(v) && v.every((a) => typeof a === 'string' && AGENT_SET.has(a)),
};
const AGENT_SET: ReadonlySet<string> = new Set(AGENTS);

function mistyped(c: Obj): boolean {
  for (const k in TYPED_CONTEXT) {
    const v = c[k];
    if (v !== undefined && !(TYPED_CONTEXT[k] as (v: unknown) => boolean)(v)) return true;
  }
  return false;
}

/** A score written with a fraction or an exponent somewhere in the line (a string may match too: then only slower). */
const FLOAT_SCORE = /"score"\s*:\s*-?[0-9]+[.eE]/;

function isTextScore(p: Obj): boolean {
  if (typeof p.text !== 'string' || !Number.isSafeInteger(p.score)) return false;
  let i = 0;
  for (const k in p) if (k !== (i++ === 0 ? 'text' : 'score')) return false;
  return i === 2;
}

function entryLoses(e: unknown, text: string): boolean {
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return false;
  const o = e as Obj;
  const c = o.context;
  if (typeof c === 'object' && c !== null && !Array.isArray(c) && (parseLoses(c) || mistyped(c as Obj))) return true;
  if (Object.is(o.affinity_delta, -0)) return true;
  const t = o.training_label;
  if (typeof t !== 'object' || t === null) return false;
  const l = t as Obj;
  if (Object.is(l.weight, -0)) return true;
  const pp = l.preference_pair;
  if (!Array.isArray(pp)) return false;
  for (const item of pp) {
    // kourai's own layout (a text, then an integer score) loses nothing unless the score was written as a float
    if (typeof item === 'object' && item !== null && isTextScore(item as Obj)) {
      if (FLOAT_SCORE.test(text)) return true;
    } else if (parseLoses(item)) return true;
  }
  return false;
}

/** Attaches the raw encoding read from the text to the object kourai holds. */
function attach(target: unknown, raw: RawObject | undefined, typed: boolean): void {
  if (raw === undefined || typeof target !== 'object' || target === null || Array.isArray(target)) return;
  const o = target as Obj;
  const vals = new Map<string, unknown>();
  for (const k of raw.keys) vals.set(k, o[k]);
  let hidden: Set<string> | undefined;
  if (typed) {
    for (const k in TYPED_CONTEXT) {
      const v = o[k];
      if (v === undefined || (TYPED_CONTEXT[k] as (v: unknown) => boolean)(v)) continue;
      delete o[k];
      (hidden ??= new Set()).add(k);
    }
  }
  o[RAW] = hidden ? { keys: raw.keys, enc: raw.enc, vals, hidden } : { keys: raw.keys, enc: raw.enc, vals };
}

/** Reads JSON text (already known to be valid) and writes each value as pydantic would. */
class PyJsonReader {
  p = 0;
  constructor(private readonly s: string) {}

  peek(): number {
    return this.s.charCodeAt(this.p);
  }

  ws(): void {
    for (;;) {
      const c = this.s.charCodeAt(this.p);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.p++;
      else return;
    }
  }

  /** Calls `each(key)` for each member of the object at the cursor; `each` reads the value. */
  private members(each: (key: string) => void): void {
    this.p++; // {
    this.ws();
    if (this.peek() === 0x7d) {
      this.p++;
      return;
    }
    for (;;) {
      this.ws();
      const key = this.string();
      this.ws();
      this.p++; // :
      this.ws();
      each(key);
      this.ws();
      if (this.peek() === 0x2c) this.p++;
      else break;
    }
    this.p++; // }
  }

  /** An entry object: attaches the raw encodings to it (the last of a repeated key wins, as in JSON.parse). */
  entry(target: Obj): void {
    let context: RawObject | undefined;
    let pair: ({ text: string; raw: RawObject } | undefined)[] | undefined;
    let affinity: string | undefined;
    let weight: string | undefined;
    this.members((key) => {
      if (key === 'context') {
        context = undefined;
        if (this.peek() === 0x7b) context = this.object().raw;
        else this.skip();
      } else if (key === 'affinity_delta') affinity = this.value();
      else if (key === 'training_label' && this.peek() === 0x7b) {
        pair = undefined;
        weight = undefined;
        this.members((k) => {
          if (k === 'weight') weight = this.value();
          else if (k === 'preference_pair' && this.peek() === 0x5b) pair = this.objects();
          else {
            if (k === 'preference_pair') pair = undefined;
            this.skip();
          }
        });
      } else {
        if (key === 'training_label') pair = weight = undefined;
        this.skip();
      }
    });
    attach(target.context, context, true);
    // an integer -0 is the float 0.0 to pydantic
    if (affinity === '0' && Object.is(target.affinity_delta, -0)) target.affinity_delta = 0;
    const t = target.training_label as Obj | null | undefined;
    if (typeof t !== 'object' || t === null) return;
    if (weight === '0' && Object.is(t.weight, -0)) t.weight = 0;
    const pp = t.preference_pair;
    if (pair === undefined || !Array.isArray(pp)) return;
    pair.forEach((o, i) => {
      // an item its own encoding already writes as pydantic does needs nothing kept
      if (o !== undefined && o.text !== encodeValue(pp[i])) attach(pp[i], o.raw, false);
    });
  }

  /** Each member of the object at the cursor named in `keys`, as pydantic writes its value. */
  encodingsOf(keys: ReadonlySet<string>): Map<string, string> {
    const out = new Map<string, string>();
    this.members((key) => {
      if (keys.has(key)) out.set(key, this.value());
      else this.skip();
    });
    return out;
  }

  /** A list: each object in it as pydantic writes it, with its raw encoding (undefined for other values). */
  private objects(): ({ text: string; raw: RawObject } | undefined)[] {
    const out: ({ text: string; raw: RawObject } | undefined)[] = [];
    this.p++; // [
    this.ws();
    if (this.peek() === 0x5d) {
      this.p++;
      return out;
    }
    for (;;) {
      this.ws();
      if (this.peek() === 0x7b) out.push(this.object());
      else {
        out.push(undefined);
        this.skip();
      }
      this.ws();
      if (this.peek() === 0x2c) this.p++;
      else break;
    }
    this.p++; // ]
    return out;
  }

  skip(): void {
    this.value();
  }

  value(): string {
    const c = this.peek();
    if (c === 0x7b) return this.object().text;
    if (c === 0x5b) {
      this.p++;
      this.ws();
      if (this.peek() === 0x5d) {
        this.p++;
        return '[]';
      }
      let s = '[';
      for (;;) {
        this.ws();
        s += (s.length === 1 ? '' : ',') + this.value();
        this.ws();
        if (this.peek() === 0x2c) this.p++;
        else break;
      }
      this.p++; // ]
      return s + ']';
    }
    if (c === 0x22) return pyString(this.string());
    if (c === 0x74) return this.literal('true');
    if (c === 0x66) return this.literal('false');
    if (c === 0x6e) return this.literal('null');
    // pydantic reads NaN and ±Infinity and writes them as null
    if (c === 0x4e || c === 0x49 || (c === 0x2d && this.s.charCodeAt(this.p + 1) === 0x49)) {
      this.literal(c === 0x4e ? 'NaN' : c === 0x49 ? 'Infinity' : '-Infinity');
      return 'null';
    }
    return this.number();
  }

  private literal(word: string): string {
    this.p += word.length;
    return word;
  }

  private number(): string {
    const start = this.p;
    let float = false;
    for (;;) {
      const c = this.s.charCodeAt(this.p);
      if ((c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2b) this.p++;
      else if (c === 0x2e || c === 0x65 || c === 0x45) {
        float = true;
        this.p++;
      } else break;
    }
    const tok = this.s.slice(start, this.p);
    if (!float) return BigInt(tok).toString(); // Python ints have no size limit; "-0" is 0
    const x = Number(tok);
    // pydantic writes an infinite float (a literal beyond the double range) as null
    return Number.isFinite(x) ? pyFloat(x) : 'null';
  }

  private string(): string {
    const start = this.p;
    let escaped = false;
    this.p++; // "
    for (;;) {
      const c = this.s.charCodeAt(this.p);
      if (c === 0x5c) {
        escaped = true;
        this.p += 2;
      } else if (c === 0x22) break;
      else this.p++;
    }
    this.p++;
    return escaped ? (JSON.parse(this.s.slice(start, this.p)) as string) : this.s.slice(start + 1, this.p - 1);
  }

  private object(): { text: string; raw: RawObject } {
    this.p++; // {
    const keys: string[] = [];
    const enc = new Map<string, string>();
    this.ws();
    if (this.peek() === 0x7d) this.p++;
    else {
      for (;;) {
        this.ws();
        const key = this.string();
        this.ws();
        this.p++; // :
        this.ws();
        const v = this.value();
        if (!enc.has(key)) keys.push(key);
        enc.set(key, v);
        this.ws();
        if (this.peek() === 0x2c) this.p++;
        else break;
      }
      this.p++; // }
    }
    let text = '{';
    for (const k of keys) text += (text.length === 1 ? '' : ',') + pyString(k) + ':' + (enc.get(k) as string);
    return { text: text + '}', raw: { keys, enc, vals: new Map() } };
  }
}
