import type { Agent } from '../agents.js';
import { AGENTS } from '../agents.js';
import { ENTRY_TYPES, FELT, REASON_CLASSES, RESPONSE_KINDS, SOURCES, VISIBILITIES } from '../sources.js';
import type { EntryType, Felt, ReasonClass, ResponseKind, Source, Visibility } from '../sources.js';
import { EXTENSION_FIELDS, type ExtensionKind } from '../fields.js';
import { entryVerdict, type SplitVerdict } from '../split-rule.js';
import { RECORDED_AT_RE } from './recorded-at.js';

/**
 * The fast path of reading a memoir: a validating scanner over the UTF-8 bytes of ONE canonical line.
 *
 *   const out = new ScannedLine();
 *   if (scanLine(buf, start, end, out)) { ...use out... } else { ...slow path: parseLine(text)... }
 *
 * Interface (stable; the index build reuses it):
 * - `scanLine(buf, start, end, out)`: `buf[start, end)` is one line without its newline, and the
 *   caller has checked it is valid UTF-8 (the reader checks whole blocks with `isUtf8`). Returns true
 *   only for a line that is canonical — the ten upstream keys in pydantic's order, then kourai's
 *   extensions in EXTENSION_KEYS order, no whitespace, as kourai and Python hosts write them — AND
 *   valid exactly as MemoirLineSchema + the lone-surrogate rule judge it. Returns false ("fall back")
 *   for anything else, valid or not: escapes it does not take, unexpected key orders or keys, nested
 *   context keys, … The slow path (JSON.parse + isValidLine + zod, src/memoir/format/parse.ts) then decides
 *   and words every error. A property test (test/memoir/format/scan/canonical-line.test.ts) holds that the
 *   scanner never accepts what the slow path rejects, and extracts exactly what it reads.
 * - On true, `out` holds the fields (valid until the next scan with the same `out`): enum fields as
 *   the shared constant strings (`agent`, `source`, `entryType` (null when the line has none),
 *   `interrupt` (null when absent or null), `responseKind`, `felt`, `sharedEligible`, `privateOnly`),
 *   numbers (`affinityDelta`, `weight`, `likert`), `hasPreference`, and byte spans of every string
 *   field (`span(f)`, `string(f)`, `has(f)` for f in SPAN_FIELDS; `escaped(f)` says whether the JSON
 *   text of that string holds escapes, so a span is raw UTF-8 text exactly when it is false).
 *   `splitInput()` gives the split rule's inputs; a line without `entry_id` is a Python line whose id
 *   is derived from `buf[start, end)` (entry-id.ts `derivedId`).
 */

/** String fields whose byte spans a scan records (content between the quotes). */
export const SPAN_FIELDS = [
  'scene_id',
  'task_type',
  'transcript_hash',
  'narrative_beat',
  'agent_proposed',
  'delta',
  'pair_text_0',
  'pair_text_1',
  'entry_id',
  'recorded_at',
  'target_turn',
  'supersedes',
  'revision_reason',
  'comment',
] as const;
export type SpanField = (typeof SPAN_FIELDS)[number];
const F = Object.fromEntries(SPAN_FIELDS.map((f, i) => [f, i])) as Record<SpanField, number>;

export interface ScannedInterrupt {
  interrupting_agent: Agent;
  target_agent: Agent;
  reason_class: ReasonClass;
  visibility: Visibility;
}

