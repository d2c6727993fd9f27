import { fsError, KouraiError } from '../../errors.js';
import { DEFAULT_STALE_MS } from './append.js';
import type { CutReport } from './cut.js';
import { assertIsMemoir } from './identify.js';
import { Journal } from './journal.js';
import { lockMemoir } from './lock.js';
import { recoverJournal, settleTornTail } from './recover.js';

export interface RepairOutcome {
  repaired: {
    reason: 'torn_tail' | 'uncommitted_batch';
    offset: number;
    length: number;
    kept_after: number;
    quarantine: string;
    preview: string;
  }[];
  notes: string[];
}

/**
 * `memoir repair`: what an append does before it writes, and nothing else: under the lock, finish
 * or roll back a dead kourai writer's batch, refuse a file that is not a memoir, and move a stale
 * torn tail to the quarantine (a fragment still being written is left alone).
 */
export function repairMemoir(
  path: string,
  opts: { now: () => Date; signal?: AbortSignal; fsync?: boolean; staleMs?: number; lockWaitMs?: number },
): RepairOutcome {
  const waitMs = opts.lockWaitMs ?? 5000;
  const deadline = Date.now() + waitMs;
  const lock = lockMemoir(path, { waitMs, create: false, ...(opts.signal ? { signal: opts.signal } : {}) });
  const durable = opts.fsync !== false;
  const journal = new Journal(path, durable);
  const out: RepairOutcome = { repaired: [], notes: [] };
  const add = (reason: 'torn_tail' | 'uncommitted_batch', cut: CutReport): void => {
    out.repaired.push({
      reason,
      offset: cut.quarantined.offset,
      length: cut.quarantined.length,
      kept_after: cut.keptBytes,
      quarantine: cut.quarantined.file,
      preview: cut.quarantined.preview,
    });
  };
  try {
    const q = { now: opts.now(), durable, ...(opts.signal ? { signal: opts.signal } : {}) };
    assertIsMemoir(lock.fd, path);
    const recovered = recoverJournal(lock, journal, q);
    if (recovered?.rolledBack) add('uncommitted_batch', recovered.rolledBack);
    if (recovered?.keptWholeBatch)
      out.notes.push(
        `a batch of ${recovered.keptWholeBatch.length} bytes whose writer died after writing it whole was kept`,
      );
    if (recovered?.note) out.notes.push(recovered.note);
    const torn = settleTornTail(lock, journal, { ...q, staleMs: opts.staleMs ?? DEFAULT_STALE_MS, deadline });
    if (torn) add('torn_tail', torn);
  } catch (err) {
    // a full disk or an I/O error while moving bytes to the quarantine: the memoir is as it was
    if (err instanceof KouraiError) throw err;
    throw fsError(err, 'memoir quarantine', path);
  } finally {
    journal.close();
    lock.release();
  }
  return out;
}
