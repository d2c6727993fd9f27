import { isAscii } from 'node:buffer';
import { createHash } from 'node:crypto';
import { readSync } from 'node:fs';
import { derivedId } from '../memoir/format/entry-id.js';
import { IdSet } from '../memoir/verify/id-set.js';
import { rawLineOf, readLineViewsFd, toRecord, type LineView, type MemoirRecord } from '../memoir/file/reader.js';
import { ScannedLine, scanLine, type SpanField } from '../memoir/format/scan/canonical-line.js';
import type { MemoirEntry } from '../memoir/format/schema.js';
import { entryTypeOf, entryVerdict } from '../memoir/format/split-rule.js';

/**
 * The rows the memoir index stores for the lines of a file, in batches that cross threads cheaply:
 * a bulk build parses in a worker thread (index-worker.ts) while the main thread inserts, and a
 * batch of JS objects costs as much to copy between threads as to parse. So a batch is numbers in
 * one Float64Array, the variable strings of all its rows as UTF-8 in one byte array (both
 * transferred, not copied; the reader decodes it once and takes substrings), and enum values as
 * codes of a dictionary that grows batch by batch. No SQL here: the same batches feed the
 * single-threaded path.
 */
export const HASH_WINDOW = 64 * 1024;
export const CHUNK_BYTES = 1 << 20;

/** Fields per entry in `nums`. */
const S = 17;
const F_LINE = 0;
const F_OFFSET = 1;
const F_LENGTH = 2;
const F_AFFINITY = 3;
const F_FLAGS = 4; // 1 shareable, 2 lenient, 4 has_preference, UTF8_ROW
/** Flag: the row's strings are in the UTF-8 area. */
const UTF8_ROW = 8;
const F_AGENT = 5;
const F_SOURCE = 6;
const F_TYPE = 7;
const F_REASON = 8;
const F_KIND = 9; // -1: null
const F_FELT = 10; // -1: null
const F_ID = 11; // lengths in `strs`, in this order; -1: null
const F_BASE = 12; // length of the base id (a prefix of the id) for derived ids, else -1
const F_SCENE = 13;
const F_RECORDED = 14;
const F_SUPERSEDES = 15;
const F_TEXT = 16;

export interface RowBatch {
  entries: number;
  nums: Float64Array;
  /** The strings of ASCII rows, one after the other (lengths in `nums`). */
  ascii: Uint8Array;
  /** The strings of the other rows, as UTF-8 (lengths in `nums`, in UTF-16 units). */
  utf8: Uint8Array;
  /** Dictionary strings new since the previous batch (codes continue where they stopped). */
  dict: string[];
  /** [line, offset, length, kind, message] of lines that are not entries. */
  problems: [number, number, number, string, string][];
  /** File offset and line number just after the last record of the batch. */
  endBytes: number;
  endLines: number;
}

/** Searchable text of an entry (FTS5). */
export function searchText(e: MemoirEntry): string {
  return searchParts(e).join('\n');
}

/** A `\\u` escape in `b[start, end)` (JSON text: a backslash always starts an escape). */
function hasUnicodeEscape(b: Buffer, start: number, end: number): boolean {
  const line = b.subarray(start, end);
  for (let i = line.indexOf(0x5c); i >= 0 && i < line.length - 1; i = line.indexOf(0x5c, i + 2))
    if (line[i + 1] === 0x75) return true;
  return false;
}

function underscoresToSpaces(s: string): string {
  return s.replace(/_/g, ' ');
}

/** The lines of `searchText`. */
function searchParts(e: MemoirEntry): string[] {
  const parts: string[] = [e.scene_id, e.agent, e.source];
  if (e.narrative_beat) parts.push(e.narrative_beat.replace(/_/g, ' '));
  if (e.agent_proposed) parts.push(e.agent_proposed);
  if (e.player_response?.delta) parts.push(e.player_response.delta);
  if (e.context?.task_type !== undefined) parts.push(e.context.task_type);
  if (e.training_label?.preference_pair)
    for (const p of e.training_label.preference_pair) if (typeof p.text === 'string') parts.push(p.text);
  if (typeof e.comment === 'string') parts.push(e.comment);
  if (typeof e.revision_reason === 'string') parts.push(e.revision_reason);
  return parts;
}

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

