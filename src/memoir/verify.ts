import { openForReading } from './reader.js';
import { closeSync, openSync, statSync } from 'node:fs';
import { derivedId } from './entry-id.js';
import { hash52, hash52Ascii, IdSet } from './id-set.js';
import { parseLine } from './parse.js';
import { readBytes } from './quarantine.js';
import { rawLineOf, readLineViewsFd, toRecord, type LineView } from './reader.js';
import { ScannedLine, scanLine } from './scan/canonical-line.js';
import type { MemoirEntry } from './schema.js';
import type { EntryType } from './sources.js';
import { RevisionGraph, type RevisionNode } from './revisions.js';
import { entryTypeOf, entryVerdict, SPLIT_REASON_TEXT, type SplitVerdict } from './split-rule.js';

export type ProblemKind =
  | 'json'
  | 'schema'
  | 'too_long'
  | 'utf8'
  | 'lenient_split'
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
}

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

async function verifyFd(fd: number, path: string, seen: SeenIds, opts: VerifyFileOptions): Promise<FileVerification> {
  const fileNo = seen.files.push(path) - 1;
  const problems: Problem[] = [];
  const occurrences = new OccurrenceCounter(fd);
  const scanned = new ScannedLine();
  const scan = opts.scan !== false;
  let entries = 0;
  let bytes = 0;
  let n = 0;
  const lazy = seen.lazyDerivedIds;
  /**
   * Bookkeeping shared by both paths, without an object or a string per entry (a million of them
   * cost GC time): the id goes into the set as its hash (-1: a Python line's id left lazy); its text
   * is made only for a message or a revision.
   */
  const record = (v: LineView, idHash: number, occurrence: number, verdict: SplitVerdict, type: EntryType, supersedes: string | null, idText: () => string, recordedAt: () => string | null): void => {
    entries++;
    if (verdict.lenient) {
      problems.push({ path, line: v.line, offset: v.offset, kind: 'lenient_split', severity: 'error', message: `split says shared but the entry is private: ${SPLIT_REASON_TEXT[verdict.reason]}; kourai treats it as private` });
    }
    const ordinal = seen.file.length;
    seen.file.push(fileNo);
    seen.line.push(v.line);
    seen.offset.push(v.offset);
    seen.length.push(v.length);
    seen.occurrence.push(occurrence);
    if (idHash >= 0) {
      const first = seen.ids.addOrGetHash(idHash, ordinal);
      if (first !== undefined) seen.candidates.push({ at: ordinal, first });
    }
    if (occurrence > 1) {
      problems.push({ path, line: v.line, offset: v.offset, kind: 'identical_line', severity: 'warning', message: `identical to an earlier line (derived id ${idText()})` });
    }
    if (supersedes !== null) {
      const id = idText();
      seen.revisions.push({ entry_id: id, supersedes, recorded_at: normalTime(recordedAt()), order: ordinal, entry_type: type, shareable: verdict.shareable, ordinal });
      if (lazy && supersedes.startsWith('py_')) seen.needsDerivedIds = true;
    }
  };
  /** A Python line seen in lazy mode: the same line in two memoirs would share a derived id. */
  const pythonLine = (h: number): void => {
    const other = seen.pythonLines.addOrGetHash(h, fileNo);
    if (other !== undefined && other !== fileNo) seen.needsDerivedIds = true;
  };
  let cur: LineView | undefined;
  let derived: string | undefined; // the current Python line's derived id, when computed
  let entry: MemoirEntry | undefined; // the current entry, on the slow path
  const lineBytes = (): Uint8Array => (cur as LineView).buf.subarray((cur as LineView).start, (cur as LineView).end);
  const scannedId = (): string => scanned.string('entry_id') as string;
  const scannedAt = (): string | null => scanned.string('recorded_at');
  const derivedText = (): string => derived as string;
  const entryId = (): string => (entry as MemoirEntry).entry_id;
  const entryAt = (): string | null => (typeof entry?.recorded_at === 'string' ? entry.recorded_at : null);
  const occurrenceOf = (): number => {
    const c = cur as LineView;
    const h = sampleHash(c.buf, c.start, c.end);
    if (lazy) pythonLine(h);
    return occurrences.next(h, cur as LineView, lineBytes);
  };
  for (const v of readLineViewsFd(fd)) {
    cur = v;
    bytes = v.offset + v.length + (v.terminated ? 1 : 0);
    if (++n % 4096 === 0) {
      opts.onProgress?.(bytes);
      await opts.checkpoint?.();
    }
    // Canonical lines go through the byte scanner; anything else (and every error) through parseLine.
    if (scan && v.terminated && v.flaw === undefined && scanLine(v.buf, v.start, v.end, scanned)) {
      const supersedes = scanned.string('supersedes');
      if (scanned.has('entry_id')) {
        const s = scanned.start('entry_id');
        const e = scanned.end('entry_id');
        // The scanner takes ASCII ids only, so the bytes hash as the string does.
        if (lazy && e - s >= 3 && v.buf[s] === 0x70 && v.buf[s + 1] === 0x79 && v.buf[s + 2] === 0x5f) seen.needsDerivedIds = true; // "py_"
        record(v, hash52Ascii(v.buf, s, e), 0, scanned.verdict(), scanned.type(), supersedes, scannedId, scannedAt);
      } else {
        const occ = occurrenceOf();
        derived = undefined;
        if (!lazy || occ > 1 || supersedes !== null) {
          const base = derivedId(lineBytes());
          derived = occ > 1 ? `${base}~${occ}` : base;
        }
        record(v, lazy ? -1 : hash52(derived as string), occ, scanned.verdict(), scanned.type(), supersedes, derivedText, scannedAt);
      }
      continue;
    }
    const raw = rawLineOf(v);
    const rec = toRecord(raw, occurrenceOf);
    if (rec.kind === 'torn') {
      problems.push({ path, line: rec.line, offset: rec.offset, kind: 'torn_tail', severity: 'error', message: `torn final fragment of ${rec.length} bytes (a write that never finished)`, fix: `kourai memoir repair --memoir ${path}` });
    } else if (rec.kind === 'invalid') {
      problems.push({ path, line: rec.line, offset: rec.offset, kind: rec.problem, severity: 'error', message: rec.message });
    } else {
      entry = rec.entry;
      if (lazy && !rec.derived && entry.entry_id.startsWith('py_')) seen.needsDerivedIds = true;
      record(v, lazy && rec.derived ? -1 : hash52(entry.entry_id), rec.derived ? occurrenceIn(entry.entry_id) : 0, entryVerdict(entry), entryTypeOf(entry), typeof entry.supersedes === 'string' ? entry.supersedes : null, entryId, entryAt);
    }
  }
  opts.onProgress?.(bytes);
  return { path, entries, bytes, problems };
}

