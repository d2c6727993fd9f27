import { derivedId } from '../format/entry-id.js';
import { hash52, hash52Ascii } from './id-set.js';
import { rawLineOf, readLineViewsFd, toRecord, type LineView } from '../file/reader.js';
import { ScannedLine, scanLine } from '../format/scan/canonical-line.js';
import { entryTypeOf, entryVerdict, SPLIT_REASON_TEXT, type SplitVerdict } from '../format/split-rule.js';
import type { EntryType } from '../format/sources.js';
import { describeUnread, unreadOf } from '../format/unread.js';

/**
 * The per-line half of `verify` (verify.ts is the other): reads one byte range of a memoir and
 * turns each line into a few numbers, in chunks that a worker thread can hand over as transferable
 * buffers. Nothing here depends on what came before the range: line numbers are counted from the
 * range's start, identical Python lines are not numbered (only hashed), so that ranges read in
 * parallel merge, in file order, into the same report as one read of the whole file.
 */

/** A problem found in one line, its line number counted from the range's start (1 = its first line). */
export interface ChunkProblem {
  line: number;
  offset: number;
  kind: 'json' | 'schema' | 'too_long' | 'utf8' | 'lenient_split' | 'torn_tail' | 'unread_extension';
  message: string;
}

/** An entry that names another with `supersedes`. */
export interface ChunkRevision {
  /** Its index among the chunk's entries. */
  at: number;
  /** The written id; for a Python line its derived id without the `~n` of identical lines. */
  entryId: string;
  python: boolean;
  supersedes: string;
  recordedAt: string | null;
  type: EntryType;
  shareable: boolean;
}

/** Up to CHUNK_LINES lines of a range: one slot per entry in each column, problems and revisions beside. */
export interface LineChunk {
  count: number;
  /** Line numbers counted from the range's start. */
  line: Uint32Array;
  offset: Float64Array;
  length: Uint32Array;
  /** hash52 of the id: written, or (eager mode) a Python line's base derived id; -1 for a Python line in lazy mode. */
  idHash: Float64Array;
  /** A Python line: a cheap hash of its bytes (to number identical lines); -1 for a written id. */
  pyHash: Float64Array;
  problems: ChunkProblem[];
  revisions: ChunkRevision[];
  /** A written entry_id or supersedes names a derived id (`py_…`): lazy ids are not enough. */
  needsDerivedIds: boolean;
  /** The file offset just past the last line read so far (-1: no line yet). */
  bytes: number;
  /** In the range's last chunk: how many lines the range holds (blank ones included). */
  lines: number;
  last: boolean;
}

export interface ScanRange {
  /** A line start. */
  from: number;
  /** A line start, or the file's size. */
  until: number;
}

export const CHUNK_LINES = 4096;

export function newChunk(capacity = CHUNK_LINES): LineChunk {
  return chunkOf(
    0,
    new Uint32Array(capacity),
    new Float64Array(capacity),
    new Uint32Array(capacity),
    new Float64Array(capacity),
    new Float64Array(capacity),
    [],
    [],
    false,
    -1,
    0,
    false,
  );
}

// One factory per object kind, for chunks made here and chunks received from a worker alike: an
// object rebuilt by postMessage has another hidden class than a literal, and the merge that reads
// both kinds was deoptimized and recompiled ("wrong map") a dozen times per memoir.
function chunkOf(
  count: number,
  line: Uint32Array,
  offset: Float64Array,
  length: Uint32Array,
  idHash: Float64Array,
  pyHash: Float64Array,
  problems: ChunkProblem[],
  revisions: ChunkRevision[],
  needsDerivedIds: boolean,
  bytes: number,
  lines: number,
  last: boolean,
): LineChunk {
  return { count, line, offset, length, idHash, pyHash, problems, revisions, needsDerivedIds, bytes, lines, last };
}

function problemOf(line: number, offset: number, kind: ChunkProblem['kind'], message: string): ChunkProblem {
  return { line, offset, kind, message };
}