export interface EncodeOptions {
  fromOffset: number;
  fromLine: number;
  untilOffset: number;
  batchEntries: number;
  /** Occurrences of a Python line's base id already indexed for this file (0 for a fresh file). */
  priorOccurrences: (baseId: string) => number;
  /** false: every line through parseLine (the slow path), to check the byte scanner against it. */
  scan?: boolean;
  /**
   * What the batches carry: 'all' (default), 'rows' without search text (a bulk load leaves the
   * full-text index to the first text query), or 'text' (line numbers and search text only: the
   * lazy full-text build, which needs no ids, so Python lines are not hashed).
   */
  content?: RowContent;
}

export type RowContent = 'all' | 'rows' | 'text';

/**
 * Reads a file's records from `fromOffset` and yields them as row batches. Stops at a torn tail
 * (a last line without its newline); blank lines after the last record are consumed up to the
 * last newline (the final batch's `endBytes`).
 */
export function* encodeRows(fd: number, opts: EncodeOptions): Generator<RowBatch> {
  const content = opts.content ?? 'all';
  const enc = new RowEncoder(opts.batchEntries, content);
  const occurrences = new Occurrences(fd, opts.priorOccurrences);
  const scanned = new ScannedLine();
  const scan = opts.scan !== false;
  let endBytes = opts.fromOffset;
  let endLines = opts.fromLine - 1;
  for (const v of readLineViewsFd(fd, {
    fromOffset: opts.fromOffset,
    fromLine: opts.fromLine,
    untilOffset: opts.untilOffset,
  })) {
    if (!v.terminated) break; // a torn tail
    occurrences.at(v.offset, v.length);
    // Canonical lines are read from their bytes (src/memoir/format/scan/); anything else, and every error, by parseLine.
    if (scan && v.flaw === undefined && scanLine(v.buf, v.start, v.end, scanned)) {
      let id: string | undefined;
      let base = -1;
      if (content !== 'text' && !scanned.has('entry_id')) {
        const b = derivedId(v.buf.subarray(v.start, v.end));
        const n = occurrences.of(b);
        id = n > 1 ? `${b}~${n}` : b;
        base = b.length;
      }
      enc.addScanned(v, scanned, id, base);
    } else enc.add(toRecord(rawLineOf(v), occurrences.of));
    endBytes = v.offset + v.length + 1;
    endLines = v.line;
    if (enc.full()) yield enc.take(endBytes, endLines);
  }
  if (opts.untilOffset > endBytes) {
    const tail = readBytes(fd, endBytes, opts.untilOffset);
    const nl = tail.lastIndexOf(10);
    if (nl >= 0) endBytes += nl + 1;
  }
  yield enc.take(endBytes, endLines);
}

/**
 * Bytes of strings, appended one after the other. Rows whose strings are all ASCII go to one area,
 * decoded on the other side as Latin-1 (a plain copy into one-byte strings); the few others to a
 * UTF-8 area. Lengths are in UTF-16 units: what the decoded string is sliced by.
 */
class Area {
  buf = Buffer.allocUnsafe(1 << 20);
  at = 0;

  private room(bytes: number): void {
    if (this.at + bytes <= this.buf.length) return;
    const grown = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + bytes));
    this.buf.copy(grown, 0, 0, this.at);
    this.buf = grown;
  }

  put(s: string): number {
    const n = s.length;
    this.room(3 * n);
    if (n < 48) {
      // Short strings byte by byte: cheaper than a call into the encoder, when they are ASCII.
      let i = 0;
      const b = this.buf;
      const at = this.at;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        b[at + i] = c;
      }
      if (i === n) {
        this.at += n;
        return n;
      }
    }
    this.at += this.buf.write(s, this.at);
    return n;
  }

  newline(): number {
    this.room(1);
    this.buf[this.at++] = 10;
    return 1;
  }

  /** UTF-8 bytes as they are; `ascii`: the caller knows they are all below 0x80. */
  putBytes(b: Buffer, s: number, e: number, ascii: boolean): number {
    const n = e - s;
    this.room(n);
    const dst = this.buf;
    const at = this.at;
    if (n < 64) for (let i = 0; i < n; i++) dst[at + i] = b[s + i] as number;
    else b.copy(dst, at, s, e);
    this.at += n;
    if (ascii) return n;
    let units = 0;
    for (let i = s; i < e; i++) {
      const c = b[i] as number;
      if (c < 0x80) units++;
      else if (c >= 0xf0)
        units += 2; // a surrogate pair
      else if (c >= 0xc0) units++;
    }
    return units;
  }

  take(): Uint8Array {
    const out = new Uint8Array(this.buf.subarray(0, this.at));
    this.at = 0;
    return out;
  }
}

