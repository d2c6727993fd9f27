/**
 * pydantic's lax mode, as `MemoirEntry.model_validate_json` (pydantic-core 2.x) applies it to the
 * typed fields of a line: the value pydantic would hold, or `undefined` when pydantic refuses.
 * Only the slow path of reading calls this (parse.ts), after the exact check has failed; canonical
 * lines never reach it.
 *
 * What pydantic takes (probed against pydantic 2.13; test/memoir/format/lax.test.ts checks it
 * against pydantic itself):
 * - float (`affinity_delta`, `training_label.weight`): a number, true/false (1.0/0.0), or a string
 *   that Rust's f64 grammar reads after trimming Unicode whitespace (`" 0.5 "`, `"1e3"`, `".5"`,
 *   `"inf"`, `"NaN"`), or failing that, the untrimmed string with single underscores removed
 *   (`"1_000"`). NaN and ±Infinity are kept (pydantic writes them as `null`).
 * - bool (`split.*`): true/false, the numbers 0 and 1 (also 0.0 and 1.0), or one of
 *   0/1/f/t/n/y/no/yes/off/on/false/true in any ASCII case, untrimmed.
 * - str, enum and literal fields: exact strings only (pydantic 2 never turns a number into text).
 */

/** Rust's `char::is_whitespace` (Unicode White_Space), which `str::trim` removes. */
const RUST_WS =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;
/** Rust's `f64::from_str` grammar (case-insensitive words, an optional sign, no whitespace). */
const F64_DECIMAL = /^[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
const F64_WORD = /^([+-]?)(inf|infinity|nan)$/i;

function rustF64(s: string): number | undefined {
  if (F64_DECIMAL.test(s)) return Number(s); // correctly rounded, as Rust's parser
  const w = F64_WORD.exec(s);
  if (w === null) return undefined;
  if ((w[2] as string).toLowerCase() === 'nan') return NaN;
  return w[1] === '-' ? -Infinity : Infinity;
}

/** The float pydantic holds for a JSON value given to a `float` field, or undefined (refused). */
export function laxFloat(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v !== 'string') return undefined;
  const trimmed = rustF64(v.replace(RUST_WS, ''));
  if (trimmed !== undefined) return trimmed;
  // pydantic-core's strip_underscores works on the untrimmed text
  if (v.startsWith('_') || v.endsWith('_') || v.includes('__')) return undefined;
  return rustF64(v.replace(/_/g, ''));
}

const TRUE_WORDS = /^(?:1|t|y|on|yes|true)$/i;
const FALSE_WORDS = /^(?:0|f|n|no|off|false)$/i;

/** The bool pydantic holds for a JSON value given to a `bool` field, or undefined (refused). */
export function laxBool(v: unknown): boolean | undefined {
  if (typeof v === 'boolean') return v;
  if (typeof v === 'number') return v === 1 ? true : v === 0 ? false : undefined;
  if (typeof v !== 'string' || v.length > 5) return undefined;
  if (TRUE_WORDS.test(v)) return true;
  if (FALSE_WORDS.test(v)) return false;
  return undefined;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Turns the lax spellings of a parsed line into the values pydantic holds, in place. A value
 * pydantic refuses is left as it is (the schema then refuses it and words why).
 */
export function coerceLax(o: Obj): void {
  if (o.affinity_delta !== undefined) {
    const f = laxFloat(o.affinity_delta);
    if (f !== undefined) o.affinity_delta = f;
  }
  const t = o.training_label;
  if (isObj(t) && t.weight !== undefined) {
    const f = laxFloat(t.weight);
    if (f !== undefined) t.weight = f;
  }
  const s = o.split;
  if (isObj(s)) {
    for (const k of ['shared_eligible', 'private_only'] as const) {
      if (s[k] === undefined) s[k] = false; // pydantic's default for each flag
      const b = laxBool(s[k]);
      if (b !== undefined) s[k] = b;
    }
  }
}