function revisionOf(
  at: number,
  entryId: string,
  python: boolean,
  supersedes: string,
  recordedAt: string | null,
  type: EntryType,
  shareable: boolean,
): ChunkRevision {
  return { at, entryId, python, supersedes, recordedAt, type, shareable };
}

/** A chunk received from a worker (structured clone), rebuilt with this thread's factories. */
export function adoptChunk(c: LineChunk): LineChunk {
  return chunkOf(
    c.count,
    c.line,
    c.offset,
    c.length,
    c.idHash,
    c.pyHash,
    c.problems.map((q) => problemOf(q.line, q.offset, q.kind, q.message)),
    c.revisions.map((r) => revisionOf(r.at, r.entryId, r.python, r.supersedes, r.recordedAt, r.type, r.shareable)),
    c.needsDerivedIds,
    c.bytes,
    c.lines,
    c.last,
  );
}

function clear(c: LineChunk): void {
  c.count = 0;
  c.problems = [];
  c.revisions = [];
  c.needsDerivedIds = false;
}

export interface ScanOptions {
  /** true: a Python line's id (SHA-256 of its bytes) is computed only where a revision needs it. */
  lazy: boolean;
  /** false: every line through parseLine (the slow path), to check the byte scanner against it. */
  scan?: boolean;
  /** The scanner's state, reused by a thread across ranges (default: a new one). */
  scanned?: ScannedLine;
  /** The read buffer (reader.ts READ_BUFFER_BYTES), reused by a thread across ranges (default: a new one). */
  buffer?: Buffer;
  /**
   * A fresh chunk for each batch (a worker transfers them); by default one chunk is reused, so
   * each must be consumed before the next is asked for.
   */
  freshChunks?: boolean;
}

/**
 * Yields the range's lines in chunks of CHUNK_LINES lines; the last chunk has `last` and `lines`.
 * Canonical lines go through the byte scanner; anything else (and every error) through parseLine.
 */
export function* scanRange(fd: number, range: ScanRange, opts: ScanOptions): Generator<LineChunk> {
  const lazy = opts.lazy;
  const scan = opts.scan !== false;
  const scanned = opts.scanned ?? new ScannedLine();
  let c = newChunk();
  let views = 0;
  // No closures here: a closure would put these locals in a context, and TurboFan's code for this
  // loop (specialized to that context) died with each range: with ranges of 1-8 MiB the whole
  // scanner was deoptimized ("weak objects") and recompiled after every few ranges.
  const lines = readLineViewsFd(fd, {
    fromOffset: range.from,
    untilOffset: range.until,
    ...(opts.buffer ? { buffer: opts.buffer } : {}),
  });
  for (;;) {
    const r = lines.next();
    if (r.done === true) {
      c.lines = r.value;
      c.last = true;
      yield c;
      return;
    }
    const v = r.value;
    c.bytes = v.offset + v.length + (v.terminated ? 1 : 0);
    if (scan && v.terminated && v.flaw === undefined && scanLine(v.buf, v.start, v.end, scanned)) {
      const supersedes = scanned.string('supersedes');
      const verdict = scanned.verdict();
      if (scanned.has('entry_id')) {
        const s = scanned.start('entry_id');
        const e = scanned.end('entry_id');
        // The scanner takes ASCII ids only, so the bytes hash as the string does.
        if (lazy && e - s >= 3 && v.buf[s] === 0x70 && v.buf[s + 1] === 0x79 && v.buf[s + 2] === 0x5f)
          c.needsDerivedIds = true; // "py_"
        const i = pushEntry(c, v, hash52Ascii(v.buf, s, e), -1, verdict);
        if (supersedes !== null)
          addRevision(
            c,
            lazy,
            i,
            scanned.string('entry_id') as string,
            false,
            supersedes,
            scanned.string('recorded_at'),
            scanned.type(),
            verdict,
          );
      } else {
        const base = !lazy || supersedes !== null ? derivedId(v.buf.subarray(v.start, v.end)) : '';
        const i = pushEntry(c, v, lazy ? -1 : hash52(base), lineHash(v.buf, v.start, v.end), verdict);
        if (supersedes !== null)
          addRevision(c, lazy, i, base, true, supersedes, scanned.string('recorded_at'), scanned.type(), verdict);
      }
    } else {
      // Identical Python lines are numbered when the chunks are merged: here every one is the first.
      const rec = toRecord(rawLineOf(v), firstOccurrence);
      if (rec.kind === 'torn') {
        c.problems.push(
          problemOf(
            rec.line,
            rec.offset,
            'torn_tail',
            `torn final fragment of ${rec.length} bytes (a write that never finished)`,
          ),
        );
      } else if (rec.kind === 'invalid') {
        c.problems.push(problemOf(rec.line, rec.offset, rec.problem, rec.message));
      } else {
        const entry = rec.entry;
        const unread = unreadOf(entry);
        if (unread !== undefined)
          for (const [key, u] of unread)
            c.problems.push(
              problemOf(v.line, v.offset, 'unread_extension', `${describeUnread(key, u)}: kept as written, not read`),
            );
        if (lazy && !rec.derived && entry.entry_id.startsWith('py_')) c.needsDerivedIds = true;
        const verdict = entryVerdict(entry);
        const i = pushEntry(
          c,
          v,
          lazy && rec.derived ? -1 : hash52(entry.entry_id),
          rec.derived ? lineHash(v.buf, v.start, v.end) : -1,
          verdict,
        );
        if (typeof entry.supersedes === 'string')
          addRevision(
            c,
            lazy,
            i,
            entry.entry_id,
            rec.derived,
            entry.supersedes,
            typeof entry.recorded_at === 'string' ? entry.recorded_at : null,
            entryTypeOf(entry),
            verdict,
          );
      }
    }
    if (++views % CHUNK_LINES === 0) {
      yield c;
      if (opts.freshChunks === true) c = newChunk();
      else clear(c);
    }
  }
}