class RowEncoder {
  private nums: Float64Array;
  private readonly ascii = new Area();
  private readonly utf8 = new Area();
  /** Where the current row's strings go. */
  private area = this.utf8;
  private rowAscii = false;
  private problems: RowBatch['problems'] = [];
  private n = 0;
  private readonly codes = new Map<string, number>();
  private newDict: string[] = [];

  constructor(
    private readonly batchEntries: number,
    private readonly content: RowContent,
  ) {
    this.nums = new Float64Array(batchEntries * S);
  }

  full(): boolean {
    return this.n + this.problems.length >= this.batchEntries;
  }

  private code(s: string | null | undefined): number {
    if (s === null || s === undefined) return -1;
    let c = this.codes.get(s);
    if (c === undefined) {
      c = this.codes.size;
      this.codes.set(s, c);
      this.newDict.push(s);
    }
    return c;
  }

  private put(s: string): number {
    return this.area.put(s);
  }

  private nl(): number {
    return this.area.newline();
  }

  add(rec: MemoirRecord): void {
    if (rec.kind === 'torn') return;
    if (rec.kind === 'invalid') {
      this.problems.push([rec.line, rec.offset, rec.length, rec.problem, rec.message]);
      return;
    }
    const e = rec.entry;
    this.area = this.utf8;
    this.rowAscii = false;
    if (this.content === 'text') {
      this.textRow(rec.line, UTF8_ROW);
      const parts = searchParts(e);
      let text = this.put(parts[0] as string);
      for (let i = 1; i < parts.length; i++) text += this.nl() + this.put(parts[i] as string);
      this.nums[(this.n - 1) * S + F_TEXT] = text;
      return;
    }
    const verdict = entryVerdict(e);
    const t = e.recorded_at;
    const recorded = typeof t === 'string' ? (ISO_UTC.test(t) ? t : new Date(t).toISOString()) : null;
    const supersedes = typeof e.supersedes === 'string' ? e.supersedes : null;
    const o = this.n * S;
    const v = this.nums;
    v[o + F_LINE] = rec.line;
    v[o + F_OFFSET] = rec.offset;
    v[o + F_LENGTH] = rec.length;
    // pydantic reads NaN and ±Infinity as a delta; they change no affinity (and SQLite would store NULL)
    v[o + F_AFFINITY] = Number.isFinite(e.affinity_delta) ? e.affinity_delta : 0;
    v[o + F_FLAGS] =
      (verdict.shareable ? 1 : 0) | (verdict.lenient ? 2 : 0) | (e.training_label?.preference_pair ? 4 : 0) | UTF8_ROW;
    v[o + F_AGENT] = this.code(e.agent);
    v[o + F_SOURCE] = this.code(e.source);
    v[o + F_TYPE] = this.code(entryTypeOf(e));
    v[o + F_REASON] = this.code(verdict.reason);
    v[o + F_KIND] = this.code(e.player_response?.kind);
    v[o + F_FELT] = this.code(e.player_response?.felt);
    v[o + F_ID] = this.put(e.entry_id);
    v[o + F_BASE] = rec.derived ? e.entry_id.replace(/~\d+$/, '').length : -1;
    v[o + F_SCENE] = this.put(e.scene_id);
    v[o + F_RECORDED] = recorded === null ? -1 : this.put(recorded);
    v[o + F_SUPERSEDES] = supersedes === null ? -1 : this.put(supersedes);
    this.n++;
    if (this.content === 'rows') {
      v[o + F_TEXT] = -1;
      return;
    }
    const parts = searchParts(e);
    let text = this.put(parts[0] as string);
    for (let i = 1; i < parts.length; i++) text += this.nl() + this.put(parts[i] as string);
    v[o + F_TEXT] = text;
  }