export class ScannedLine {
  bytes: Buffer = Buffer.alloc(0);
  agent: Agent = 'hephaestus';
  source: Source = 'specialist_proposed';
  entryType: EntryType | null = null;
  interrupt: ScannedInterrupt | null = null;
  responseKind: ResponseKind | null = null;
  felt: Felt | null = null;
  sharedEligible = false;
  privateOnly = false;
  affinityDelta = 0;
  /** training_label.weight, or null when training_label is null. */
  weight: number | null = null;
  hasPreference = false;
  likert: number | null = null;
  hasEpisode = false;
  hasCouncil = false;
  /** [start, end) per SPAN_FIELDS entry, meaningful when its bit in `present` is set. */
  readonly spans = new Int32Array((SPAN_FIELDS.length + 1) * 2); // + a scratch slot
  /** Bit i set: SPAN_FIELDS[i] is in the line (not absent, not null). */
  present = 0;
  /** Bit i set: SPAN_FIELDS[i] is written with escapes. */
  escapes = 0;
  /** Scratch: a number's value, whether the last string held escapes. */
  num = 0;
  /** Whether the last number was written as an integer (no fraction, no exponent). */
  intToken = false;
  esc = false;
  /** The buffer read 32 bits at a time (strings skipped and keys compared a word at a time). */
  dv: DataView = new DataView(new ArrayBuffer(0));
  /** The last `recorded_at` date (YYYY-MM-DD) found valid: most lines share it. */
  readonly lastDate = new Uint8Array(10);
  hasLastDate = false;
  /** The enums' indexes (the verdict cache's key): entry type 7 = none. */
  agentIx = 0;
  sourceIx = 0;
  typeIx = 7;
  /** (interrupting agent * 16 + target agent) * 2 + private, when there is an interrupt. */
  interruptKey = 0;
  /** Split verdicts by the rule's inputs (a handful of enum combinations). */
  private readonly verdicts = new Map<number, SplitVerdict>();

