import { pyFloat, pyString } from './python-json.js';

/**
 * A JSON object that pydantic holds as `dict[str, Any]` (an entry's `context`), re-encoded exactly
 * as `model_dump_json()` writes it: keys in the order written, ints as ints (any size), floats with
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
      return Number.isSafeInteger(v) ? String(v) : pyFloat(v);
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
      if (!Object.hasOwn(o, k)) continue;
      const v = o[k];
      if (v === undefined) continue;
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
 * Keeps the pydantic encoding of each entry's `context` where JSON.parse would lose it. `text` is
 * the JSON that `parsed` came from: one entry (an object) or an array of entries.
 */
export function keepRawContexts(text: string, parsed: unknown): void {
  if (Array.isArray(parsed)) {
    if (!parsed.some(contextLoses)) return;
  } else if (!contextLoses(parsed)) return;
  const r = new PyJsonReader(text);
  r.ws();
  if (r.peek() === 0x5b) {
    const items = parsed as unknown[];
    r.p++;
    r.ws();
    if (r.peek() === 0x5d) return;
    for (let i = 0; ; i++) {
      r.ws();
      if (r.peek() === 0x7b && contextLoses(items[i])) r.entry(items[i] as Obj);
      else r.skip();
      r.ws();
      if (r.peek() !== 0x2c) return;
      r.p++;
    }
  }
  if (r.peek() === 0x7b) r.entry(parsed as Obj);
}

function contextLoses(e: unknown): boolean {
  if (typeof e !== 'object' || e === null || Array.isArray(e)) return false;
  const c = (e as Obj).context;
  return typeof c === 'object' && c !== null && !Array.isArray(c) && parseLoses(c);
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

  /** An entry object: attaches the raw encoding to its context (the last `context` key wins, as in JSON.parse). */
  entry(target: Obj): void {
    this.p++; // {
    this.ws();
    if (this.peek() === 0x7d) {
      this.p++;
      return;
    }
    let raw: RawObject | undefined;
    for (;;) {
      this.ws();
      const key = this.string();
      this.ws();
      this.p++; // :
      this.ws();
      if (key === 'context' && this.peek() === 0x7b) raw = this.object().raw;
      else {
        if (key === 'context') raw = undefined;
        this.skip();
      }
      this.ws();
      if (this.peek() === 0x2c) this.p++;
      else break;
    }
    this.p++; // }
    const c = target.context as Obj | null | undefined;
    if (raw === undefined || typeof c !== 'object' || c === null) return;
    const vals = new Map<string, unknown>();
    for (const k of raw.keys) vals.set(k, c[k]);
    c[RAW] = { keys: raw.keys, enc: raw.enc, vals };
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