  /** A field of a scanned line as text: its bytes when written without escapes. Its UTF-16 length. */
  private putField(s: ScannedLine, f: SpanField, underscores = false): number {
    if (s.escaped(f)) {
      const text = s.string(f) as string;
      return this.put(underscores ? underscoresToSpaces(text) : text);
    }
    const span = s.span(f) as [number, number];
    const area = this.area;
    const from = area.at;
    const units = area.putBytes(s.bytes, span[0], span[1], this.rowAscii);
    if (underscores) for (let i = from; i < area.at; i++) if (area.buf[i] === 0x5f) area.buf[i] = 0x20; // '_' is never inside a multi-byte character
    return units;
  }

  /** A field that is present and not empty (as `if (e.field)` reads it). */
  private static filled(s: ScannedLine, f: SpanField): boolean {
    const span = s.span(f);
    return span !== undefined && span[1] > span[0];
  }

  /**
   * A line the byte scanner read: the same row and search text as `add` makes of its parsed entry
   * (test/memoir-index/index-rows.test.ts compares the two paths). `id`: a Python line's derived id.
   */
  addScanned(v: LineView, s: ScannedLine, id: string | undefined, baseLength: number): void {
    // An ASCII line without \u escapes has only ASCII strings (\n, \", \\ … decode to ASCII).
    this.rowAscii =
      isAscii(v.buf.subarray(v.start, v.end)) && (s.escapes === 0 || !hasUnicodeEscape(v.buf, v.start, v.end));
    this.area = this.rowAscii ? this.ascii : this.utf8;
    if (this.content === 'text') {
      this.textRow(v.line, this.rowAscii ? 0 : UTF8_ROW);
      this.nums[(this.n - 1) * S + F_TEXT] = this.scannedText(s);
      return;
    }
    const verdict = s.verdict();
    const o = this.n * S;
    const n = this.nums;
    n[o + F_LINE] = v.line;
    n[o + F_OFFSET] = v.offset;
    n[o + F_LENGTH] = v.length;
    n[o + F_AFFINITY] = s.affinityDelta;
    n[o + F_FLAGS] =
      (verdict.shareable ? 1 : 0) |
      (verdict.lenient ? 2 : 0) |
      (s.hasPreference ? 4 : 0) |
      (this.rowAscii ? 0 : UTF8_ROW);
    n[o + F_AGENT] = this.code(s.agent);
    n[o + F_SOURCE] = this.code(s.source);
    n[o + F_TYPE] = this.code(s.type());
    n[o + F_REASON] = this.code(verdict.reason);
    n[o + F_KIND] = this.code(s.responseKind);
    n[o + F_FELT] = this.code(s.felt);
    n[o + F_ID] = id === undefined ? this.putField(s, 'entry_id') : this.put(id);
    n[o + F_BASE] = baseLength;
    n[o + F_SCENE] = this.putField(s, 'scene_id');
    if (s.has('recorded_at')) {
      const [a, b] = s.span('recorded_at') as [number, number];
      // Already valid (the scanner checks it): 24 bytes ending ".sssZ" is the stored form as it is.
      if (b - a === 24 && s.bytes[a + 19] === 0x2e && s.bytes[b - 1] === 0x5a && !s.escaped('recorded_at'))
        n[o + F_RECORDED] = this.area.putBytes(s.bytes, a, b, true);
      else {
        const t = s.string('recorded_at') as string;
        n[o + F_RECORDED] = this.put(ISO_UTC.test(t) ? t : new Date(t).toISOString());
      }
    } else n[o + F_RECORDED] = -1;
    n[o + F_SUPERSEDES] = s.has('supersedes') ? this.putField(s, 'supersedes') : -1;
    this.n++;
    n[o + F_TEXT] = this.content === 'rows' ? -1 : this.scannedText(s);
  }

  /** A row of line number and search text only (content 'text'); the text's length is set after. */
  private textRow(line: number, flags: number): void {
    const o = this.n * S;
    this.nums.fill(-1, o, o + S);
    this.nums[o + F_LINE] = line;
    this.nums[o + F_FLAGS] = flags;
    this.n++;
  }