  reset(bytes: Buffer): void {
    if (
      bytes.buffer !== this.dv.buffer ||
      bytes.byteOffset !== this.dv.byteOffset ||
      bytes.byteLength !== this.dv.byteLength
    ) {
      this.dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    this.bytes = bytes;
    this.present = 0;
    this.escapes = 0;
    this.entryType = null;
    this.typeIx = 7;
    this.interrupt = null;
    this.responseKind = null;
    this.felt = null;
    this.weight = null;
    this.hasPreference = false;
    this.likert = null;
    this.hasEpisode = false;
    this.hasCouncil = false;
  }

  has(f: SpanField): boolean {
    return (this.present & (1 << F[f])) !== 0;
  }

  /** [start, end) of the field's string content in `bytes` (escapes not decoded), or undefined. */
  span(f: SpanField): [number, number] | undefined {
    if ((this.present & (1 << F[f])) === 0) return undefined;
    return [this.spans[F[f] * 2] as number, this.spans[F[f] * 2 + 1] as number];
  }

  /** Where the field's content starts / ends in `bytes` (meaningful when `has(f)`; no array made). */
  start(f: SpanField): number {
    return this.spans[F[f] * 2] as number;
  }

  end(f: SpanField): number {
    return this.spans[F[f] * 2 + 1] as number;
  }

  escaped(f: SpanField): boolean {
    return (this.escapes & (1 << F[f])) !== 0;
  }

  /** The field's decoded string, or null when absent/null. */
  string(f: SpanField): string | null {
    if ((this.present & (1 << F[f])) === 0) return null;
    const i = F[f] * 2;
    const s = this.spans[i] as number;
    const e = this.spans[i + 1] as number;
    if ((this.escapes & (1 << F[f])) === 0) return this.bytes.toString('utf8', s, e);
    return JSON.parse(this.bytes.toString('utf8', s - 1, e + 1)) as string;
  }

  /** The entry type, inferred for a line without one (split-rule.ts `entryTypeOf`). */
  type(): EntryType {
    return this.entryType ?? (this.source === 'agent_interrupt' ? 'interrupt' : 'pipeline_turn');
  }

  /** The split rule's verdict (split-rule.ts `entryVerdict`), computed once per combination of its inputs. */
  verdict(): SplitVerdict {
    const i = this.interrupt;
    let key = (this.agentIx * 16 + this.sourceIx) * 8 + this.typeIx;
    key = key * 4 + (this.sharedEligible ? 2 : 0) + (this.privateOnly ? 1 : 0);
    key = key * 512 + (i === null ? 511 : this.interruptKey);
    let v = this.verdicts.get(key);
    if (v === undefined) {
      v = entryVerdict(this.splitInput());
      this.verdicts.set(key, v);
    }
    return v;
  }

  /** What the split rule reads (split-rule.ts `entryVerdict`). */
  splitInput(): {
    agent: Agent;
    source: Source;
    entry_type?: EntryType;
    interrupt: ScannedInterrupt | null;
    split: { shared_eligible: boolean; private_only: boolean };
  } {
    const out = {
      agent: this.agent,
      source: this.source,
      interrupt: this.interrupt,
      split: { shared_eligible: this.sharedEligible, private_only: this.privateOnly },
    };
    return this.entryType === null ? out : { ...out, entry_type: this.entryType };
  }
}

const enc = (s: string): Uint8Array => Buffer.from(s, 'latin1');
/** A literal's bytes and its whole 32-bit little-endian words. */
interface Lit {
  bytes: Uint8Array;
  words: Int32Array;
}
const litOf = (s: string): Lit => {
  const bytes = enc(s);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  return { bytes, words: Int32Array.from({ length: bytes.length >> 2 }, (_, k) => dv.getInt32(k * 4, true)) };
};
const K = {
  head: litOf('{"scene_id":'),
  agent: litOf(',"agent":'),
  source: litOf(',"source":'),
  context: litOf(',"context":'),
  taskType: litOf('{"task_type":'),
  hash: litOf(',"transcript_hash":'),
  preceding: litOf(',"preceding_agents":['),
  beat: litOf(',"narrative_beat":'),
  proposed: litOf(',"agent_proposed":'),
  response: litOf(',"player_response":'),
  kind: litOf('{"kind":'),
  delta: litOf(',"delta":'),
  felt: litOf(',"felt":'),
  affinity: litOf(',"affinity_delta":'),
  label: litOf(',"training_label":'),
  pair: litOf('{"preference_pair":'),
  text: litOf('{"text":'),
  score: litOf(',"score":'),
  weight: litOf(',"weight":'),
  split: litOf(',"split":{"shared_eligible":'),
  privateOnly: litOf(',"private_only":'),
  interrupting: litOf('{"interrupting_agent":'),
  target: litOf(',"target_agent":'),
  turn: litOf(',"target_turn":'),
  reason: litOf(',"reason_class":'),
  visibility: litOf(',"visibility":'),
};
/** Extension keys as `"key":`, in the order kourai writes them (fields.ts EXTENSION_FIELDS), with their kinds. */
const EXT = EXTENSION_FIELDS.map((f) => litOf(`"${f.key}":`));
const EXT_KIND: readonly ExtensionKind[] = EXTENSION_FIELDS.map((f) => f.kind);
/** The span slot of each string-valued extension, or -1 when the scanner keeps none (it still checks it). */
const EXT_SPAN: readonly number[] = EXTENSION_FIELDS.map((f) => (f.key in F ? F[f.key as SpanField] : -1));
/** The slot a string whose span nobody reads is scanned into. */
const SCRATCH = SPAN_FIELDS.length;
const EPISODE = EXTENSION_FIELDS.findIndex((f) => f.key === 'episode');
const COUNCIL = EXTENSION_FIELDS.findIndex((f) => f.key === 'council');

interface EnumTable<T extends string> {
  values: readonly T[];
  bytes: Uint8Array[];
}
const table = <T extends string>(values: readonly T[]): EnumTable<T> => ({ values, bytes: values.map(enc) });
const AGENT_T = table(AGENTS);
const SOURCE_T = table(SOURCES);
const TYPE_T = table(ENTRY_TYPES);
const KIND_T = table(RESPONSE_KINDS);
const FELT_T = table(FELT);
const REASON_T = table(REASON_CLASSES);
const VIS_T = table(VISIBILITIES);

const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));

/** Position after literal `l` at `p`, or -1 (compared a word at a time). */
function lit(out: ScannedLine, p: number, end: number, l: Lit): number {
  const n = l.bytes.length;
  if (p < 0 || p + n > end) return -1;
  const dv = out.dv;
  const w = l.words;
  let i = 0;
  for (let k = 0; k < w.length; k++, i += 4) if (dv.getInt32(p + i, true) !== w[k]) return -1;
  const b = out.bytes;
  for (; i < n; i++) if (b[p + i] !== l.bytes[i]) return -1;
  return p + n;
}