const firstOccurrence = (): number => 1;

/** One entry into the chunk's columns (and its lenient split into its problems): its index in the chunk. */
function pushEntry(c: LineChunk, v: LineView, idHash: number, pyHash: number, verdict: SplitVerdict): number {
  if (verdict.lenient) {
    c.problems.push(
      problemOf(
        v.line,
        v.offset,
        'lenient_split',
        `split says shared but the entry is private: ${SPLIT_REASON_TEXT[verdict.reason]}; kourai treats it as private`,
      ),
    );
  }
  const i = c.count++;
  c.line[i] = v.line;
  c.offset[i] = v.offset;
  c.length[i] = v.length;
  c.idHash[i] = idHash;
  c.pyHash[i] = pyHash;
  return i;
}

function addRevision(
  c: LineChunk,
  lazy: boolean,
  i: number,
  entryId: string,
  python: boolean,
  supersedes: string,
  recordedAt: string | null,
  type: EntryType,
  verdict: SplitVerdict,
): void {
  c.revisions.push(revisionOf(i, entryId, python, supersedes, normalTime(recordedAt), type, verdict.shareable));
  if (lazy && supersedes.startsWith('py_')) c.needsDerivedIds = true;
}

export function normalTime(t: unknown): string | null {
  if (typeof t !== 'string') return null;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/**
 * A cheap 52-bit hash of a line's bytes for numbering identical lines (the merge confirms matches
 * byte for byte): its length, its first 64 bytes, then every 5th byte. SHA-256 (the derived id) is
 * only computed when an id is needed.
 */
export function lineHash(b: Uint8Array, s: number, e: number): number {
  let h1 = (0x811c9dc5 ^ (e - s)) & 0x3ffffff;
  let h2 = 0x01000193;
  const head = Math.min(e, s + 64);
  let i = s;
  for (; i < head; i++) {
    const c = b[i] as number;
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 6;
    h2 = Math.imul(h2 ^ (c + 0x9e37), 0x5bd1e995) >>> 6;
  }
  for (; i < e; i += 5) {
    const c = b[i] as number;
    h1 = Math.imul(h1 ^ c, 0x01000193) >>> 6;
    h2 = Math.imul(h2 ^ (c + 0x9e37), 0x5bd1e995) >>> 6;
  }
  return h1 * 67108864 + h2;
}
