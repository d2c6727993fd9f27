import { fstatSync } from 'node:fs';
import { crc32 } from 'node:zlib';
import { ConflictError } from '../../errors.js';
import { commonPrefix, cutRange, resumePutback, type CutReport } from './cut.js';
import { batchRecord, type BatchRecord, type Journal } from './journal.js';
import { MAX_LINE_BYTES } from '../format/limits.js';
import { sleepSync, type MemoirLock } from './lock.js';
import { parseLine } from '../format/parse.js';
import { findTornTail, readBytes, type QuarantineOptions } from './quarantine.js';

/**
 * What a writer does under the lock before it writes: finish or undo the operation a dead kourai
 * writer left in the journal, then deal with a torn tail a dead writer of any kind left behind.
 */
export interface Recovery {
  /** The written part of a batch whose writer died, moved to the quarantine. */
  rolledBack?: CutReport;
  /** A batch found whole after its writer died: kept (all or nothing). */
  keptWholeBatch?: { offset: number; length: number };
  note?: string;
}

export function recoverJournal(lock: MemoirLock, journal: Journal, opts: QuarantineOptions): Recovery | undefined {
  const pending = journal.pending();
  if (!pending) return undefined;
  const { entry, payload } = pending;
  if (entry.op === 'putback') return { note: resumePutback(lock, journal, entry, payload, opts) };
  if (entry.op === 'batch') return rollbackBatch(lock, journal, entry.offset, batchRecord(payload), opts); // an older writer's journal
  const tableBytes = entry.lines * 8;
  const record = { table: payload.subarray(0, tableBytes), first: payload.subarray(tableBytes), lines: entry.lines };
  return rollbackBatch(lock, journal, entry.offset, record, opts);
}

/**
 * A batch journal is still there: its writer died between writing the journal and clearing it.
 * Finds where the batch landed (at the journalled offset, or after whole lines that lock-free
 * writers appended in between), how much of it was written, and rolls that part back into the
 * quarantine, keeping every byte other writers appended after it. A batch found whole stays.
 *
 * The journal knows each line's length and CRC-32 and the first line's bytes, not the batch (a
 * second copy of every batch cost as much as the batch). Whole lines are matched by length + CRC;
 * the first line, when torn, byte for byte; a later line cut short ends where the next valid line
 * of another writer starts, or, with none, at its own length minus one (or the end of the file):
 * bytes there that start no valid line (a fragment a dead host left) go to the quarantine with it.
 */
function rollbackBatch(
  lock: MemoirLock,
  journal: Journal,
  offset: number,
  batch: BatchRecord,
  opts: QuarantineOptions,
): Recovery {
  const fd = lock.fd;
  const size = fstatSync(fd).size;
  const first = batch.first;
  let s = -1;
  for (let pos = offset; pos < size;) {
    const lcp = commonPrefix(fd, pos, first, size);
    if (lcp === first.length) {
      s = pos;
      break;
    }
    const line = lineAt(fd, pos, size);
    if (line === undefined) {
      if (lcp > 0) s = pos; // the batch's first line, torn, at the very end
      break;
    }
    if (lcp > 0 && !parseLine(line.text).ok) {
      s = pos; // the batch's first line, torn, with another writer's line glued to it
      break;
    }
    pos = line.next; // a whole line another writer appended before the batch
  }
  if (s < 0) return nothingWritten(journal);
  // Whole lines of the batch from `s` on; `at` ends up at the first line that is not (whole).
  let at = s;
  let k = 0;
  while (k < batch.lines && wholeLineAt(fd, at, batch.table, k, size)) at += batch.table.readUInt32LE(k++ * 8);
  if (k === batch.lines) {
    journal.clear();
    return { keptWholeBatch: { offset: s, length: at - s } };
  }
  // Line k is cut short: at most its length minus one of its bytes are there.
  const mine = k === 0 ? commonPrefix(fd, s, first, size) : Math.min(batch.table.readUInt32LE(k * 8) - 1, size - at);
  // Other writers' bytes may start earlier, where a whole valid line of theirs starts.
  let end = at + mine;
  for (let c = at; c < at + mine; c++) {
    if (readBytes(fd, c, 1)[0] !== 0x7b) continue; // '{'
    const line = lineAt(fd, c, size);
    if (line && parseLine(line.text).ok) {
      end = c;
      break;
    }
  }
  if (end === s) return nothingWritten(journal);
  return { rolledBack: cutRange(lock, journal, s, end, 'uncommitted_batch', opts) };
}

function nothingWritten(journal: Journal): Recovery {
  journal.clear();
  return { note: 'a batch whose writer died before writing it: nothing to undo' };
}

/** True when the file holds line `k` of the batch (length and CRC-32, newline included) at `pos`. */
function wholeLineAt(fd: number, pos: number, table: Buffer, k: number, size: number): boolean {
  const length = table.readUInt32LE(k * 8);
  if (pos + length > size) return false;
  const b = readBytes(fd, pos, length);
  return b.length === length && b[length - 1] === 10 && crc32(b) === table.readUInt32LE(k * 8 + 4);
}

/** The complete line starting at `pos` (undefined when no newline follows within the line limit). */
function lineAt(fd: number, pos: number, size: number): { text: string; next: number } | undefined {
  for (const span of [64 * 1024, MAX_LINE_BYTES + 2]) {
    const b = readBytes(fd, pos, Math.min(size - pos, span));
    const nl = b.indexOf(10);
    if (nl >= 0) return { text: b.toString('utf8', 0, nl), next: pos + nl + 1 };
    if (b.length < span) return undefined;
  }
  return undefined;
}

export interface TornTailOptions extends QuarantineOptions {
  /** A fragment that changed less than this long ago may be a live writer mid-line: wait (default 2 s). */
  staleMs: number;
  /** Give up waiting for a live writer at this time (ms since the epoch). */
  deadline: number;
}

/**
 * A final fragment without a newline: if the file has not changed for `staleMs`, its writer is
 * gone and the fragment is moved to the quarantine (keeping anything appended after it); if it
 * is still changing, a writer is mid-line and is left alone until it finishes or goes stale.
 */
export function settleTornTail(lock: MemoirLock, journal: Journal, opts: TornTailOptions): CutReport | undefined {
  for (;;) {
    const st = fstatSync(lock.fd);
    const tail = findTornTail(lock.fd, st.size);
    if (!tail) return undefined;
    const age = Date.now() - st.mtimeMs;
    if (age >= opts.staleMs) return cutRange(lock, journal, tail.offset, tail.offset + tail.length, 'torn_tail', opts);
    if (Date.now() >= opts.deadline) {
      throw new ConflictError(
        `a write is in progress at the end of ${lock.path}: ${tail.length} bytes without a newline, changed ${Math.round(age)} ms ago`,
        `retry in a moment; a fragment left unchanged for ${opts.staleMs / 1000} s is moved to the quarantine`,
      );
    }
    sleepSync(Math.max(1, Math.min(20, opts.staleMs - age)));
  }
}
