import { closeSync, fstatSync, openSync, readSync, statSync } from 'node:fs';
import { derivedId } from '../format/entry-id.js';
import { hash52Continue, IdSet } from './id-set.js';
import { MAX_LINE_BYTES } from '../format/limits.js';
import { parseLine } from '../format/parse.js';
import { readBytes } from '../file/quarantine.js';
import { openForReading, READ_BUFFER_BYTES } from '../file/reader.js';
import { RevisionGraph, type RevisionNode } from '../derive/revisions.js';
import { entryTypeOf, entryVerdict } from '../format/split-rule.js';
import { ScannedLine } from '../format/scan/canonical-line.js';
import { normalTime, scanRange, type ChunkProblem, type LineChunk, type ScanRange } from './verify-scan.js';
import {
  blockBytes,
  claimBlock,
  DEFAULT_SPLIT_BYTES,
  MAIN_THREAD,
  READ_AHEAD,
  unclaimedFrom,
} from './verify-blocks.js';
// verify-threads.ts (worker_threads, the worker's start-up) is imported only for a file big enough to split.
import type { BlockWorker } from './verify-threads.js';

export type ProblemKind =
  | 'json'
  | 'schema'
  | 'too_long'
  | 'utf8'
  | 'lenient_split'
  | 'unread_extension'
  | 'torn_tail'
  | 'uncommitted_batch'
  | 'duplicate_id'
  | 'not_append'
  | 'identical_line'
  | 'revision';

export interface Problem {
  path: string;
  line: number | null;
  offset: number | null;
  kind: ProblemKind;
  severity: 'error' | 'warning';
  message: string;
  /** The command that fixes or explains it. */
  fix?: string;
}

export interface FileVerification {
  path: string;
  entries: number;
  bytes: number;
  problems: Problem[];
}

