import { closeSync, openSync } from 'node:fs';
import { createRequire } from 'node:module';
import type NativeLocks from 'fs-native-extensions';
import { Journal } from './journal.js';

/**
 * The native lock module, loaded only when a journal names an unfinished write (loading it is
 * ~15-30 ms of `verify`'s start-up, and a memoir almost never has one).
 */
const nativeLocks = (): typeof NativeLocks =>
  createRequire(import.meta.url)('fs-native-extensions') as typeof NativeLocks;

/**
 * For readers (`verify`, `doctor`): an operation a kourai writer left unfinished in the memoir's
 * journal, when no writer holds the memoir's lock (a writer that holds it is still at work).
 * Reads only; the next writer or `memoir repair` finishes or rolls it back.
 */
export function unfinishedWrite(memoir: string): { op: string; offset: number; message: string } | undefined {
  const journal = new Journal(memoir, false);
  let pending;
  try {
    pending = journal.pending(true);
  } catch {
    return undefined; // no readable journal: nothing to report
  } finally {
    journal.close();
  }
  if (!pending || writerActive(memoir)) return undefined;
  const { entry } = pending;
  const batchBytes = entry.op === 'batch_lines' ? entry.bytes : entry.op === 'batch' ? entry.length : undefined;
  const message =
    batchBytes !== undefined
      ? `a batch of ${batchBytes} bytes was being appended at offset ${entry.offset} when its writer died; it is rolled back (or kept, if whole) by the next write`
      : `a cut at offset ${entry.offset} was interrupted with ${entry.length} bytes of other writers set aside; the next write puts them back`;
  return { op: entry.op, offset: entry.offset, message };
}

/** True when some process holds the memoir's writer lock right now (a probe with a shared lock). */
function writerActive(memoir: string): boolean {
  let fd: number;
  try {
    fd = openSync(memoir, 'r');
  } catch {
    return false;
  }
  try {
    const fsx = nativeLocks();
    if (!fsx.tryLock(fd, 0, 0, { shared: true })) return true;
    fsx.unlock(fd);
    return false;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}
