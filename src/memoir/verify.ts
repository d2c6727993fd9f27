import { openForReading } from './reader.js';
import { closeSync, openSync } from 'node:fs';
import { derivedId } from './entry-id.js';
import { IdSet } from './id-set.js';
import { parseLine } from './parse.js';
import { readBytes } from './quarantine.js';
import { rawLineOf, readLineViewsFd, toRecord } from './reader.js';
import { ScannedLine, scanLine } from './scan/canonical-line.js';
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
}

export interface VerifyNode extends RevisionNode {
  ordinal: number;
}

export function newSeenIds(): SeenIds {
  const n = 1 << 12;
  return {
    files: [],
    ids: new IdSet(),
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
  for (const v of readLineViewsFd(fd)) {
    bytes = v.offset + v.length + (v.terminated ? 1 : 0);
    if (++n % 4096 === 0) {
      opts.onProgress?.(bytes);
      await opts.checkpoint?.();
    }
    let id: string;
    let derived: boolean;
    let facts: EntryFacts;
    // Canonical lines go through the byte scanner; anything else (and every error) through parseLine.
    if (scan && v.terminated && v.flaw === undefined && scanLine(v.buf, v.start, v.end, scanned)) {
      derived = !scanned.has('entry_id');
      if (derived) {
        const base = derivedId(v.buf.subarray(v.start, v.end));
        const occ = occurrences.next(base, v);
        id = occ > 1 ? `${base}~${occ}` : base;
      } else id = scanned.string('entry_id') as string;
      const supersedes = scanned.string('supersedes');
      facts = { type: scanned.type(), verdict: scanned.verdict(), supersedes, recorded_at: supersedes === null ? null : scanned.string('recorded_at') };
    } else {
      const raw = rawLineOf(v);
      const rec = toRecord(raw, (base) => occurrences.next(base, raw));
      const at = { path, line: rec.line, offset: rec.offset };
      if (rec.kind === 'torn') {
        problems.push({ ...at, kind: 'torn_tail', severity: 'error', message: `torn final fragment of ${rec.length} bytes (a write that never finished)`, fix: `kourai memoir repair --memoir ${path}` });
        continue;
      }
      if (rec.kind === 'invalid') {
        problems.push({ ...at, kind: rec.problem, severity: 'error', message: rec.message });
        continue;
      }
      const e = rec.entry;
      id = e.entry_id;
      derived = rec.derived;
      facts = { type: entryTypeOf(e), verdict: entryVerdict(e), supersedes: typeof e.supersedes === 'string' ? e.supersedes : null, recorded_at: typeof e.recorded_at === 'string' ? e.recorded_at : null };
    }
    entries++;
    const at = { path, line: v.line, offset: v.offset };
    if (facts.verdict.lenient) {
      problems.push({ ...at, kind: 'lenient_split', severity: 'error', message: `split says shared but the entry is private: ${SPLIT_REASON_TEXT[facts.verdict.reason]}; kourai treats it as private` });
    }
    const ordinal = seen.file.length;
    seen.file.push(fileNo);
    seen.line.push(v.line);
    seen.offset.push(v.offset);
    seen.length.push(v.length);
    seen.occurrence.push(derived ? occurrenceIn(id) : 0);
    const first = seen.ids.addOrGet(id, ordinal);
    if (first !== undefined) seen.candidates.push({ at: ordinal, first });
    if (derived && id.includes('~')) {
      problems.push({ ...at, kind: 'identical_line', severity: 'warning', message: `identical to an earlier line (derived id ${id})` });
    }
    if (facts.supersedes !== null) {
      seen.revisions.push({ entry_id: id, supersedes: facts.supersedes, recorded_at: normalTime(facts.recorded_at), order: ordinal, entry_type: facts.type, shareable: facts.verdict.shareable, ordinal });
    }
  }
  opts.onProgress?.(bytes);
  return { path, entries, bytes, problems };
}

/** What verify keeps of an entry, whichever path read it. */
interface EntryFacts {
  type: EntryType;
  verdict: SplitVerdict;
  supersedes: string | null;
  recorded_at: string | null;
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
 * from the hash of the derived id to its count and the first line's byte range. A repeated hash is
 * confirmed by comparing the two lines' bytes, so only truly identical lines are numbered.
 */
class OccurrenceCounter {
  private readonly set = new IdSet();
  // Typed columns, not the line objects: a retained RawLine keeps its text, which made verify hold
  // every Python line of a memoir (~440 MB peak at 1M entries).
  private readonly counts = new Column(new Uint32Array(1 << 12));
  private readonly offsets = new Column(new Float64Array(1 << 12));
  private readonly lengths = new Column(new Uint32Array(1 << 12));

  constructor(private readonly fd: number) {}

  next(base: string, here: { offset: number; length: number }): number {
    const slot = this.set.addOrGet(base, this.counts.length);
    if (slot === undefined) {
      this.counts.push(1);
      this.offsets.push(here.offset);
      this.lengths.push(here.length);
      return 1;
    }
    const offset = this.offsets.get(slot);
    const length = this.lengths.get(slot);
    if (length !== here.length || !readBytes(this.fd, offset, length).equals(readBytes(this.fd, here.offset, here.length))) return 1; // a hash collision
    const n = this.counts.get(slot) + 1;
    this.counts.set(slot, n);
    return n;
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

