import { closeSync, fstatSync, fsyncSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';

/**
 * Torn tails: the bytes after the last newline of a memoir are a write that never finished.
 * They are copied to `<memoir>.quarantine.jsonl` (one JSON record each, fsynced) before the
 * memoir is cut back to its last complete line, so nothing is thrown away and nothing is glued
 * to the next entry.
 */
export interface TornTail {
  offset: number;
  length: number;
  bytes: Buffer;
}

export function quarantinePath(memoir: string): string {
  return `${memoir}.quarantine.jsonl`;
}

/** Finds a torn tail on an open fd (undefined when the file is empty or ends with a newline). */
export function findTornTail(fd: number): TornTail | undefined {
  const size = fstatSync(fd).size;
  if (size === 0) return undefined;
  const one = Buffer.alloc(1);
  readSync(fd, one, 0, 1, size - 1);
  if (one[0] === 10) return undefined;
  const step = 64 * 1024;
  let end = size;
  let start = size;
  while (start > 0) {
    const from = Math.max(0, end - step);
    const b = Buffer.alloc(end - from);
    readSync(fd, b, 0, b.length, from);
    const nl = b.lastIndexOf(10);
    if (nl >= 0) {
      start = from + nl + 1;
      break;
    }
    start = from;
    end = from;
  }
  const bytes = Buffer.alloc(size - start);
  readSync(fd, bytes, 0, bytes.length, start);
  return { offset: start, length: bytes.length, bytes };
}

export interface QuarantineRecord {
  quarantined_at: string;
  memoir: string;
  offset: number;
  length: number;
  reason: 'torn_tail';
  text: string;
  base64: string;
}

/** Copies a torn tail to the quarantine file (fsynced), then truncates the memoir to `offset`. */
export function quarantineTornTail(fd: number, memoir: string, tail: TornTail, now: Date): QuarantineRecord {
  const record: QuarantineRecord = {
    quarantined_at: now.toISOString(),
    memoir,
    offset: tail.offset,
    length: tail.length,
    reason: 'torn_tail',
    text: tail.bytes.toString('utf8'),
    base64: tail.bytes.toString('base64'),
  };
  const qfd = openSync(quarantinePath(memoir), 'a');
  try {
    writeSync(qfd, `${JSON.stringify(record)}\n`);
    fsyncSync(qfd);
  } finally {
    closeSync(qfd);
  }
  ftruncateSync(fd, tail.offset);
  fsyncSync(fd);
  return record;
}
