import { fstatSync } from 'node:fs';
import { ConflictError } from '../errors.js';
import { commonPrefix, cutRange, resumePutback, type CutReport } from './cut.js';
import type { Journal, JournalEntry } from './journal.js';
import { MAX_LINE_BYTES } from './limits.js';
import { sleepSync, type MemoirLock } from './lock.js';
import { parseLine } from './parse.js';
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
  return rollbackBatch(lock, journal, entry, payload, opts);
}

/**
 * A batch journal is still there: its writer died between writing the journal and clearing it.
 * Finds where the batch landed (at the journalled offset, or after whole lines that lock-free
 * writers appended in between), how much of it was written, and rolls that part back into the
 * quarantine, keeping every byte other writers appended after it. A batch found whole stays.
 */
function rollbackBatch(lock: MemoirLock, journal: Journal, entry: Extract<JournalEntry, { op: 'batch' }>, batch: Buffer, opts: QuarantineOptions): Recovery {
  const fd = lock.fd;
  const size = fstatSync(fd).size;
  const firstLineEnd = batch.indexOf(10) + 1 || batch.length;
  let s = -1;
  for (let pos = entry.offset; pos < size; ) {
    const lcp = commonPrefix(fd, pos, batch, size);
    if (lcp >= firstLineEnd) {
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
  if (s < 0) {
    journal.clear();
    return { note: 'a batch whose writer died before writing it: nothing to undo' };
  }
  const written = commonPrefix(fd, s, batch, size);
  if (written === batch.length) {
    journal.clear();
    return { keptWholeBatch: { offset: s, length: batch.length } };
  }
  // `written` bytes match the batch; other writers' bytes may start earlier, at the start of a
  // line of theirs that happens to begin like ours. The first place a whole valid line starts wins.
  let split = written;
  for (let c = batch.lastIndexOf(10, written - 1) + 1; c < written; c++) {
    if (readBytes(fd, s + c, 1)[0] !== 0x7b) continue; // '{'
    const line = lineAt(fd, s + c, size);
    if (line && parseLine(line.text).ok) {
      split = c;
      break;
    }
  }
  if (split === 0) {
    journal.clear();
    return { note: 'a batch whose writer died before writing it: nothing to undo' };
  }
  return { rolledBack: cutRange(lock, journal, s, s + split, 'uncommitted_batch', opts) };
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