  /** searchText of a scanned line, into the row's area; its UTF-16 length. */
  private scannedText(s: ScannedLine): number {
    // scene, agent, source, then the optional parts, one per line.
    let text = this.putField(s, 'scene_id') + this.nl() + this.put(s.agent) + this.nl() + this.put(s.source);
    if (RowEncoder.filled(s, 'narrative_beat')) text += this.nl() + this.putField(s, 'narrative_beat', true);
    if (RowEncoder.filled(s, 'agent_proposed')) text += this.nl() + this.putField(s, 'agent_proposed');
    if (RowEncoder.filled(s, 'delta')) text += this.nl() + this.putField(s, 'delta');
    if (s.has('task_type')) text += this.nl() + this.putField(s, 'task_type');
    if (s.hasPreference)
      text += this.nl() + this.putField(s, 'pair_text_0') + this.nl() + this.putField(s, 'pair_text_1');
    if (s.has('comment')) text += this.nl() + this.putField(s, 'comment');
    if (s.has('revision_reason')) text += this.nl() + this.putField(s, 'revision_reason');
    return text;
  }

  take(endBytes: number, endLines: number): RowBatch {
    const batch: RowBatch = {
      entries: this.n,
      nums: this.nums.slice(0, this.n * S),
      ascii: this.ascii.take(),
      utf8: this.utf8.take(),
      dict: this.newDict,
      problems: this.problems,
      endBytes,
      endLines,
    };
    this.problems = [];
    this.newDict = [];
    this.n = 0;
    return batch;
  }
}

/** One entry of a batch, as the `entries` table stores it (after `file_id`), plus its search text. */
export interface DecodedRow {
  values: [
    line: number,
    offset: number,
    length: number,
    entryId: string,
    baseId: string | null,
    sceneId: string,
    agent: string,
    source: string,
    entryType: string,
    shareable: number,
    splitReason: string,
    lenient: number,
    recordedAt: string | null,
    affinityDelta: number,
    responseKind: string | null,
    felt: string | null,
    hasPreference: number,
    supersedes: string | null,
  ];
  text: string;
}

/** Reads batches back on the inserting side; `dict` carries the codes over from batch to batch. */
export class RowDecoder {
  private readonly dict: string[] = [];

  /** Line number and search text of each entry of a batch encoded with content 'text'. */
  eachText(batch: RowBatch, row: (line: number, text: string) => void): void {
    for (const s of batch.dict) this.dict.push(s);
    const v = batch.nums;
    const ascii = Buffer.from(batch.ascii.buffer, batch.ascii.byteOffset, batch.ascii.byteLength).toString('latin1');
    const utf8 = Buffer.from(batch.utf8.buffer, batch.utf8.byteOffset, batch.utf8.byteLength).toString('utf8');
    let pa = 0;
    let pu = 0;
    for (let i = 0; i < batch.entries; i++) {
      const o = i * S;
      const len = v[o + F_TEXT] as number;
      if (((v[o + F_FLAGS] as number) & UTF8_ROW) !== 0) row(v[o + F_LINE] as number, utf8.slice(pu, (pu += len)));
      else row(v[o + F_LINE] as number, ascii.slice(pa, (pa += len)));
    }
  }

  /** Calls `row` for each entry of the batch, in file order. */
  each(batch: RowBatch, row: (r: DecodedRow['values'], text: string) => void): void {
    for (const s of batch.dict) this.dict.push(s);
    const d = this.dict;
    const v = batch.nums;
    const ascii = Buffer.from(batch.ascii.buffer, batch.ascii.byteOffset, batch.ascii.byteLength).toString('latin1');
    const utf8 = Buffer.from(batch.utf8.buffer, batch.utf8.byteOffset, batch.utf8.byteLength).toString('utf8');
    let pa = 0;
    let pu = 0;
    let inUtf8 = false;
    const take = (len: number): string | null => {
      if (len < 0) return null;
      if (inUtf8) return utf8.slice(pu, (pu += len));
      return ascii.slice(pa, (pa += len));
    };
    for (let i = 0; i < batch.entries; i++) {
      const o = i * S;
      inUtf8 = ((v[o + F_FLAGS] as number) & UTF8_ROW) !== 0;
      const id = take(v[o + F_ID] as number) as string;
      const baseLen = v[o + F_BASE] as number;
      const scene = take(v[o + F_SCENE] as number) as string;
      const recorded = take(v[o + F_RECORDED] as number);
      const supersedes = take(v[o + F_SUPERSEDES] as number);
      const text = take(v[o + F_TEXT] as number) ?? ''; // '' when encoded without search text
      const flags = v[o + F_FLAGS] as number;
      const kind = v[o + F_KIND] as number;
      const felt = v[o + F_FELT] as number;
      row(
        [
          v[o + F_LINE] as number,
          v[o + F_OFFSET] as number,
          v[o + F_LENGTH] as number,
          id,
          baseLen >= 0 ? id.slice(0, baseLen) : null,
          scene,
          d[v[o + F_AGENT] as number] as string,
          d[v[o + F_SOURCE] as number] as string,
          d[v[o + F_TYPE] as number] as string,
          flags & 1,
          d[v[o + F_REASON] as number] as string,
          (flags >> 1) & 1,
          recorded,
          v[o + F_AFFINITY] as number,
          kind < 0 ? null : (d[kind] as string),
          felt < 0 ? null : (d[felt] as string),
          (flags >> 2) & 1,
          supersedes,
        ],
        text,
      );
    }
  }
}

