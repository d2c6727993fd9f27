import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, readSync } from 'node:fs';
import { CancelledError } from '../../errors.js';
import { fsyncDir, openNoFollow, writeAll } from './durable.js';

/**
 * The quarantine: bytes that leave a memoir are never thrown away. They are copied, fsynced, to
 * `<memoir>.quarantine.jsonl` (one JSON record per piece) before the memoir is cut:
 * - `torn_tail`: the bytes after the last newline, a write that never finished;
 * - `uncommitted_batch`: the part of a kourai batch that was being written when its writer died;
 * - `putback_unresolved`: bytes of other writers that a crashed cut could not safely put back.
 * Pieces up to 256 KiB are one record with `text` and `base64`; longer ones are split into
 * records of `part` 1..`parts` carrying `base64` only, so no record (and no reader) needs the
 * whole piece in memory.
 */
export const QUARANTINE_PART = 256 * 1024;

export type QuarantineReason = 'torn_tail' | 'uncommitted_batch' | 'putback_unresolved';

export interface QuarantineRecord {
  quarantined_at: string;
  memoir: string;
  offset: number;
  length: number;
  reason: QuarantineReason;
  /** Present when the piece spans several records. */
  part?: number;
  parts?: number;
  /** The text (when the piece is one record). */
  text?: string;
  base64: string;
}

export interface Quarantined {
  file: string;
  offset: number;
  length: number;
  reason: QuarantineReason;
  /** The first 80 characters, for messages. */
  preview: string;
}

export function quarantinePath(memoir: string): string {
  return `${memoir}.quarantine.jsonl`;
}

export interface TornTail {
  offset: number;
  length: number;
}

/** Finds a torn tail on an open fd (undefined when the file is empty or ends with a newline). */
export function findTornTail(fd: number, size = fstatSync(fd).size): TornTail | undefined {
  if (size === 0) return undefined;
  const one = Buffer.alloc(1);
  readSync(fd, one, 0, 1, size - 1);
  if (one[0] === 10) return undefined;
  const step = 64 * 1024;
  const b = Buffer.allocUnsafe(step);
  let end = size;
  while (end > 0) {
    const from = Math.max(0, end - step);
    const n = readSync(fd, b, 0, end - from, from);
    const nl = b.subarray(0, n).lastIndexOf(10);
    if (nl >= 0) return { offset: from + nl + 1, length: size - (from + nl + 1) };
    end = from;
  }
  return { offset: 0, length: size };
}

export function readBytes(fd: number, start: number, length: number): Buffer {
  const b = Buffer.allocUnsafe(length);
  let got = 0;
  while (got < length) {
    const n = readSync(fd, b, got, length - got, start + got);
    if (n <= 0) break;
    got += n;
  }
  return b.subarray(0, got);
}

export interface QuarantineOptions {
  now: Date;
  durable: boolean;
  signal?: AbortSignal;
}

/** Reads `length` bytes at memoir offset `at` (from the memoir, or from wherever they are kept). */
export type ByteSource = (at: number, length: number) => Buffer;

export const fromFd =
  (fd: number): ByteSource =>
  (at, length) =>
    readBytes(fd, at, length);

/**
 * Copies memoir bytes [start, end) to the memoir's quarantine file, a piece at a time, and fsyncs
 * it. Cancelled half way, the quarantine is cut back to what it was: nothing is half-written.
 * Called under the memoir lock (the quarantine has no other writer).
 */
export function quarantineRange(
  read: ByteSource,
  memoir: string,
  start: number,
  end: number,
  reason: QuarantineReason,
  opts: QuarantineOptions,
): Quarantined {
  const file = quarantinePath(memoir);
  const { fd: qfd, created } = openNoFollow(file, constants.O_WRONLY | constants.O_APPEND, 'quarantine', true);
  const length = end - start;
  const before = fstatSync(qfd).size;
  const parts = Math.max(1, Math.ceil(length / QUARANTINE_PART));
  let preview = '';
  try {
    for (let i = 0; i < parts; i++) {
      if (opts.signal?.aborted)
        throw new CancelledError('cancelled while moving bytes to the quarantine; nothing was changed');
      const at = start + i * QUARANTINE_PART;
      const bytes = read(at, Math.min(QUARANTINE_PART, end - at));
      if (i === 0) preview = bytes.subarray(0, 320).toString('utf8').slice(0, 80);
      const record: QuarantineRecord = {
        quarantined_at: opts.now.toISOString(),
        memoir,
        offset: parts === 1 ? start : at,
        length: parts === 1 ? length : bytes.length,
        reason,
        base64: '',
      };
      if (parts > 1) {
        record.part = i + 1;
        record.parts = parts;
      } else record.text = bytes.toString('utf8');
      record.base64 = bytes.toString('base64');
      writeAll(qfd, Buffer.from(`${JSON.stringify(record)}\n`, 'utf8'));
    }
    if (opts.durable) {
      fsyncSync(qfd);
      if (created) fsyncDir(file);
    }
  } catch (err) {
    try {
      ftruncateSync(qfd, before);
    } catch {
      // the quarantine keeps a partial copy; the memoir itself was not touched
    }
    throw err;
  } finally {
    closeSync(qfd);
  }
  return { file, offset: start, length, reason, preview };
}