function isNull(b: Uint8Array, p: number, end: number): boolean {
  return p + 4 <= end && b[p] === 0x6e && b[p + 1] === 0x75 && b[p + 2] === 0x6c && b[p + 3] === 0x6c;
}

function hex4(b: Uint8Array, p: number, end: number): number {
  if (p + 4 > end) return -1;
  let v = 0;
  for (let i = 0; i < 4; i++) {
    const c = b[p + i] as number;
    let d: number;
    if (c >= 0x30 && c <= 0x39) d = c - 0x30;
    else if (c >= 0x61 && c <= 0x66) d = c - 0x57;
    else if (c >= 0x41 && c <= 0x46) d = c - 0x37;
    else return -1;
    v = v * 16 + d;
  }
  return v;
}

/**
 * A JSON string at `p` (its opening quote): position after the closing quote, or -1. Sets `out.esc`
 * when it holds escapes. Refuses raw control characters (JSON does) and lone surrogate escapes (not
 * text: the slow path reports them).
 */
function str(b: Uint8Array, p: number, end: number, out: ScannedLine): number {
  if (p < 0 || p >= end || b[p] !== 0x22) return -1;
  out.esc = false;
  p++;
  const dv = out.dv;
  for (;;) {
    // A word at a time while no byte of it can end the string or need a look (see plainWord).
    while (p + 4 <= end && plainWord(dv.getInt32(p, true))) p += 4;
    if (p >= end) return -1;
    const c = b[p] as number;
    if (c === 0x22) return p + 1;
    if (c === 0x5c) {
      out.esc = true;
      if (p + 1 >= end) return -1;
      const e = b[p + 1];
      if (
        e === 0x22 ||
        e === 0x5c ||
        e === 0x2f ||
        e === 0x62 ||
        e === 0x66 ||
        e === 0x6e ||
        e === 0x72 ||
        e === 0x74
      ) {
        p += 2;
        continue;
      }
      if (e !== 0x75) return -1;
      const u = hex4(b, p + 2, end);
      if (u < 0 || (u >= 0xdc00 && u <= 0xdfff)) return -1;
      if (u >= 0xd800 && u <= 0xdbff) {
        if (b[p + 6] !== 0x5c || b[p + 7] !== 0x75) return -1;
        const lo = hex4(b, p + 8, end);
        if (lo < 0xdc00 || lo > 0xdfff) return -1;
        p += 12;
      } else p += 6;
      continue;
    }
    if (c < 0x20) return -1;
    p++;
  }
}

/**
 * True when none of the four bytes of `x` is a quote, a backslash or a control character (< 0x20).
 * The classic SWAR tests (exact about whether such a byte exists): has-less-than 0x20, and has-zero
 * after XOR with the quote and with the backslash.
 */
export function plainWord(x: number): boolean {
  const q = x ^ 0x22222222;
  const s = x ^ 0x5c5c5c5c;
  return ((((x - 0x20202020) & ~x) | ((q - 0x01010101) & ~q) | ((s - 0x01010101) & ~s)) & 0x80808080) === 0;
}

/** A string field: records its span; position after it or -1. */
function field(b: Uint8Array, p: number, end: number, out: ScannedLine, f: number): number {
  const q = str(b, p, end, out);
  if (q < 0) return -1;
  out.spans[f * 2] = p + 1;
  out.spans[f * 2 + 1] = q - 1;
  out.present |= 1 << f;
  if (out.esc) out.escapes |= 1 << f;
  return q;
}

/** A string field or null. */
function fieldOrNull(b: Uint8Array, p: number, end: number, out: ScannedLine, f: number): number {
  if (isNull(b, p, end)) return p + 4;
  return field(b, p, end, out, f);
}

/**
 * An enum value written plainly (no escapes: a candidate's bytes then the closing quote): its index in
 * `t` into `out.num`; position after it or -1.
 */
