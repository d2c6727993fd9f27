import { fmix32 } from '../counter-random.js';
import type { Features } from '../features.js';

/**
 * The built-in text encoder (base spec `hashed-ngrams`, version 1): features of *form* that carry
 * over to texts whose words were never seen.
 *
 * 1. Tokens: words (letters, digits, `_`, `$`), numbers, single punctuation characters, and line
 *    breaks with their indentation (`nl:<spaces / 2, at most 8>`, a tab counts 4). Other white
 *    space separates tokens and is dropped.
 * 2. Normalisation: a closed list of keywords (programming keywords, type names, commit prefixes,
 *    English function words) stays as written, lower-cased; every other word becomes its *shape*:
 *    its case pattern and a length class (`entryCount` -> `xXx:9+`, `x` -> `x:1`, `max_len` ->
 *    `x_x:5-8`), so a habit about names is learned about names in general. Numbers become `num`.
 * 3. Features, hashed (FNV-1a, then murmur3's finaliser, a salt per family) into `dim` buckets,
 *    the top bit of the hash a sign: normalised token 1-, 2- and 3-grams (weight 1); character
 *    3- and 4-grams of the lower-cased text with white space runs collapsed to one space
 *    (weight ¼: sub-word signal such as suffixes, operators, `): `); the length class of the text.
 *    A bucket's value is Σ sign · (1 + ln c) over its (bucket, sign) counts c ≥ 1 (c itself below
 *    1); then the vector is L2-normalised, indices ascending.
 */
export const KEYWORDS: ReadonlySet<string> = new Set(
  // programming
  (
    'if else elif return for while do switch case break continue try catch except finally throw raise ' +
    'function def class const let var async await yield new this self null none undefined true false ' +
    'import from export default as in of is not and or with lambda pass type interface enum extends implements ' +
    'public private protected static readonly void string number boolean bool int float str any unknown never ' +
    'list dict tuple set map array object promise optional ' +
    // commits and plans
    'feat fix docs refactor test tests chore perf build ci style revert wip todo fixme note plan step ' +
    // English function words and reasoning
    'the a an to of on at by for with without because so that since why when then than but also only ' +
    'this these those it its we you i be is are was were will should must can may do does did not no ' +
    'add added adds update updated remove removed use used make'
  ).split(' '),
);
const MAX_KEYWORD = Math.max(...[...KEYWORDS].map((k) => k.length));

/** Feature families (hash salts). */
const F_UNI = 0x1b873593;
const F_BI = 0x2f5e8c31;
const F_TRI = 0x68e31da4;
const F_CHAR3 = 0x3c6ef372;
const F_CHAR4 = 0x5be0cd19;
const F_LEN = 0x7f4a7c15;
const FNV = 0x01000193;

/** FNV-1a over UTF-16 code units with a salt, finalised. */
export function hashString(s: string, salt = 0): number {
  let h = (0x811c9dc5 ^ salt) >>> 0;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), FNV);
  return fmix32(h >>> 0);
}

function lengthClass(n: number): string {
  return n === 1 ? '1' : n <= 4 ? '2-4' : n <= 8 ? '5-8' : '9+';
}

/** Runs of ASCII white space: one space inside the text, none at its start (kept at the end). */
const ASCII_SPACE_RUNS = /[ \t\n\r\v\f]+/g;
const NON_ASCII_LETTER = /\p{L}/u;
const NON_ASCII_UPPER = /\p{Lu}/u;
const NON_ASCII_DIGIT = /\p{N}/u;

/** Character classes of the tokeniser. */
const C = { Space: 0, Newline: 1, Letter: 2, Digit: 3, Other: 4 } as const;
type CharClass = (typeof C)[keyof typeof C];

/** The class of text[i] (whose code unit is `code`); only non-ASCII looks at the character itself. */
function classOf(code: number, text: string, i: number): CharClass {
  if (code === 32 || code === 9 || code === 13 || code === 11 || code === 12) return C.Space;
  if (code === 10) return C.Newline;
  if ((code >= 97 && code <= 122) || (code >= 65 && code <= 90) || code === 95 || code === 36) return C.Letter;
  if (code >= 48 && code <= 57) return C.Digit;
  if (code < 128) return C.Other;
  const ch = text[i] as string;
  if (NON_ASCII_LETTER.test(ch)) return C.Letter;
  if (NON_ASCII_DIGIT.test(ch)) return C.Digit;
  return /\s/u.test(ch) ? C.Space : C.Other;
}

/** Case pattern of a word: runs of lower (x), upper (X), digits (9), `_` and `$`, at most 6 runs; then the length class. */
export function wordShape(w: string): string {
  let shape = '';
  let last = '';
  let n = 0;
  for (const ch of w) {
    n++;
    if (shape.length >= 6) continue;
    const code = ch.charCodeAt(0);
    const c =
      code >= 97 && code <= 122
        ? 'x'
        : code >= 65 && code <= 90
          ? 'X'
          : code >= 48 && code <= 57
            ? '9'
            : ch === '_'
              ? '_'
              : ch === '$'
                ? '$'
                : code < 128
                  ? 'x'
                  : NON_ASCII_UPPER.test(ch)
                    ? 'X'
                    : NON_ASCII_DIGIT.test(ch)
                      ? '9'
                      : 'x';
    if (c !== last) {
      shape += c;
      last = c;
    }
  }
  return `${shape}:${lengthClass(n)}`;
}

