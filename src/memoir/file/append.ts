import type { z } from 'zod';
import { fstatSync, fsyncSync, ftruncateSync, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { fsError, InvalidDataError, KouraiError } from '../../errors.js';
import { fsyncDir, writeAll } from './durable.js';
import { encodeEntry } from '../format/encode.js';
import { LineWriter } from '../format/encode-bytes.js';
import type { IdSource } from '../format/entry-id.js';
import { fastInput } from '../format/fast-input.js';
import { coerceLax } from '../format/lax.js';
import { describeUnread, setAsideExtensions, toUnread, UNREAD, type Unread } from '../format/unread.js';
import { leaveOutUndeclared } from '../format/undeclared.js';
import { assertIsMemoir } from './identify.js';
import { batchRecord, Journal } from './journal.js';
import { checkOutgoingLine } from '../format/limits.js';
import { lockMemoir, type MemoirLock } from './lock.js';
import { readBytes, type Quarantined } from './quarantine.js';
import { recoverJournal, settleTornTail, type Recovery } from './recover.js';
import { describeIssue, EXTENSION_KEYS, MemoirInputSchema, type MemoirEntry } from '../format/schema.js';

type MemoirInputParsed = z.output<typeof MemoirInputSchema>;

/** Extension keys a caller may set beyond id, time and type (`interrupt` first, as written). */
const LATER_EXTENSIONS = EXTENSION_KEYS.filter((k) => k !== 'entry_id' && k !== 'recorded_at' && k !== 'entry_type');
/** Extension keys append always fills in (an unreadable value given for one is replaced). */
const FILLED: ReadonlySet<string> = new Set(['entry_id', 'recorded_at', 'entry_type']);
import { decideSplit, entryTypeOf, SPLIT_REASON_TEXT } from '../format/split-rule.js';

export interface PreparedEntry {
  entry: MemoirEntry;
  line: string;
  /** The line's UTF-8 length (checked against the limits once, here). */
  bytes: number;
  /** Set when the caller asked for shared but the rule made the entry private. */
  narrowed?: string;
  /** One warning per extension value kourai cannot read (unread.ts). */
  unread?: string[];
  /** One warning per top-level key no model declares, left out as pydantic leaves it out. */
  ignored?: string[];
}

/** Where an input came from, for error messages: `stdin line 3`, `entries.ndjson line 2`. */
export interface InputItem {
  value: unknown;
  where: string;
}

/**
 * Validates every input and turns it into a complete entry (id, timestamp, type, strict split).
 * Throws on the first invalid input, naming where and which field; nothing is written.
 */
export function prepareEntries(items: readonly InputItem[], ids: IdSource, now: () => Date): PreparedEntry[] {
  const prep = new Preparer(ids, now);
  return items.map((item) => prep.prepare(item));
}

/** A batch ready to append: its entries and their lines as bytes (each followed by a newline). */
export interface PreparedBatch {
  entries: MemoirEntry[];
  bytes: Buffer;
  /** One note per entry whose requested shared split the rule narrowed to private. */
  narrowed: string[];
  /** One warning per extension value kourai cannot read, written as given (or replaced: id, time, type). */
  unread: string[];
  /** One warning per top-level key no model declares, left out as pydantic leaves it out. */
  ignored: string[];
}

/** Inputs whose `where` (for an error or a note) is made only when needed: `Memoir.append`. */
export interface BatchInputs {
  values: readonly unknown[];
  where: (n: number) => string;
}

/**
 * `prepareEntries` for a whole batch: each entry is encoded as UTF-8 straight into the batch's
 * buffer (LineWriter), so no line string is ever built. `into`: a writer to reuse (its previous
 * batch's bytes are overwritten), as `Memoir` does from one batch to the next.
 */
export function prepareBatch(
  input: readonly InputItem[] | BatchInputs,
  ids: IdSource,
  now: () => Date,
  into?: LineWriter,
): PreparedBatch {
  let values: readonly unknown[];
  let where: (n: number) => string;
  if (isBatchInputs(input)) ({ values, where } = input);
  else {
    const items = input;
    values = items.map((i) => i.value);
    where = (n) => (items[n] as InputItem).where;
  }
  const prep = new Preparer(ids, now);
  const entries = new Array<MemoirEntry>(values.length);
  const narrowed: string[] = [];
  const unread: string[] = [];
  const ignored: string[] = [];
  const capacity = Math.max(1 << 16, values.length * 1024);
  const out = into ?? new LineWriter(capacity);
  if (into) into.reset(capacity);
  for (let n = 0; n < values.length; n++) {
    const entry = prep.entry(values[n], n, where);
    // The byte encoder declines only what the string path must word as an error (or handle whole).
    if (!out.writeEntry(entry)) {
      const line = encodeEntry(entry);
      checkOutgoingLine(line, where(n));
      out.writeBytes(line);
    }
    entries[n] = entry;
    if (prep.narrowed !== undefined) narrowed.push(prep.narrowed);
    if (prep.unread !== undefined) unread.push(...prep.unread);
    if (prep.ignored !== undefined) ignored.push(...prep.ignored);
  }
  return { entries, bytes: out.bytes(), narrowed, unread, ignored };
}

const isBatchInputs = (x: readonly InputItem[] | BatchInputs): x is BatchInputs => !Array.isArray(x);

/** Turns inputs into entries and lines, one at a time; keeps the clock's last ISO string. */
class Preparer {
  private lastMs = NaN;
  private lastIso = '';

  constructor(
    private readonly ids: IdSource,
    private readonly now: () => Date,
  ) {}

  /** The note for the last entry when the split rule narrowed it to private. */
  narrowed: string | undefined;
  /** The warnings for the last entry's extension values kourai cannot read. */
  unread: string[] | undefined;
  /** The warnings for the last entry's undeclared top-level keys. */
  ignored: string[] | undefined;

  prepare(item: InputItem): PreparedEntry {
    const entry = this.entry(item.value, 0, () => item.where);
    const line = encodeEntry(entry);
    const prepared: PreparedEntry = { entry, line, bytes: checkOutgoingLine(line, item.where) };
    if (this.narrowed !== undefined) prepared.narrowed = this.narrowed;
    if (this.unread !== undefined) prepared.unread = this.unread;
    if (this.ignored !== undefined) prepared.ignored = this.ignored;
    return prepared;
  }

  /** The complete entry for input `n` (validated); sets `narrowed`. `where(n)` names it in an error or a note. */
  entry(value: unknown, n: number, where: (n: number) => string): MemoirEntry {
    this.unread = undefined;
    this.ignored = undefined;
    // The hand-written check (fast-input.ts) decides; zod runs only to word an error.
    let fast = fastInput(value);
    let taken: ReturnType<typeof setAsideExtensions>;
    if (!fast && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      this.ignored = leaveOutUndeclared(value as Record<string, unknown>, where(n));
      // pydantic's lax spellings ("0.5" for a float, "yes" for a bool) become the values it holds
      coerceLax(value as Record<string, unknown>);
      fast = fastInput(value);
      if (!fast) {
        // an extension value kourai cannot read is kept as given, not read (unread.ts)
        taken = setAsideExtensions(value as Record<string, unknown>);
        if (taken) fast = fastInput(value);
      }
    }
    let input: MemoirInputParsed;
    if (fast) input = fast as MemoirInputParsed;
    else {
      const res = MemoirInputSchema.safeParse(value);
      if (!res.success)
        throw new InvalidDataError(
          `${where(n)}: ${describeIssue(res.error)}`,
          'nothing was written; fix the entry and retry',
        );
      input = res.data;
    }
    const entryType = input.entry_type ?? (input.interrupt ? 'interrupt' : entryTypeOf(input));
    const unread = taken ? this.unreadOf(taken, n, where) : undefined;
    const kept = unread?.kept;
    const verdict = decideSplit({
      agent: input.agent,
      source: input.source,
      entry_type: entryType,
      interrupt: input.interrupt,
      split: input.split,
      // any unread value makes the entry private, a replaced type too (it may have meant a private one)
      [UNREAD]: unread?.all,
    });
    const split = { shared_eligible: verdict.shareable, private_only: !verdict.shareable };
    const entryId = input.entry_id ?? this.ids.next();
    const recordedAt = input.recorded_at ?? this.isoNow();
    let entry: Record<string | symbol, unknown>;
    if (fast) {
      // The fast path's object is fresh and already in the written key order: completed in place.
      entry = fast;
      entry.split = split;
      entry.entry_id = entryId;
      entry.recorded_at = recordedAt;
      entry.entry_type = entryType;
    } else {
      entry = {
        scene_id: input.scene_id,
        agent: input.agent,
        source: input.source,
        // the context as given (zod checked it): its keys in their order, and what JSON.parse lost
        context: (value as { context?: MemoirEntry['context'] }).context ?? null,
        narrative_beat: input.narrative_beat,
        agent_proposed: input.agent_proposed,
        player_response: input.player_response,
        affinity_delta: input.affinity_delta,
        training_label: input.training_label,
        split,
        entry_id: entryId,
        recorded_at: recordedAt,
        entry_type: entryType,
      };
      for (let k = 0; k < LATER_EXTENSIONS.length; k++) {
        const key = LATER_EXTENSIONS[k] as (typeof LATER_EXTENSIONS)[number];
        if (input[key] !== undefined) entry[key] = input[key];
      }
    }
    if (kept !== undefined) entry[UNREAD] = kept;
    this.narrowed = verdict.lenient
      ? `${where(n)}: split narrowed to private: ${SPLIT_REASON_TEXT[verdict.reason]}`
      : undefined;
    return entry as MemoirEntry;
  }

  /**
   * The unread values given (`all`, which make the entry private: split-rule.ts) and those the entry
   * keeps, and a warning for each (sets `unread`). An id, a time or a type kourai cannot read is
   * replaced by its own, as if the key were absent; any other is written as given.
   */
  private unreadOf(
    taken: ReadonlyMap<string, { value: unknown; why: string }>,
    n: number,
    where: (n: number) => string,
  ): { all: Unread; kept: Unread | undefined } {
    const all = toUnread(taken);
    const kept = new Map([...all].filter(([k]) => !FILLED.has(k)));
    this.unread = [...all].map(
      ([k, u]) =>
        `${where(n)}: ${describeUnread(k, u)}: ${FILLED.has(k) ? `kourai writes its own ${k} instead` : 'written as given, not read'}; the entry is private`,
    );
    return { all, kept: kept.size > 0 ? kept : undefined };
  }

  /** One ISO string per millisecond: a batch of 10k is stamped within a few of them. */
  private isoNow(): string {
    const d = this.now();
    const ms = d.getTime();
    if (ms !== this.lastMs) {
      this.lastMs = ms;
      this.lastIso = d.toISOString();
    }
    return this.lastIso;
  }
}

export interface AppendOptions {
  /** fsync the journal, the memoir and (when created) its directory (default true). */
  fsync?: boolean;
  lockWaitMs?: number;
  /**
   * A torn tail that changed less than this long ago may be a live writer mid-line: it is left
   * alone (the append waits, up to `lockWaitMs`) until it is finished or stale. Default 2 s.
   */
  staleMs?: number;
  now?: () => Date;
  signal?: AbortSignal;
}

export interface AppendReport {
  path: string;
  offset: number;
  bytes: number;
  count: number;
  /** A torn tail moved to the quarantine before writing. */
  quarantined?: Quarantined;
  /** Recovered from a kourai writer that died mid-batch (rolled back or kept whole). */
  recovered?: Recovery;
}

export const DEFAULT_STALE_MS = 2000;

/**
 * Appends whole lines in one O_APPEND write under the memoir's lock, so concurrent writers
 * (including lock-free Python hosts writing one line per write) never interleave partial lines.
 * In order, under the lock: refuse a file that is not a memoir (untouched); finish or roll back
 * what a dead kourai writer left in the journal; quarantine a stale torn tail (keeping anything appended
 * after it); journal the batch, write it, fsync, clear the journal. A crash mid-batch leaves the
 * batch to be rolled back by the next writer: all or nothing.
 */
export function appendLines(path: string, lines: readonly string[], opts: AppendOptions = {}): AppendReport {
  if (lines.length === 0) return { path, offset: 0, bytes: 0, count: 0 };
  let total = 0;
  for (let i = 0; i < lines.length; i++) total += checkOutgoingLine(lines[i] as string, `entry ${i + 1}`) + 1;
  return appendBytes(path, batchBytes(lines, total), lines.length, opts);
}

/** Appends a batch from `prepareBatch` (its lines already checked there), as `appendLines` does. */
export function appendBatch(path: string, batch: PreparedBatch, opts: AppendOptions = {}): AppendReport {
  if (batch.entries.length === 0) return { path, offset: 0, bytes: 0, count: 0 };
  return appendBytes(path, batch.bytes, batch.entries.length, opts);
}

function appendBytes(path: string, buf: Buffer, count: number, opts: AppendOptions): AppendReport {
  const durable = opts.fsync !== false;
  const now = (opts.now ?? (() => new Date()))();
  try {
    mkdirSync(dirname(path), { recursive: true });
  } catch (err) {
    throw fsError(err, 'memoir directory', dirname(path));
  }
  const waitMs = opts.lockWaitMs ?? 5000;
  const deadline = Date.now() + waitMs;
  const lock = lockMemoir(path, { waitMs, ...(opts.signal ? { signal: opts.signal } : {}) });
  const journal = new Journal(path, durable);
  try {
    const q = { now, durable, ...(opts.signal ? { signal: opts.signal } : {}) };
    assertIsMemoir(lock.fd, path);
    const recovered = recoverJournal(lock, journal, q);
    const torn = settleTornTail(lock, journal, { ...q, staleMs: opts.staleMs ?? DEFAULT_STALE_MS, deadline });
    const offset = writeBatch(lock, journal, buf, durable);
    if (lock.created && durable) fsyncDir(path);
    return {
      path,
      offset,
      bytes: buf.length,
      count,
      ...(torn ? { quarantined: torn.quarantined } : {}),
      ...(recovered ? { recovered } : {}),
    };
  } catch (err) {
    if (err instanceof KouraiError) throw err;
    throw fsError(err, 'memoir', path);
  } finally {
    journal.close();
    lock.release();
  }
}

/** The (checked) lines as one buffer of `total` bytes, each followed by a newline (written in place: no joined copy). */
function batchBytes(lines: readonly string[], total: number): Buffer {
  const buf = Buffer.allocUnsafe(total);
  let at = 0;
  for (const line of lines) {
    at += buf.write(line, at, 'utf8');
    buf[at++] = 10;
  }
  return buf;
}

/** Journal (the batch's line table, fsynced), one O_APPEND write, fsync, clear: see journal.ts for why this is all or nothing. */
function writeBatch(lock: MemoirLock, journal: Journal, buf: Buffer, durable: boolean): number {
  const before = fstatSync(lock.fd).size;
  const record = batchRecord(buf);
  journal.start();
  journal.add(record.table);
  journal.add(record.first);
  journal.seal({ op: 'batch_lines', offset: before, lines: record.lines, bytes: buf.length });
  let offset: number;
  try {
    writeAll(lock.fd, buf);
    offset = fstatSync(lock.fd).size - buf.length;
    if (durable) fsyncSync(lock.fd);
  } catch (err) {
    cutFailedBatch(lock.fd, journal, buf, before, durable);
    throw err;
  }
  journal.clear();
  return offset;
}

/**
 * A batch that could not be written whole (a full disk, an I/O error, a failed fsync) is cut off
 * again before the lock is released, so no reader ever sees part of it: the memoir is back to its
 * bytes before the batch and the journal is cleared. Only when every byte after `before` is the
 * batch's own; when a lock-free writer appended meanwhile (or the cut itself fails), the journal
 * stays and the next writer's recovery moves the partial batch aside (recover.ts), as after a
 * crash between the write and this cut.
 */
function cutFailedBatch(fd: number, journal: Journal, buf: Buffer, before: number, durable: boolean): void {
  try {
    const written = fstatSync(fd).size - before;
    if (written > buf.length || written < 0) return;
    if (written > 0) {
      if (!readBytes(fd, before, written).equals(buf.subarray(0, written))) return;
      ftruncateSync(fd, before);
      if (durable) fsyncSync(fd);
    }
    journal.clear();
  } catch {
    // the journal still names the batch: the next writer rolls it back
  }
}