function enumValue<T extends string>(b: Uint8Array, p: number, end: number, t: EnumTable<T>, out: ScannedLine): number {
  if (p < 0 || p >= end || b[p] !== 0x22) return -1;
  const s = p + 1;
  const cands = t.bytes;
  for (let i = 0; i < cands.length; i++) {
    const c = cands[i] as Uint8Array;
    const n = c.length;
    if (s + n >= end || b[s + n] !== 0x22) continue;
    let j = 0;
    while (j < n && b[s + j] === c[j]) j++;
    if (j === n) {
      out.num = i;
      return s + n + 1;
    }
  }
  return -1;
}

function latin1(b: Uint8Array, s: number, e: number): string {
  let out = '';
  for (let i = s; i < e; i++) out += String.fromCharCode(b[i] as number);
  return out;
}

/** A JSON number at `p` (its value into `out.num`, exactly as JSON.parse reads it); position after it or -1. */
function num(b: Uint8Array, p: number, end: number, out: ScannedLine): number {
  const s = p;
  let neg = false;
  if (p < end && b[p] === 0x2d) {
    neg = true;
    p++;
  }
  if (p >= end) return -1;
  let c = b[p] as number;
  let m = 0;
  let digits = 0;
  if (c === 0x30) p++;
  else if (c >= 0x31 && c <= 0x39) {
    while (p < end && (c = b[p] as number) >= 0x30 && c <= 0x39) {
      m = m * 10 + (c - 0x30);
      digits++;
      p++;
    }
  } else return -1;
  let e10 = 0;
  out.intToken = true;
  if (p < end && b[p] === 0x2e) {
    out.intToken = false;
    p++;
    const f0 = p;
    while (p < end && (c = b[p] as number) >= 0x30 && c <= 0x39) {
      m = m * 10 + (c - 0x30);
      digits++;
      e10--;
      p++;
    }
    if (p === f0) return -1;
  }
  if (p < end && (b[p] === 0x65 || b[p] === 0x45)) {
    out.intToken = false;
    p++;
    let eneg = false;
    if (p < end && (b[p] === 0x2b || b[p] === 0x2d)) {
      eneg = b[p] === 0x2d;
      p++;
    }
    const x0 = p;
    let x = 0;
    while (p < end && (c = b[p] as number) >= 0x30 && c <= 0x39) {
      if (x < 1e6) x = x * 10 + (c - 0x30);
      p++;
    }
    if (p === x0) return -1;
    e10 += eneg ? -x : x;
  }
  // Exact operands (≤ 15 digits, a power of ten ≤ 1e22) and one rounding: the correctly rounded
  // value, as JSON.parse gives it. Anything else goes through Number() on the text (same grammar).
  let v: number;
  if (digits <= 15 && e10 >= -22 && e10 <= 22) v = e10 < 0 ? m / (POW10[-e10] as number) : m * (POW10[e10] as number);
  else {
    v = Number(latin1(b, neg ? s + 1 : s, p));
  }
  out.num = neg ? -v : v;
  return p;
}

/** Any JSON value (inside `episode` / `council`, which the schema takes as loose objects). */
function value(b: Uint8Array, p: number, end: number, out: ScannedLine, depth: number): number {
  if (p < 0 || p >= end) return -1;
  const c = b[p];
  if (c === 0x22) return str(b, p, end, out);
  if (c === 0x7b || c === 0x5b) {
    if (depth > 16) return -1;
    const close = c === 0x7b ? 0x7d : 0x5d;
    p++;
    if (p < end && b[p] === close) return p + 1;
    for (;;) {
      if (c === 0x7b) {
        p = str(b, p, end, out);
        if (p < 0 || p >= end || b[p] !== 0x3a) return -1;
        p++;
      }
      p = value(b, p, end, out, depth + 1);
      if (p < 0 || p >= end) return -1;
      if (b[p] === 0x2c) {
        p++;
        continue;
      }
      return b[p] === close ? p + 1 : -1;
    }
  }
  if (c === 0x74) return p + 4 <= end && b[p + 1] === 0x72 && b[p + 2] === 0x75 && b[p + 3] === 0x65 ? p + 4 : -1;
  if (c === 0x66)
    return p + 5 <= end && b[p + 1] === 0x61 && b[p + 2] === 0x6c && b[p + 3] === 0x73 && b[p + 4] === 0x65
      ? p + 5
      : -1;
  if (c === 0x6e) return isNull(b, p, end) ? p + 4 : -1;
  return num(b, p, end, out);
}