/**
 * Numbers identical Python lines (`~2`, `~3`…) exactly, in compact memory: a 52-bit hash per base
 * id seen, exact counts only for repeats. A hash seen before is confirmed by re-reading the line
 * where it was first seen (a collision is a different line, never a false repeat).
 */
class Occurrences {
  private readonly seen = new IdSet();
  private readonly exact = new Map<string, number>();
  private where = new Float64Array(2 * 1024);
  private derived = 0;
  private offset = 0;
  private length = 0;

  constructor(
    private readonly fd: number,
    private readonly prior: (baseId: string) => number,
  ) {}

  /** The line about to be parsed. */
  at(offset: number, length: number): void {
    this.offset = offset;
    this.length = length;
  }

  readonly of = (base: string): number => {
    let n = this.exact.get(base);
    if (n !== undefined) {
      this.exact.set(base, n + 1);
      return n + 1;
    }
    const first = this.seen.addOrGet(base, this.derived);
    if (first === undefined) this.remember();
    if (first === undefined || this.baseAt(first) !== base) {
      // New in this run: every earlier occurrence, if any, is already indexed.
      n = this.prior(base) + 1;
      if (n > 1 || first !== undefined) this.exact.set(base, n);
      return n;
    }
    // Seen once in this run (a count above 1 would be in `exact`), with none indexed before.
    this.exact.set(base, 2);
    return 2;
  };

  private remember(): void {
    if (2 * this.derived + 2 > this.where.length) {
      const grown = new Float64Array(this.where.length * 2);
      grown.set(this.where);
      this.where = grown;
    }
    this.where[2 * this.derived] = this.offset;
    this.where[2 * this.derived + 1] = this.length;
    this.derived++;
  }

  private baseAt(i: number): string {
    const offset = this.where[2 * i] as number;
    return derivedId(readBytes(this.fd, offset, offset + (this.where[2 * i + 1] as number)));
  }
}

export function readBytes(fd: number, start: number, end: number): Buffer {
  const b = Buffer.allocUnsafe(Math.max(0, end - start));
  let got = 0;
  while (got < b.length) {
    const n = readSync(fd, b, got, b.length - got, start + got);
    if (n <= 0) break;
    got += n;
  }
  return b.subarray(0, got);
}

export function sha(buf: Uint8Array): string {
  return createHash('sha256').update(buf).digest('hex');
}

/** What the index records to see later that the first `bytes` of a file did not change. */
export interface FileHashes {
  head: string;
  tailStart: number;
  tail: string;
  /** sha256 of each 1 MiB chunk from `fromChunk` on, the partial last one included. */
  chunks: string[];
  fromChunk: number;
}

export function fileHashes(fd: number, bytes: number, indexedBefore: number): FileHashes {
  const tailStart = Math.max(0, bytes - HASH_WINDOW);
  const fromChunk = Math.floor(indexedBefore / CHUNK_BYTES);
  const chunks: string[] = [];
  for (let c = fromChunk; c * CHUNK_BYTES < bytes; c++)
    chunks.push(sha(readBytes(fd, c * CHUNK_BYTES, Math.min((c + 1) * CHUNK_BYTES, bytes))));
  return {
    head: sha(readBytes(fd, 0, Math.min(HASH_WINDOW, bytes))),
    tailStart,
    tail: sha(readBytes(fd, tailStart, bytes)),
    chunks,
    fromChunk,
  };
}
