import { createHash, type Hash } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { closeSync, constants, fstatSync, fsyncSync, ftruncateSync, readSync, renameSync } from 'node:fs';
import { NotFoundError } from '../../errors.js';
import { fsyncDir, openNoFollow, writeAll } from './durable.js';
import { readBytes } from './quarantine.js';

/**
 * The write-ahead journal of a memoir (`<memoir>.journal`, beside it): the one operation a kourai
 * writer has in flight, written and fsynced *before* the memoir is touched, so the next writer
 * (under the lock) can finish or undo it after a crash.
 *   batch_lines  the offset a batch is appended at, each of its lines' length and CRC-32, and its
 *            first line's bytes (what `batchRecord` makes: ~1% of the batch): a batch found partly
 *            written is rolled back into the quarantine; found whole, it stays (all or nothing).
 *   batch    (written by kourai before 2026-11-23; still recovered) the whole batch's bytes.
 *   putback  bytes other writers appended after a range being cut (a torn tail, a rolled-back
 *            batch), parked here while the memoir is truncated and then written back.
 * Layout: a JSON header line in the first 4 KiB, then the payload. An empty file means nothing is
 * in flight; a header whose payload hash does not match was torn before the memoir was touched.
 * Clearing is a truncation to 0 without fsync: should it be lost, the recovery of the operation
 * finds it already complete and does nothing.
 */
export const JOURNAL_HEADER_BYTES = 4096;

export type JournalOp =
  | { op: 'batch'; offset: number }
  | { op: 'batch_lines'; offset: number; lines: number; bytes: number }
  | { op: 'putback'; offset: number; cut_end: number; cut_sha256: string };

export type JournalEntry = JournalOp & { v: 1; length: number; sha256: string };

export function journalPath(memoir: string): string {
  return `${memoir}.journal`;
}

/**
 * What a batch's journal holds instead of the batch: for each line (newline included) its length
 * and CRC-32 (8 bytes, little-endian), then the first line's bytes. Whole lines are recognised by
 * length + CRC; a line cut short is told from other writers' bytes by where their next valid line
 * starts, and the first line, the one that may be found torn on its own, byte for byte
 * (recover.ts). `buf` is whole lines, each ending in a newline.
 */
export interface BatchRecord {
  table: Buffer;
  first: Buffer;
  lines: number;
}

export function batchRecord(buf: Buffer): BatchRecord {
  let lines = 0;
  for (let at = buf.indexOf(10); at >= 0; at = buf.indexOf(10, at + 1)) lines++;
  const table = Buffer.allocUnsafe(lines * 8);
  let start = 0;
  for (let k = 0; k < lines; k++) {
    const end = buf.indexOf(10, start) + 1;
    table.writeUInt32LE(end - start, k * 8);
    table.writeUInt32LE(crc32(buf.subarray(start, end)), k * 8 + 4);
    start = end;
  }
  return { table, first: buf.subarray(0, lines > 0 ? table.readUInt32LE(0) : 0), lines };
}

export class Journal {
  readonly path: string;
  private fd: number | undefined;
  private staged = false;
  private hash: Hash | undefined;
  private payloadLength = 0;

  constructor(
    memoir: string,
    private readonly durable: boolean,
  ) {
    this.path = journalPath(memoir);
  }

  private get stagingPath(): string {
    return `${this.path}.new`;
  }

  /**
   * The operation left in flight, if any. A torn journal counts as none (the memoir was not touched
   * yet) and is cleared, unless `readOnly`.
   */
  pending(readOnly = false): { entry: JournalEntry; payload: Buffer } | undefined {
    const fd = this.open(false, readOnly);
    if (fd === undefined) return undefined;
    const size = fstatSync(fd).size;
    if (size === 0) return undefined;
    const head = readBytes(fd, 0, Math.min(size, JOURNAL_HEADER_BYTES));
    const nl = head.indexOf(10);
    let entry: JournalEntry | undefined;
    try {
      entry = JSON.parse(head.subarray(0, nl < 0 ? 0 : nl).toString('utf8')) as JournalEntry;
    } catch {
      entry = undefined;
    }
    if (!entry || entry.v !== 1 || size < JOURNAL_HEADER_BYTES + entry.length) {
      if (!readOnly) this.clear();
      return undefined;
    }
    const payload = readBytes(fd, JOURNAL_HEADER_BYTES, entry.length);
    if (createHash('sha256').update(payload).digest('hex') !== entry.sha256) {
      if (!readOnly) this.clear();
      return undefined;
    }
    return { entry, payload };
  }

  /**
   * Starts a new operation. `replacing`: an operation is still pending and must stay valid until
   * this one is sealed, so the new one is written beside the journal and renamed over it.
   */
  start(replacing = false): void {
    if (replacing) {
      this.close();
      const { fd } = openNoFollow(this.stagingPath, constants.O_RDWR, 'memoir journal', true);
      this.fd = fd;
      this.staged = true;
    } else this.open(true);
    ftruncateSync(this.fd as number, 0);
    this.hash = createHash('sha256');
    this.payloadLength = 0;
  }

  add(bytes: Uint8Array): void {
    if (!this.hash || this.fd === undefined) throw new Error('journal: add() before start()');
    writeAll(this.fd, bytes, JOURNAL_HEADER_BYTES + this.payloadLength);
    this.hash.update(bytes);
    this.payloadLength += bytes.length;
  }

  get length(): number {
    return this.payloadLength;
  }

  /** Writes the header after the payload and makes both durable: from here the operation may touch the memoir. */
  seal(op: JournalOp): void {
    if (!this.hash || this.fd === undefined) throw new Error('journal: seal() before start()');
    const entry: JournalEntry = { v: 1, ...op, length: this.payloadLength, sha256: this.hash.copy().digest('hex') };
    const header = Buffer.from(`${JSON.stringify(entry)}\n`, 'utf8');
    writeAll(this.fd, header, 0);
    if (this.durable) fsyncSync(this.fd);
    if (this.staged) {
      renameSync(this.stagingPath, this.path); // atomic: the old operation or the new one, never neither
      if (this.durable) fsyncDir(this.path);
      this.staged = false;
    }
  }

  /** Nothing in flight any more. */
  clear(): void {
    if (this.fd !== undefined) ftruncateSync(this.fd, 0);
    this.hash = undefined;
    this.payloadLength = 0;
  }

  /** Reads payload bytes [from, from + length). */
  readPayload(from: number, length: number): Buffer {
    if (this.fd === undefined) return Buffer.alloc(0);
    const b = Buffer.allocUnsafe(length);
    const n = readSync(this.fd, b, 0, length, JOURNAL_HEADER_BYTES + from);
    return b.subarray(0, n);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private open(create: boolean, readOnly = false): number | undefined {
    if (this.fd !== undefined) return this.fd;
    try {
      const { fd, created } = openNoFollow(
        this.path,
        readOnly ? constants.O_RDONLY : constants.O_RDWR,
        'memoir journal',
        create,
      );
      this.fd = fd;
      if (created && this.durable) fsyncDir(this.path);
      return fd;
    } catch (err) {
      if (!create && err instanceof NotFoundError) return undefined; // no journal: nothing in flight
      throw err;
    }
  }
}