/** true / false at `p`: 1 / 0 into `out.num`; position after it or -1. */
function bool(b: Uint8Array, p: number, end: number, out: ScannedLine): number {
  if (p < 0) return -1;
  if (p + 4 <= end && b[p] === 0x74 && b[p + 1] === 0x72 && b[p + 2] === 0x75 && b[p + 3] === 0x65) {
    out.num = 1;
    return p + 4;
  }
  if (
    p + 5 <= end &&
    b[p] === 0x66 &&
    b[p + 1] === 0x61 &&
    b[p + 2] === 0x6c &&
    b[p + 3] === 0x73 &&
    b[p + 4] === 0x65
  ) {
    out.num = 0;
    return p + 5;
  }
  return -1;
}

function context(b: Uint8Array, p: number, end: number, out: ScannedLine): number {
  if (isNull(b, p, end)) return p + 4;
  p = field(b, lit(out, p, end, K.taskType), end, out, F.task_type);
  p = field(b, lit(out, p, end, K.hash), end, out, F.transcript_hash);
  p = lit(out, p, end, K.preceding);
  if (p < 0) return -1;
  if (p < end && b[p] === 0x5d) p++;
  else {
    for (;;) {
      p = enumValue(b, p, end, AGENT_T, out);
      if (p < 0 || p >= end) return -1;
      if (b[p] === 0x2c) p++;
      else if (b[p] === 0x5d) {
        p++;
        break;
      } else return -1;
    }
  }
  return p < end && b[p] === 0x7d ? p + 1 : -1;
}

function response(b: Uint8Array, p: number, end: number, out: ScannedLine): number {
  if (isNull(b, p, end)) return p + 4;
  p = enumValue(b, lit(out, p, end, K.kind), end, KIND_T, out);
  if (p < 0) return -1;
  out.responseKind = RESPONSE_KINDS[out.num] as ResponseKind;
  p = fieldOrNull(b, lit(out, p, end, K.delta), end, out, F.delta);
  p = lit(out, p, end, K.felt);
  if (p < 0) return -1;
  if (isNull(b, p, end)) p += 4;
  else {
    p = enumValue(b, p, end, FELT_T, out);
    if (p < 0) return -1;
    out.felt = FELT[out.num] as Felt;
  }
  return p < end && b[p] === 0x7d ? p + 1 : -1;
}

function pairItem(b: Uint8Array, p: number, end: number, out: ScannedLine, f: number): number {
  p = field(b, lit(out, p, end, K.text), end, out, f);
  p = num(b, lit(out, p, end, K.score), end, out);
  // pydantic keeps an item as written (`1.0` stays a float): the layout taken is an integer score
  if (p < 0 || !out.intToken || !Number.isSafeInteger(out.num)) return -1;
  return p < end && b[p] === 0x7d ? p + 1 : -1;
}

function label(b: Uint8Array, p: number, end: number, out: ScannedLine): number {
  if (isNull(b, p, end)) return p + 4;
  p = lit(out, p, end, K.pair);
  if (p < 0) return -1;
  if (isNull(b, p, end)) p += 4;
  else {
    if (p >= end || b[p] !== 0x5b) return -1;
    p = pairItem(b, p + 1, end, out, F.pair_text_0);
    if (p < 0 || p >= end || b[p] !== 0x2c) return -1;
    p = pairItem(b, p + 1, end, out, F.pair_text_1);
    if (p < 0 || p >= end || b[p] !== 0x5d) return -1;
    p++;
    out.hasPreference = true;
  }
  p = num(b, lit(out, p, end, K.weight), end, out);
  if (p < 0 || !canonicalFloat(out)) return -1;
  out.weight = out.num;
  return p < end && b[p] === 0x7d ? p + 1 : -1;
}