function occurrenceIn(id: string): number {
  const i = id.indexOf('~');
  return i < 0 ? 1 : Number(id.slice(i + 1));
}

function normalTime(t: unknown): string | null {
  if (typeof t !== 'string') return null;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? null : new Date(ms).toISOString();
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

  /** The occurrence number of the line `bytes` (its location `here`), keyed by `hash` (any hash of its bytes). */
  next(hash: number, here: { offset: number; length: number }, bytes: () => Uint8Array): number {
    const fresh = this.counts.length;
    let slot = this.set.addOrGetHash(hash, fresh);
    if (slot !== undefined) {
      let current: Uint8Array | undefined;
      for (;;) {
        if (this.lengths.get(slot) === here.length) {
          current ??= bytes();
          if (readBytes(this.fd, this.offsets.get(slot), here.length).equals(current)) {
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
    this.offsets.push(here.offset);
    this.lengths.push(here.length);
    this.chain.push(0xffffffff);
    return 1;
  }
}

/**
 * A cheap 52-bit hash of a line's bytes for counting identical lines (the counter confirms matches
 * byte for byte): its length, its first 64 bytes, then every 5th byte. SHA-256 (the derived id) is
 * only computed when an id is needed.
 */
function sampleHash(b: Uint8Array, s: number, e: number): number {
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

/**
 * Verifies memoirs together (ids are unique across all of them). Python lines' ids are computed
 * lazily; should a written id or `supersedes` name a derived id, the memoirs are read again with
 * every derived id computed (exact either way; the second read only costs time, and only then).
 */
export async function verifyMemoirs(paths: readonly string[], opts: { onProgress?: (file: number, bytes: number) => void; checkpoint?: () => Promise<void>; scan?: boolean } = {}): Promise<MemoirsVerification> {
  const pass = async (seen: SeenIds): Promise<MemoirsVerification> => {
    const files: FileVerification[] = [];
    for (const [i, p] of paths.entries()) files.push(await verifyFile(p, seen, { onProgress: (b) => opts.onProgress?.(i, b), ...(opts.checkpoint ? { checkpoint: opts.checkpoint } : {}), ...(opts.scan === false ? { scan: false } : {}) }));
    return { files, crossFile: seen.needsDerivedIds ? [] : [...confirmDuplicates(seen), ...revisionProblems(seen)] };
  };
  // Sized for about 1 KiB a line (entries are 300-800 B): at most one growth of the id table.
  const expectedEntries = Math.ceil(paths.reduce((sum, p) => sum + statSync(p).size, 0) / 1024);
  const lazy = newSeenIds({ lazyDerivedIds: true, expectedEntries });
  const first = await pass(lazy);
  return lazy.needsDerivedIds ? pass(newSeenIds({ expectedEntries })) : first;
}
