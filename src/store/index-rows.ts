import { createHash } from 'node:crypto';
import { readSync } from 'node:fs';
import { derivedId } from '../memoir/entry-id.js';
import { IdSet } from '../memoir/id-set.js';
import { readRawLinesFd, toRecord, type MemoirRecord } from '../memoir/reader.js';
import type { MemoirEntry } from '../memoir/schema.js';
import { entryTypeOf, entryVerdict } from '../memoir/split-rule.js';

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
const F_FLAGS = 4; // 1 shareable, 2 lenient, 4 has_preference
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
  /** UTF-8 of the rows' strings, one after the other (lengths in `nums`, in UTF-16 units). */
  strs: Uint8Array;
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

/** The lines of `searchText`. */
function searchParts(e: MemoirEntry): string[] {
  const parts: string[] = [e.scene_id, e.agent, e.source];
  if (e.narrative_beat) parts.push(e.narrative_beat.replace(/_/g, ' '));
  if (e.agent_proposed) parts.push(e.agent_proposed);
  if (e.player_response?.delta) parts.push(e.player_response.delta);
  if (e.context) parts.push(e.context.task_type);
  if (e.training_label?.preference_pair) for (const p of e.training_label.preference_pair) parts.push(p.text);
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
}

/**
 * Reads a file's records from `fromOffset` and yields them as row batches. Stops at a torn tail
 * (a last line without its newline); blank lines after the last record are consumed up to the
 * last newline (the final batch's `endBytes`).
 */
export function* encodeRows(fd: number, opts: EncodeOptions): Generator<RowBatch> {
  const enc = new RowEncoder(opts.batchEntries);
  const occurrences = new Occurrences(fd, opts.priorOccurrences);
  let endBytes = opts.fromOffset;
  let endLines = opts.fromLine - 1;
  for (const raw of readRawLinesFd(fd, { fromOffset: opts.fromOffset, fromLine: opts.fromLine, untilOffset: opts.untilOffset })) {
    occurrences.at(raw.offset, raw.length);
    const rec = toRecord(raw, occurrences.of);
    if (rec.kind === 'torn') break;
    enc.add(rec);
    endBytes = rec.offset + rec.length + 1;
    endLines = rec.line;
    if (enc.full()) yield enc.take(endBytes, endLines);
  }
  if (opts.untilOffset > endBytes) {
    const tail = readBytes(fd, endBytes, opts.untilOffset);
    const nl = tail.lastIndexOf(10);
    if (nl >= 0) endBytes += nl + 1;
  }
  yield enc.take(endBytes, endLines);
}

class RowEncoder {
  private nums: Float64Array;
  private strs = Buffer.allocUnsafe(8 << 20);
  private at = 0;
  private problems: RowBatch['problems'] = [];
  private n = 0;
  private readonly codes = new Map<string, number>();
  private newDict: string[] = [];

  constructor(private readonly batchEntries: number) {
    this.nums = new Float64Array(batchEntries * S);
  }

  full(): boolean {
    return this.n + this.problems.length >= this.batchEntries;
  }

  /** Appends a string's UTF-8; returns its length in UTF-16 units. */
  private put(s: string): number {
    if (this.at + 3 * s.length + 1 > this.strs.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.strs.length * 2, this.at + 3 * s.length + 1));
      this.strs.copy(grown, 0, 0, this.at);
      this.strs = grown;
    }
    this.at += this.strs.write(s, this.at);
    return s.length;
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

  add(rec: MemoirRecord): void {
    if (rec.kind === 'torn') return;
    if (rec.kind === 'invalid') {
      this.problems.push([rec.line, rec.offset, rec.length, rec.problem, rec.message]);
      return;
    }
    const e = rec.entry;
    const verdict = entryVerdict(e);
    const t = e.recorded_at;
    const recorded = typeof t === 'string' ? (ISO_UTC.test(t) ? t : new Date(t).toISOString()) : null;
    const supersedes = typeof e.supersedes === 'string' ? e.supersedes : null;
    const o = this.n * S;
    const v = this.nums;
    v[o + F_LINE] = rec.line;
    v[o + F_OFFSET] = rec.offset;
    v[o + F_LENGTH] = rec.length;
    v[o + F_AFFINITY] = e.affinity_delta;
    v[o + F_FLAGS] = (verdict.shareable ? 1 : 0) | (verdict.lenient ? 2 : 0) | (e.training_label?.preference_pair ? 4 : 0);
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
    const parts = searchParts(e);
    let text = this.put(parts[0] as string);
    for (let i = 1; i < parts.length; i++) text += this.put('\n') + this.put(parts[i] as string);
    v[o + F_TEXT] = text;
    this.n++;
  }

  take(endBytes: number, endLines: number): RowBatch {
    const batch: RowBatch = {
      entries: this.n,
      nums: this.nums.slice(0, this.n * S),
      strs: new Uint8Array(this.strs.subarray(0, this.at)),
      dict: this.newDict,
      problems: this.problems,
      endBytes,
      endLines,
    };
    this.at = 0;
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

  /** Calls `row` for each entry of the batch, in file order. */
  each(batch: RowBatch, row: (r: DecodedRow['values'], text: string) => void): void {
    for (const s of batch.dict) this.dict.push(s);
    const d = this.dict;
    const v = batch.nums;
    const strs = Buffer.from(batch.strs.buffer, batch.strs.byteOffset, batch.strs.byteLength).toString('utf8');
    let p = 0;
    const take = (len: number): string | null => {
      if (len < 0) return null;
      const s = strs.slice(p, p + len);
      p += len;
      return s;
    };
    for (let i = 0; i < batch.entries; i++) {
      const o = i * S;
      const id = take(v[o + F_ID] as number) as string;
      const baseLen = v[o + F_BASE] as number;
      const scene = take(v[o + F_SCENE] as number) as string;
      const recorded = take(v[o + F_RECORDED] as number);
      const supersedes = take(v[o + F_SUPERSEDES] as number);
      const text = take(v[o + F_TEXT] as number) as string;
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
  for (let c = fromChunk; c * CHUNK_BYTES < bytes; c++) chunks.push(sha(readBytes(fd, c * CHUNK_BYTES, Math.min((c + 1) * CHUNK_BYTES, bytes))));
  return { head: sha(readBytes(fd, 0, Math.min(HASH_WINDOW, bytes))), tailStart, tail: sha(readBytes(fd, tailStart, bytes)), chunks, fromChunk };
}