function interrupt(b: Uint8Array, p: number, end: number, out: ScannedLine): number {
  if (isNull(b, p, end)) return p + 4;
  p = enumValue(b, lit(out, p, end, K.interrupting), end, AGENT_T, out);
  if (p < 0) return -1;
  const byIx = out.num;
  const by = AGENTS[byIx] as Agent;
  p = enumValue(b, lit(out, p, end, K.target), end, AGENT_T, out);
  if (p < 0) return -1;
  const targetIx = out.num;
  const target = AGENTS[targetIx] as Agent;
  p = field(b, lit(out, p, end, K.turn), end, out, F.target_turn);
  p = enumValue(b, lit(out, p, end, K.reason), end, REASON_T, out);
  if (p < 0) return -1;
  const reason = REASON_CLASSES[out.num] as ReasonClass;
  p = enumValue(b, lit(out, p, end, K.visibility), end, VIS_T, out);
  if (p < 0 || p >= end || b[p] !== 0x7d) return -1;
  const visibility = VISIBILITIES[out.num] as Visibility;
  out.interruptKey = (byIx * 16 + targetIx) * 2 + (visibility === 'private' ? 1 : 0);
  out.interrupt = { interrupting_agent: by, target_agent: target, reason_class: reason, visibility };
  return p + 1;
}

const digit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/**
 * recorded_at as RECORDED_AT_RE judges it. The pattern is a date (always 10 characters) + "T" + a
 * time, so the canonical `YYYY-MM-DDTHH:MM:SS.sss…Z` is checked as: the date equals the last date the
 * pattern accepted (or the pattern accepts it now), and the time's characters are in the pattern's
 * ranges. Any other shape goes to the pattern whole.
 */
function recordedAt(b: Uint8Array, out: ScannedLine): boolean {
  const s = out.spans[F.recorded_at * 2] as number;
  const e = out.spans[F.recorded_at * 2 + 1] as number;
  const n = e - s;
  if (out.esc || n < 22 || b[s + 10] !== 0x54 || b[e - 1] !== 0x5a)
    return RECORDED_AT_RE.test(out.string('recorded_at') as string);
  const t = s + 11; // HH:MM:SS.d+Z
  const h0 = b[t] as number;
  const h1 = b[t + 1] as number;
  const timeOk =
    ((h0 >= 0x30 && h0 <= 0x31 && digit(h1)) || (h0 === 0x32 && h1 >= 0x30 && h1 <= 0x33)) &&
    b[t + 2] === 0x3a &&
    (b[t + 3] as number) >= 0x30 &&
    (b[t + 3] as number) <= 0x35 &&
    digit(b[t + 4] as number) &&
    b[t + 5] === 0x3a &&
    (b[t + 6] as number) >= 0x30 &&
    (b[t + 6] as number) <= 0x35 &&
    digit(b[t + 7] as number) &&
    b[t + 8] === 0x2e &&
    allDigits(b, t + 9, e - 1);
  if (!timeOk) return RECORDED_AT_RE.test(out.string('recorded_at') as string);
  const last = out.lastDate;
  if (out.hasLastDate) {
    let same = true;
    for (let i = 0; i < 10; i++) if (b[s + i] !== last[i]) same = false;
    if (same) return true;
  }
  if (!RECORDED_AT_RE.test(`${latin1(b, s, s + 10)}T00:00:00Z`)) return false;
  last.set(b.subarray(s, s + 10));
  out.hasLastDate = true;
  return true;
}

function allDigits(b: Uint8Array, s: number, e: number): boolean {
  if (s >= e) return false;
  for (let i = s; i < e; i++) if (!digit(b[i] as number)) return false;
  return true;
}

function isAscii(b: Uint8Array, s: number, e: number): boolean {
  for (let i = s; i < e; i++) if ((b[i] as number) >= 0x80) return false;
  return true;
}

/** See the module comment. */
/**
 * A float field as pydantic writes it: finite, with a fraction or an exponent. An integer token
 * (`1`, `-0`) is valid but falls back: pydantic reads `-0` as 0.0, JSON.parse as -0.
 */
function canonicalFloat(out: ScannedLine): boolean {
  return !out.intToken && Number.isFinite(out.num);
}