/** The normalised token stream (the encoder hashes these; exported for tests and the comparison). */
export function normalisedTokens(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const code = text.charCodeAt(i);
    const cls = classOf(code, text, i);
    if (cls === C.Space) {
      i++;
    } else if (cls === C.Newline) {
      let indent = 0;
      i++;
      while (i < n) {
        const c = text.charCodeAt(i);
        if (c === 32) indent++;
        else if (c === 9) indent += 4;
        else break;
        i++;
      }
      out.push(`nl:${Math.min(8, indent >> 1)}`);
    } else if (cls === C.Digit) {
      while (i < n && classOf(text.charCodeAt(i), text, i) === C.Digit) i++;
      if (i + 1 < n && text.charCodeAt(i) === 46 && classOf(text.charCodeAt(i + 1), text, i + 1) === C.Digit) {
        i++;
        while (i < n && classOf(text.charCodeAt(i), text, i) === C.Digit) i++;
      }
      out.push('num');
    } else if (cls === C.Letter) {
      const start = i;
      i++;
      while (i < n) {
        const c = classOf(text.charCodeAt(i), text, i);
        if (c !== C.Letter && c !== C.Digit) break;
        i++;
      }
      const word = text.slice(start, i);
      const lower = word.length <= MAX_KEYWORD ? word.toLowerCase() : '';
      out.push(lower && KEYWORDS.has(lower) ? lower : wordShape(word));
    } else {
      const cp = text.codePointAt(i) as number;
      const len = cp > 0xffff ? 2 : 1;
      out.push(text.slice(i, i + len));
      i += len;
    }
  }
  return out;
}

/**
 * One encoder per thread: it reuses a count buffer of 2 · dim (a positive and a negative count per
 * bucket), so encoding allocates only the result.
 */
export class HashedEncoder {
  readonly dim: number;
  private readonly counts: Float64Array;
  private readonly touched: Int32Array;
  private nTouched = 0;

  constructor(dim: number) {
    if (!Number.isInteger(Math.log2(dim))) throw new RangeError(`hashed encoder dim ${dim} is not a power of two`);
    this.dim = dim;
    this.counts = new Float64Array(2 * dim);
    this.touched = new Int32Array(2 * dim);
  }

  private add(h: number, w: number): void {
    const key = ((h & (this.dim - 1)) << 1) | (h >>> 31);
    if (this.counts[key] === 0) this.touched[this.nTouched++] = key;
    this.counts[key] = (this.counts[key] as number) + w;
  }

  /**
   * The text's features; `room` more entries are left (zero) at the end of idx and val for the
   * caller to fill, so that the base's input vector is built without a second copy.
   */
  encode(text: string, room = 0): Features {
    this.nTouched = 0;
    const toks = normalisedTokens(text);
    const n = toks.length;
    let p1 = 0;
    let p2 = 0;
    for (let i = 0; i < n; i++) {
      const a = hashString(toks[i] as string);
      this.add(fmix32((a ^ F_UNI) >>> 0), 1);
      if (i >= 1) {
        const b = fmix32(((Math.imul(p1, 31) + a) ^ F_BI) >>> 0);
        this.add(b, 1);
        if (i >= 2) this.add(fmix32(((Math.imul(p2, 31) + a) ^ F_TRI) >>> 0), 1);
        p2 = b;
      }
      p1 = a;
    }
    const raw = text.replace(ASCII_SPACE_RUNS, (_m: string, at: number) => (at === 0 ? '' : ' ')).toLowerCase();
    for (let i = 0; i + 3 <= raw.length; i++) {
      let h = F_CHAR3;
      h = Math.imul(h ^ raw.charCodeAt(i), FNV);
      h = Math.imul(h ^ raw.charCodeAt(i + 1), FNV);
      h = Math.imul(h ^ raw.charCodeAt(i + 2), FNV);
      this.add(fmix32(h >>> 0), 0.25);
      if (i + 4 <= raw.length) this.add(fmix32((Math.imul(h ^ raw.charCodeAt(i + 3), FNV) ^ F_CHAR4) >>> 0), 0.25);
    }
    this.add(hashString(`len:${Math.min(12, Math.round(Math.log2(1 + raw.length)))}`, F_LEN), 1);
    return this.collect(room);
  }

  /** Counts -> signed sublinear bucket values, L2-normalised, indices ascending; clears the buffer. */
  private collect(room: number): Features {
    const keys = this.touched.subarray(0, this.nTouched).sort();
    let m = 0;
    for (let k = 0; k < keys.length; k++) if (k === 0 || (keys[k] as number) >> 1 !== (keys[k - 1] as number) >> 1) m++;
    const idx = new Int32Array(m + room);
    const val = new Float64Array(m + room);
    let o = -1;
    let s = 0;
    for (let k = 0; k < keys.length; k++) {
      const key = keys[k] as number;
      const c = this.counts[key] as number;
      this.counts[key] = 0;
      const v = (key & 1 ? -1 : 1) * (c >= 1 ? 1 + Math.log(c) : c);
      const j = key >> 1;
      if (o < 0 || idx[o] !== j) {
        o++;
        idx[o] = j;
        val[o] = v;
      } else val[o] = (val[o] as number) + v;
    }
    for (let k = 0; k < m; k++) s += (val[k] as number) * (val[k] as number);
    const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
    for (let k = 0; k < m; k++) val[k] = (val[k] as number) * inv;
    return { idx, val };
  }
}
