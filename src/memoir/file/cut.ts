import { createHash } from 'node:crypto';
import { fstatSync, fsyncSync, ftruncateSync } from 'node:fs';
import { writeAll } from './durable.js';
import type { Journal, JournalEntry } from './journal.js';
import type { MemoirLock } from './lock.js';
import {
  fromFd,
  quarantineRange,
  readBytes,
  type QuarantineOptions,
  type QuarantineReason,
  type Quarantined,
} from './quarantine.js';

/**
 * Removing bytes from a memoir without losing anyone else's. Only two things are ever removed: a
 * torn tail and the written part of a batch whose writer died. Both are copied to the quarantine
 * first; then everything after them (lines a lock-free host appended meanwhile) is parked in the
 * journal, the memoir is truncated, and the parked bytes are written back. The one window left:
 * bytes appended between the last look at the file's size and the truncation (microseconds,
 * README "Durability").
 */
export interface CutReport {
  quarantined: Quarantined;
  /** Bytes of other writers that followed the cut range and were put back. */
  keptBytes: number;
}

const PIECE = 1 << 20;

export function cutRange(
  lock: MemoirLock,
  journal: Journal,
  start: number,
  end: number,
  reason: QuarantineReason,
  opts: QuarantineOptions,
): CutReport {
  const quarantined = quarantineRange(fromFd(lock.fd), lock.path, start, end, reason, opts);
  const keptBytes = truncateKeeping(lock, journal, start, end, opts.durable);
  return { quarantined, keptBytes };
}

/** Cuts the memoir back to `start`, dropping [start, end) (already quarantined) and keeping what follows `end`. */
function truncateKeeping(lock: MemoirLock, journal: Journal, start: number, end: number, durable: boolean): number {
  const fd = lock.fd;
  let size = fstatSync(fd).size;
  if (size <= end) {
    ftruncateSync(fd, start);
    if (durable) fsyncSync(fd);
    journal.clear();
    return 0;
  }
  // Others wrote after `end`: park their bytes in the journal until they are written back.
  const cutSha = createHash('sha256')
    .update(readBytes(fd, start, end - start))
    .digest('hex');
  journal.start(true);
  for (;;) {
    while (end + journal.length < size)
      journal.add(readBytes(fd, end + journal.length, Math.min(PIECE, size - end - journal.length)));
    journal.seal({ op: 'putback', offset: start, cut_end: end, cut_sha256: cutSha });
    const now = fstatSync(fd).size;
    if (now === size) break;
    size = now; // more arrived while sealing: park it too
  }
  ftruncateSync(fd, start);
  const kept = journal.length;
  for (let at = 0; at < kept; at += PIECE) writeAll(fd, journal.readPayload(at, Math.min(PIECE, kept - at)));
  if (durable) fsyncSync(fd);
  journal.clear();
  return kept;
}

/** Finishes a cut whose writer died half way (journal op `putback`). Returns what was done. */
export function resumePutback(
  lock: MemoirLock,
  journal: Journal,
  entry: Extract<JournalEntry, { op: 'putback' }>,
  payload: Buffer,
  opts: QuarantineOptions,
): string {
  const fd = lock.fd;
  const size = fstatSync(fd).size;
  if (
    size >= entry.cut_end &&
    createHash('sha256')
      .update(readBytes(fd, entry.offset, entry.cut_end - entry.offset))
      .digest('hex') === entry.cut_sha256
  ) {
    // Not truncated yet (the cut range is already in the quarantine): do the cut again.
    const kept = truncateKeeping(lock, journal, entry.offset, entry.cut_end, opts.durable);
    return `finished an interrupted cut at offset ${entry.offset} (${kept} bytes of other writers kept)`;
  }
  const back = commonPrefix(fd, entry.offset, payload, size);
  if (back === payload.length) {
    journal.clear();
    return 'an interrupted cut had already finished';
  }
  if (entry.offset + back === size) {
    writeAll(fd, payload.subarray(back));
    if (opts.durable) fsyncSync(fd);
    journal.clear();
    return `wrote back ${payload.length - back} bytes of other writers after an interrupted cut`;
  }
  // Someone appended while the bytes were out: where they belong can no longer be told. Keep them.
  const at = entry.offset;
  const q = quarantineRange(
    (o, l) => payload.subarray(o - at, o - at + l),
    lock.path,
    at,
    at + payload.length,
    'putback_unresolved',
    opts,
  );
  journal.clear();
  return `${payload.length} bytes of other writers from an interrupted cut could not be put back safely: kept in ${q.file}`;
}

/** How many bytes of `b` the file holds from `pos` on (stops at `size`). */
export function commonPrefix(fd: number, pos: number, b: Uint8Array, size: number): number {
  const limit = Math.min(b.length, Math.max(0, size - pos));
  let n = 0;
  while (n < limit) {
    const chunk = readBytes(fd, pos + n, Math.min(PIECE, limit - n));
    if (chunk.length === 0) break;
    for (let i = 0; i < chunk.length; i++) if (chunk[i] !== b[n + i]) return n + i;
    n += chunk.length;
  }
  return n;
}