/** A typed column that grows: one number per entry, a few bytes each instead of an object. */
class Column<T extends Float64Array | Uint32Array> {
  length = 0;
  constructor(private data: T) {}
  push(v: number): void {
    if (this.length === this.data.length) {
      const bigger = new (this.data.constructor as new (n: number) => T)(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = v;
  }
  get(i: number): number {
    return this.data[i] as number;
  }
  set(i: number, v: number): void {
    this.data[i] = v;
  }
}

/**
 * What `verify` remembers across memoirs, in compact memory: every entry's id as a 52-bit hash
 * (IdSet) with its ordinal, and per ordinal its file, line, byte range and (for an id derived from
 * a Python line) its occurrence number. Duplicates and revision targets are then confirmed by
 * reading only the lines involved.
 */
export interface SeenIds {
  files: string[];
  ids: IdSet;
  file: Column<Uint32Array>;
  line: Column<Uint32Array>;
  offset: Column<Float64Array>;
  length: Column<Uint32Array>;
  /** 0 for an id written in the line, n for the derived id `py_…~n`. */
  occurrence: Column<Uint32Array>;
  /** Ordinals whose id hash was seen before (at `first`): to confirm. */
  candidates: { at: number; first: number }[];
  /** Entries that name another with `supersedes`. */
  revisions: VerifyNode[];
  /**
   * Lazy: a Python line's id (SHA-256 of its bytes) is computed only when a message or a revision
   * needs it, and such ids are not in `ids`. That is exact unless some written entry_id or
   * supersedes names a derived id (`py_…`): then `needsDerivedIds` is set, and the caller verifies
   * again with a fresh, eager SeenIds.
   */
  lazyDerivedIds: boolean;
  needsDerivedIds: boolean;
  /** Lazy mode: Python lines by a hash of their bytes, with their file (the same line in two memoirs has the same derived id). */
  pythonLines: IdSet;
}

export interface VerifyNode extends RevisionNode {
  ordinal: number;
}

export function newSeenIds(opts: { lazyDerivedIds?: boolean; expectedEntries?: number } = {}): SeenIds {
  const n = 1 << 12;
  return {
    lazyDerivedIds: opts.lazyDerivedIds === true,
    needsDerivedIds: false,
    pythonLines: new IdSet(16),
    files: [],
    ids: new IdSet(Math.max(1 << 16, opts.expectedEntries ?? 0)),
    file: new Column(new Uint32Array(n)),
    line: new Column(new Uint32Array(n)),
    offset: new Column(new Float64Array(n)),
    length: new Column(new Uint32Array(n)),
    occurrence: new Column(new Uint32Array(n)),
    candidates: [],
    revisions: [],
  };
}

export interface VerifyFileOptions {
  onProgress?: (bytes: number) => void;
  /** Awaited every few thousand lines: yields to the event loop, throws to cancel. */
  checkpoint?: () => Promise<void>;
  /** false: every line through parseLine (the slow path), to check the byte scanner against it. */
  scan?: boolean;
  /** Threads that read the file (its ranges read in parallel, merged in file order); default 1. */
  threads?: number;
  /** Below this size a file is read by one thread (a worker's start-up would not pay). */
  minSplitBytes?: number;
  /**
   * Tests: split the file near these byte offsets (each moved to the next line start) and read the
   * ranges one after another on this thread, to check the merge against one read of the whole.
   */
  splitAt?: readonly number[];
  /** A worker thread that failed (the ranges it claimed and that were not merged yet are read on this thread). */
  onWorkerFailure?: (err: Error) => void;
  /** Threads > 1: the size of the ranges threads claim (default verify-blocks.ts `blockBytes`). */
  blockBytes?: number;
  /**
   * Tests: the first range this thread claims (default 0): 1 makes it read ranges out of their
   * turn while a worker has the first; Infinity leaves every range to the workers (unless all fail).
   */
  mainFrom?: number;
  /** Tests: each worker fails after posting this many chunks. */
  workerFailsAfter?: number;
}

/** Below this size a file is read by one thread whatever the thread count (the default splits only much larger files: verify-blocks.ts DEFAULT_SPLIT_BYTES). */
export const MIN_SPLIT_BYTES = 8 << 20;

/**
 * Streams one memoir and reports every problem a reader would trip over: malformed lines, schema
 * errors, invalid UTF-8, lines over the size limit, lenient splits (claims shared, the strict
 * rule says private), identical repeated Python lines and a torn final fragment. Duplicate ids
 * (also across memoirs) and revision chains are checked once every file is read
 * (`confirmDuplicates`, `revisionProblems`). Never needs the index.
 */
export async function verifyFile(path: string, seen: SeenIds, opts: VerifyFileOptions = {}): Promise<FileVerification> {
  const fd = openForReading(path);
  try {
    return await verifyFd(fd, path, seen, opts);
  } finally {
    closeSync(fd);
  }
}

/**
 * The file is cut into ranges at line starts (verify-blocks.ts). One thread reads them in order;
 * with workers, every thread (this one included) claims the next unread range when it is done
 * with one, and the ranges' chunks are merged here in file order (FileMerge), which gives the
 * report of one read of the whole file. A worker that fails has its unmerged ranges read here.
 */
async function verifyFd(fd: number, path: string, seen: SeenIds, opts: VerifyFileOptions): Promise<FileVerification> {
  const size = fstatSync(fd).size;
  const threads = opts.threads ?? 1;
  const mayThread = opts.splitAt === undefined && threads > 1 && size >= (opts.minSplitBytes ?? MIN_SPLIT_BYTES);
  const threading = mayThread ? await import('./verify-threads.js') : undefined;
  const parallel = threading !== undefined && threading.verifyWorkerAvailable();
  const step = parallel ? (opts.blockBytes ?? blockBytes(size, threads)) : 0;
  const hints =
    opts.splitAt ??
    (parallel ? Array.from({ length: Math.ceil(size / step) - 1 }, (_, i) => Math.floor((i + 1) * step)) : []);
  const starts = lineStarts(fd, size, hints);
  const ranges: ScanRange[] = [0, ...starts].map((from, i) => ({ from, until: starts[i] ?? size }));
  const scanOpts = { lazy: seen.lazyDerivedIds, scan: opts.scan !== false };
  const merge = new FileMerge(fd, path, seen);
  // Bytes read so far per range (progress).
  const reached = ranges.map((r) => r.from);
  const progress = (): void => {
    if (opts.onProgress) opts.onProgress(ranges.reduce((sum, r, k) => sum + (reached[k] ?? r.from) - r.from, 0));
  };
  const owners = new Int32Array(new SharedArrayBuffer(4 * ranges.length));
  // Ranges merged so far: a thread claims no range READ_AHEAD or more past it.
  const mergedUpTo = new Int32Array(new SharedArrayBuffer(4));
  const workers = parallel
    ? Array.from(
        { length: threads - 1 },
        (_, i) =>
          new threading.BlockWorker(
            {
              fd,
              blocks: ranges,
              owners: owners.buffer as SharedArrayBuffer,
              merged: mergedUpTo.buffer as SharedArrayBuffer,
              id: MAIN_THREAD + 1 + i,
              ...scanOpts,
              ...(opts.workerFailsAfter !== undefined ? { failAfter: opts.workerFailsAfter } : {}),
            },
            (k, c) => {
              if (c.bytes >= 0) reached[k] = c.bytes;
            },
          ),
      )
    : [];
  const reported = new Set<BlockWorker>();
  const failed = (w: BlockWorker): boolean => {
    if (w.failure === undefined) return false;
    if (!reported.has(w)) opts.onWorkerFailure?.(w.failure);
    reported.add(w);
    return true;
  };
  // One scanner state and one read buffer for every range this thread reads.
  const scanned = new ScannedLine();
  const buffer = parallel ? Buffer.allocUnsafe(READ_BUFFER_BYTES) : undefined;
  // Ranges this thread read before their turn to be merged (a worker holds an earlier one).
  const early = new Map<number, LineChunk[]>();
  let next = 0; // the next range to merge
  const merged = (): void => {
    next++;
    Atomics.store(mergedUpTo, 0, next);
    Atomics.notify(mergedUpTo, 0);
  };
  const mergeChunks = async (list: LineChunk[]): Promise<void> => {
    for (const c of list) {
      merge.add(c);
      await opts.checkpoint?.();
    }
    merged();
  };
  /** Reads range k here: merged as it is read when it is next in file order, else kept for its turn. */
  const readHere = async (k: number): Promise<void> => {
    const inTurn = k === next;
    const kept: LineChunk[] = [];
    for (const c of scanRange(fd, ranges[k] as ScanRange, { ...scanOpts, scanned, buffer, freshChunks: !inTurn })) {
      if (c.bytes >= 0) reached[k] = c.bytes;
      if (inTurn) merge.add(c);
      else kept.push(c);
      progress();
      await opts.checkpoint?.();
    }
    if (inTurn) merged();
    else early.set(k, kept);
  };
  /** Merges every range that is ready, in file order (up to one a worker is still reading). */
  const mergeReady = async (): Promise<void> => {
    while (next < ranges.length) {
      const mine = early.get(next);
      if (mine !== undefined) {
        early.delete(next);
        await mergeChunks(mine);
        continue;
      }
      const owner = Atomics.load(owners, next);
      const w = workers[owner - MAIN_THREAD - 1];
      const theirs = w?.take(next);
      if (theirs === undefined) return;
      await mergeChunks(theirs);
    }
  };
  /**
   * One step of waiting for range `next`: read it here when its worker failed (none of its chunks
   * was merged) or when it is unclaimed and no worker is left; else wait for a worker. False when
   * every range is merged.
   */
  const awaitNext = async (): Promise<boolean> => {
    await mergeReady();
    if (next >= ranges.length) return false;
    const owner = Atomics.load(owners, next);
    const w = workers[owner - MAIN_THREAD - 1];
    const alive = workers.filter((x) => !failed(x));
    if (w !== undefined ? failed(w) : alive.length === 0) {
      if (owner !== 0) Atomics.store(owners, next, MAIN_THREAD);
      else if (Atomics.compareExchange(owners, next, 0, MAIN_THREAD) !== 0) return true;
      reached[next] = (ranges[next] as ScanRange).from;
      await readHere(next);
      return true;
    }
    progress();
    await (w !== undefined ? w.event() : Promise.race(alive.map((x) => x.event())));
    await opts.checkpoint?.();
    return true;
  };
  try {
    // This thread claims ranges as the workers do, up to READ_AHEAD ranges past the next to merge
    // (so that a slow worker holding that one does not make it keep the rest of the file).
    let from = workers.length > 0 ? (opts.mainFrom ?? 0) : 0;
    for (;;) {
      await mergeReady();
      const k = claimBlock(owners, from, MAIN_THREAD, next + READ_AHEAD);
      if (k >= 0) {
        from = k + 1;
        await readHere(k);
      } else if (!unclaimedFrom(owners, from) || !(await awaitNext())) break;
    }
    // Every range is claimed (or, in tests, left to the workers): merge them in order as workers deliver.
    while (await awaitNext());
  } finally {
    for (const w of workers) w.stop();
  }
  opts.onProgress?.(merge.bytes);
  return { path, entries: merge.entries, bytes: merge.bytes, problems: merge.problems };
}

/** The line starts at or after each hint (0 < start < size, increasing); a hint with no newline within reach is dropped. */
export function lineStarts(fd: number, size: number, hints: readonly number[]): number[] {
  const out: number[] = [];
  const block = Buffer.allocUnsafe(64 << 10);
  for (const h of [...hints].sort((a, b) => a - b)) {
    if (!(h > 0 && h < size)) continue;
    // The first newline at or after h - 1: the line start after it is h itself when h - 1 ends a line.
    let at = -1;
    for (let pos = h - 1; at < 0 && pos < size && pos < h + 2 * MAX_LINE_BYTES; pos += block.length) {
      const n = readSync(fd, block, 0, Math.min(block.length, size - pos), pos);
      if (n <= 0) break;
      const i = block.subarray(0, n).indexOf(10);
      if (i >= 0) at = pos + i + 1;
    }
    if (at > 0 && at < size && at > (out[out.length - 1] ?? 0)) out.push(at);
  }
  return out;
}

/**
 * Merges a file's chunks, in file order, into what `verify` remembers (SeenIds) and the file's
 * problems: line numbers go on from the previous range, identical Python lines are numbered
 * across ranges (`py_…~n`), and the ids that depend on that number are completed here.
 */
class FileMerge {
  entries = 0;
  bytes = 0;
  readonly problems: Problem[] = [];
  private lineBase = 0;
  private readonly fileNo: number;
  private readonly occurrences: OccurrenceCounter;

  constructor(
    private readonly fd: number,
    private readonly path: string,
    private readonly seen: SeenIds,
  ) {
    this.fileNo = seen.files.push(path) - 1;
    this.occurrences = new OccurrenceCounter(fd);
  }

  add(c: LineChunk): void {
    const seen = this.seen;
    const lazy = seen.lazyDerivedIds;
    const firstOrdinal = seen.file.length;
    let p = 0; // the chunk's next problem: problems go out in line order
    for (let i = 0; i < c.count; i++) {
      const offset = c.offset[i] as number;
      const length = c.length[i] as number;
      const py = c.pyHash[i] as number;
      let idHash = c.idHash[i] as number;
      let occurrence = 0;
      if (py >= 0) {
        if (lazy) this.pythonLine(py);
        occurrence = this.occurrences.next(py, offset, length);
        if (occurrence > 1 && idHash >= 0) idHash = hash52Continue(idHash, `~${occurrence}`);
      }
      const ordinal = seen.file.length;
      seen.file.push(this.fileNo);
      seen.line.push(this.lineBase + (c.line[i] as number));
      seen.offset.push(offset);
      seen.length.push(length);
      seen.occurrence.push(occurrence);
      if (idHash >= 0) {
        const first = seen.ids.addOrGetHash(idHash, ordinal);
        if (first !== undefined) seen.candidates.push({ at: ordinal, first });
      }
      if (occurrence > 1) {
        const line = c.line[i] as number;
        while (p < c.problems.length && (c.problems[p] as ChunkProblem).line <= line)
          this.problem(c.problems[p++] as ChunkProblem);
        this.problems.push({
          path: this.path,
          line: this.lineBase + line,
          offset,
          kind: 'identical_line',
          severity: 'warning',
          message: `identical to an earlier line (derived id ${derivedId(readBytes(this.fd, offset, length), occurrence)})`,
        });
      }
    }
    while (p < c.problems.length) this.problem(c.problems[p++] as ChunkProblem);
    for (const r of c.revisions) {
      const ordinal = firstOrdinal + r.at;
      const occurrence = seen.occurrence.get(ordinal);
      const entryId = r.python && occurrence > 1 ? `${r.entryId}~${occurrence}` : r.entryId;
      seen.revisions.push({
        entry_id: entryId,
        supersedes: r.supersedes,
        recorded_at: r.recordedAt,
        order: ordinal,
        entry_type: r.type,
        shareable: r.shareable,
        ordinal,
      });
    }
    if (c.needsDerivedIds) seen.needsDerivedIds = true;
    this.entries += c.count;
    if (c.bytes >= 0) this.bytes = c.bytes;
    if (c.last) this.lineBase += c.lines;
  }

  private problem(q: ChunkProblem): void {
    const line = this.lineBase + q.line;
    if (q.kind === 'torn_tail')
      this.problems.push({
        path: this.path,
        line,
        offset: q.offset,
        kind: q.kind,
        severity: 'error',
        message: q.message,
        fix: `kourai memoir repair --memoir ${this.path}`,
      });
    else
      this.problems.push({
        path: this.path,
        line,
        offset: q.offset,
        kind: q.kind,
        // pydantic ignores the key: the line is an entry, only that value is not read
        severity: q.kind === 'unread_extension' ? 'warning' : 'error',
        message: q.message,
      });
  }

  /** A Python line seen in lazy mode: the same line in two memoirs would share a derived id. */
  private pythonLine(h: number): void {
    const other = this.seen.pythonLines.addOrGetHash(h, this.fileNo);
    if (other !== undefined && other !== this.fileNo) this.seen.needsDerivedIds = true;
  }
}

/**
 * Numbers identical Python lines within one file (`py_…`, `py_…~2`…) in compact memory: a table
 * from a hash of the line to its first occurrence's count and byte range, lines with the same hash
 * chained. A line is counted as a repeat only when its bytes equal the earlier line's.
 */
class OccurrenceCounter {
  private readonly set = new IdSet();
  // Typed columns, not the line objects: a retained RawLine keeps its text, which made verify hold
  // every Python line of a memoir (~440 MB peak at 1M entries).
  private readonly counts = new Column(new Uint32Array(1 << 12));
  private readonly offsets = new Column(new Float64Array(1 << 12));
  private readonly lengths = new Column(new Uint32Array(1 << 12));
  /** The next slot with the same hash, or 0xffffffff. */
  private readonly chain = new Column(new Uint32Array(1 << 12));

  constructor(private readonly fd: number) {}

  /** The occurrence number of the line at [offset, offset + length), keyed by `hash` (any hash of its bytes). */
  next(hash: number, offset: number, length: number): number {
    const fresh = this.counts.length;
    let slot = this.set.addOrGetHash(hash, fresh);
    if (slot !== undefined) {
      let current: Uint8Array | undefined;
      for (;;) {
        if (this.lengths.get(slot) === length) {
          current ??= readBytes(this.fd, offset, length);
          if (readBytes(this.fd, this.offsets.get(slot), length).equals(current)) {
            const n = this.counts.get(slot) + 1;
            this.counts.set(slot, n);
            return n;
          }
        }
        const next = this.chain.get(slot);
        if (next === 0xffffffff) break;
        slot = next;
      }
      this.chain.set(slot, fresh); // a different line with the same hash: chained
    }
    this.counts.push(1);
    this.offsets.push(offset);
    this.lengths.push(length);
    this.chain.push(0xffffffff);
    return 1;
  }
}

/** The exact id of the entry at an ordinal (read back from its line). */
function idAt(seen: SeenIds, ordinal: number): string | undefined {
  const path = seen.files[seen.file.get(ordinal)] as string;
  const text = readLine(path, seen.offset.get(ordinal), seen.length.get(ordinal));
  const parsed = parseLine(text, () => 1);
  if (!parsed.ok) return undefined;
  const occ = seen.occurrence.get(ordinal);
  return occ === 0 ? parsed.entry.entry_id : derivedId(text, occ);
}

function readLine(path: string, offset: number, length: number): string {
  const fd = openSync(path, 'r');
  try {
    return readBytes(fd, offset, length).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function where(seen: SeenIds, ordinal: number): string {
  return `${seen.files[seen.file.get(ordinal)]}:${seen.line.get(ordinal)}`;
}

/**
 * Confirms candidate duplicates with exact ids (reading only the lines involved) and returns the
 * real ones as problems.
 */
export function confirmDuplicates(seen: SeenIds): Problem[] {
  const out: Problem[] = [];
  for (const c of seen.candidates) {
    const id = idAt(seen, c.at);
    if (id === undefined || id !== idAt(seen, c.first)) continue; // a hash collision, not a duplicate
    out.push({
      path: seen.files[seen.file.get(c.at)] as string,
      line: seen.line.get(c.at),
      offset: seen.offset.get(c.at),
      kind: 'duplicate_id',
      severity: 'error',
      message: `entry id ${id} was already used at ${where(seen, c.first)}`,
    });
  }
  return out;
}

const LABEL = {
  cycle: 'revision cycle',
  dangling: 'dangling revision',
  fork: 'forked revision',
  type_change: 'revision changes the entry type',
  widens_privacy: 'revision widens privacy',
} as const;

/**
 * The revision pass: cycles, dangling `supersedes`, forks (two revisions of one entry), revisions
 * that change the entry type or claim to be more shareable than what they replace. The graph is
 * the revisions seen while streaming plus the entries they name, read back by offset.
 */
export function revisionProblems(seen: SeenIds): Problem[] {
  if (seen.revisions.length === 0) return [];
  const nodes = new Map<string, VerifyNode>();
  for (const r of seen.revisions) if (!nodes.has(r.entry_id)) nodes.set(r.entry_id, r);
  for (const r of seen.revisions) {
    const target = r.supersedes as string;
    if (nodes.has(target)) continue;
    const ordinal = seen.ids.get(target);
    if (ordinal === undefined || idAt(seen, ordinal) !== target) continue; // not in these memoirs: dangling
    const path = seen.files[seen.file.get(ordinal)] as string;
    const text = readLine(path, seen.offset.get(ordinal), seen.length.get(ordinal));
    const parsed = parseLine(text, () => 1);
    if (!parsed.ok) continue;
    const e = parsed.entry;
    const type = entryTypeOf(e);
    nodes.set(target, {
      entry_id: target,
      supersedes: typeof e.supersedes === 'string' ? e.supersedes : null,
      recorded_at: normalTime(e.recorded_at),
      order: ordinal,
      entry_type: type,
      shareable: entryVerdict(e).shareable,
      ordinal,
    });
  }
  const graph = new RevisionGraph(nodes.values());
  return graph.problems().map((p) => {
    const node = graph.get(p.entry_id);
    const ordinal = node?.ordinal;
    return {
      path: ordinal !== undefined ? (seen.files[seen.file.get(ordinal)] as string) : (seen.files[0] ?? ''),
      line: ordinal !== undefined ? seen.line.get(ordinal) : null,
      offset: ordinal !== undefined ? seen.offset.get(ordinal) : null,
      kind: 'revision',
      severity: 'error',
      message: `${LABEL[p.kind]}: ${p.entry_id}: ${p.message}`,
      fix: `kourai memoir show ${p.entry_id} --history`,
    } satisfies Problem;
  });
}

export interface MemoirsVerification {
  /** Per path, in order. */
  files: FileVerification[];
  /** Duplicate ids (also across memoirs) and revision-chain findings. */
  crossFile: Problem[];
}

export interface VerifyMemoirsOptions extends Pick<
  VerifyFileOptions,
  | 'checkpoint'
  | 'scan'
  | 'threads'
  | 'minSplitBytes'
  | 'onWorkerFailure'
  | 'blockBytes'
  | 'mainFrom'
  | 'workerFailsAfter'
> {
  onProgress?: (file: number, bytes: number) => void;
  /** Tests: per file, where to split it (VerifyFileOptions.splitAt). */
  splitAt?: (path: string, size: number) => readonly number[];
}

/**
 * Verifies memoirs together (ids are unique across all of them), each file read by `threads`
 * threads (default: one per idle core for files of DEFAULT_SPLIT_BYTES or more, else one). Python lines' ids are computed lazily;
 * should a written id or `supersedes` name a derived id, the memoirs are read again with every
 * derived id computed (exact either way; the second read only costs time, and only then).
 */
export async function verifyMemoirs(
  paths: readonly string[],
  opts: VerifyMemoirsOptions = {},
): Promise<MemoirsVerification> {
  const sizes = paths.map((p) => statSync(p).size);
  const pass = async (seen: SeenIds): Promise<MemoirsVerification> => {
    const files: FileVerification[] = [];
    for (const [i, p] of paths.entries()) {
      const size = sizes[i] ?? 0;
      const threads =
        opts.threads ??
        (size < DEFAULT_SPLIT_BYTES
          ? 1
          : (await import('./verify-threads.js')).defaultThreads(undefined, undefined, size));
      const fileOpts: VerifyFileOptions = { onProgress: (b) => opts.onProgress?.(i, b), threads };
      if (opts.checkpoint) fileOpts.checkpoint = opts.checkpoint;
      if (opts.scan === false) fileOpts.scan = false;
      if (opts.minSplitBytes !== undefined) fileOpts.minSplitBytes = opts.minSplitBytes;
      if (opts.onWorkerFailure) fileOpts.onWorkerFailure = opts.onWorkerFailure;
      if (opts.blockBytes !== undefined) fileOpts.blockBytes = opts.blockBytes;
      if (opts.mainFrom !== undefined) fileOpts.mainFrom = opts.mainFrom;
      if (opts.workerFailsAfter !== undefined) fileOpts.workerFailsAfter = opts.workerFailsAfter;
      if (opts.splitAt) fileOpts.splitAt = opts.splitAt(p, sizes[i] ?? 0);
      files.push(await verifyFile(p, seen, fileOpts));
    }
    return { files, crossFile: seen.needsDerivedIds ? [] : [...confirmDuplicates(seen), ...revisionProblems(seen)] };
  };
  // Sized for about 1 KiB a line (entries are 300-800 B): at most one growth of the id table.
  const expectedEntries = Math.ceil(sizes.reduce((sum, s) => sum + s, 0) / 1024);
  const lazy = newSeenIds({ lazyDerivedIds: true, expectedEntries });
  const first = await pass(lazy);
  return lazy.needsDerivedIds ? pass(newSeenIds({ expectedEntries })) : first;
}