export function scanLine(b: Buffer, start: number, end: number, out: ScannedLine): boolean {
  out.reset(b);
  let p = field(b, lit(out, start, end, K.head), end, out, F.scene_id);
  if (p < 0) return false;
  p = enumValue(b, lit(out, p, end, K.agent), end, AGENT_T, out);
  if (p < 0) return false;
  out.agentIx = out.num;
  out.agent = AGENTS[out.num] as Agent;
  p = enumValue(b, lit(out, p, end, K.source), end, SOURCE_T, out);
  if (p < 0) return false;
  out.sourceIx = out.num;
  out.source = SOURCES[out.num] as Source;
  p = context(b, lit(out, p, end, K.context), end, out);
  if (p < 0) return false;
  p = fieldOrNull(b, lit(out, p, end, K.beat), end, out, F.narrative_beat);
  p = fieldOrNull(b, lit(out, p, end, K.proposed), end, out, F.agent_proposed);
  p = response(b, lit(out, p, end, K.response), end, out);
  if (p < 0) return false;
  p = num(b, lit(out, p, end, K.affinity), end, out);
  if (p < 0 || !canonicalFloat(out)) return false;
  out.affinityDelta = out.num;
  p = label(b, lit(out, p, end, K.label), end, out);
  p = bool(b, lit(out, p, end, K.split), end, out);
  if (p < 0) return false;
  out.sharedEligible = out.num === 1;
  p = bool(b, lit(out, p, end, K.privateOnly), end, out);
  if (p < 0 || p >= end || b[p] !== 0x7d) return false;
  out.privateOnly = out.num === 1;
  if (out.sharedEligible && out.privateOnly) return false;
  p++;
  let next = 0; // extensions come in EXT order, each at most once
  for (;;) {
    if (p === end - 1 && b[p] === 0x7d) break;
    if (p >= end || b[p] !== 0x2c) return false;
    p++;
    let k = next;
    let q = -1;
    for (; k < EXT.length; k++) {
      q = lit(out, p, end, EXT[k] as Lit);
      if (q >= 0) break;
    }
    if (q < 0) return false;
    next = k + 1;
    p = q;
    const f = EXT_SPAN[k] as number;
    const slot = f < 0 ? SCRATCH : f;
    switch (EXT_KIND[k] as ExtensionKind) {
      case 'id': {
        // 1..64 characters; the fast path takes plain ASCII ids only (bytes = characters).
        p = field(b, p, end, out, slot);
        const s = out.spans[slot * 2] as number;
        const e = out.spans[slot * 2 + 1] as number;
        if (p < 0 || out.esc || e - s < 1 || e - s > 64 || !isAscii(b, s, e)) return false;
        break;
      }
      case 'timestamp':
        if (f < 0) return false; // the date check reads recorded_at's slot
        p = field(b, p, end, out, f);
        if (p < 0 || !recordedAt(b, out)) return false;
        break;
      case 'entry_type':
        p = enumValue(b, p, end, TYPE_T, out);
        if (p < 0) return false;
        out.typeIx = out.num;
        out.entryType = ENTRY_TYPES[out.num] as EntryType;
        break;
      case 'interrupt':
        p = interrupt(b, p, end, out);
        break;
      case 'ref':
        p = field(b, p, end, out, slot);
        if (p < 0 || out.spans[slot * 2] === out.spans[slot * 2 + 1]) return false; // min(1)
        break;
      case 'text':
        p = field(b, p, end, out, slot);
        break;
      case 'likert':
        p = num(b, p, end, out);
        if (p < 0 || !Number.isSafeInteger(out.num) || out.num < 1 || out.num > 5) return false;
        out.likert = out.num;
        break;
      case 'object':
        if (p >= end || b[p] !== 0x7b) return false; // a JSON object
        p = value(b, p, end, out, 0);
        if (k === EPISODE) out.hasEpisode = true;
        else if (k === COUNCIL) out.hasCouncil = true;
        break;
    }
    if (p < 0) return false;
  }
  // interrupt details belong to entry_type "interrupt" (schema.ts interruptConsistency)
  if (out.interrupt !== null && out.entryType !== null && out.entryType !== 'interrupt') return false;
  return true;
}
