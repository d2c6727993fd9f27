import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { fsError, IntegrityError } from '../errors.js';
import { parseLine } from './parse.js';
import type { MemoirEntry } from './schema.js';

/** A raw line of a memoir file: 1-based line number and byte range (newline excluded). */
export interface RawLine {
  line: number;
  offset: number;
  length: number;
  text: string;
  /** False for a final fragment with no newline: a torn write, never a complete entry. */
  terminated: boolean;
}

const CHUNK = 1 << 20;

/**
 * Streams the lines of a file from `fromOffset` (which must be a line start), in bounded memory.
 * Blank lines are skipped, as Python readers skip them.
 */
export function* readRawLines(path: string, opts: { fromOffset?: number; fromLine?: number; untilOffset?: number } = {}): Generator<RawLine> {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw fsError(err, 'memoir', path);
  }
  try {
    const size = opts.untilOffset ?? fstatSync(fd).size;
    let pos = opts.fromOffset ?? 0;
    let line = (opts.fromLine ?? 1) - 1;
    let carry: Buffer = Buffer.alloc(0);
    let carryStart = pos;
    const buf = Buffer.allocUnsafe(CHUNK);
    while (pos < size) {
      const n = readSync(fd, buf, 0, Math.min(CHUNK, size - pos), pos);
      if (n <= 0) break;
      const chunk = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
      const base = carry.length ? carryStart : pos;
      pos += n;
      let start = 0;
      for (;;) {
        const nl = chunk.indexOf(10, start);
        if (nl < 0) break;
        line++;
        let end = nl;
        if (end > start && chunk[end - 1] === 13) end--; // tolerate CRLF
        if (end > start && !isBlank(chunk, start, end)) {
          yield { line, offset: base + start, length: end - start, text: chunk.toString('utf8', start, end), terminated: true };
        }
        start = nl + 1;
      }
      carry = Buffer.from(chunk.subarray(start));
      carryStart = base + start;
    }
    if (carry.length && !isBlank(carry, 0, carry.length)) {
      yield { line: line + 1, offset: carryStart, length: carry.length, text: carry.toString('utf8'), terminated: false };
    }
  } finally {
    closeSync(fd);
  }
}

function isBlank(b: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

export type MemoirRecord =
  | ({ kind: 'entry'; entry: MemoirEntry; derived: boolean } & RawLine)
  | ({ kind: 'invalid'; problem: 'json' | 'schema'; message: string } & RawLine)
  | ({ kind: 'torn' } & RawLine);

/** Streams parsed records. Identical Python lines get `~2`, `~3`… via `occurrenceOf`. */
export function* readRecords(
  path: string,
  opts: { fromOffset?: number; fromLine?: number; occurrenceOf?: (baseId: string) => number } = {},
): Generator<MemoirRecord> {
  const counts = new Map<string, number>();
  const occurrenceOf =
    opts.occurrenceOf ??
    ((base: string) => {
      const n = (counts.get(base) ?? 0) + 1;
      counts.set(base, n);
      return n;
    });
  for (const raw of readRawLines(path, opts)) {
    if (!raw.terminated) {
      yield { kind: 'torn', ...raw };
      continue;
    }
    const parsed = parseLine(raw.text, occurrenceOf);
    if (parsed.ok) yield { kind: 'entry', entry: parsed.entry, derived: parsed.derived, ...raw };
    else yield { kind: 'invalid', problem: parsed.problem, message: parsed.message, ...raw };
  }
}

/** The bytes of one line, read by offset (the index knows where every entry is). */
export function readLineAt(path: string, offset: number, length: number): string {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw fsError(err, 'memoir', path);
  }
  try {
    const b = Buffer.alloc(length);
    let got = 0;
    while (got < length) {
      const n = readSync(fd, b, got, length - got, offset + got);
      if (n <= 0) break;
      got += n;
    }
    return b.toString('utf8', 0, got);
  } finally {
    closeSync(fd);
  }
}

/** An indexed entry read back from its file, with the id the index assigned it. */
export function loadEntryAt(path: string, offset: number, length: number, entryId: string): MemoirEntry {
  const parsed = parseLine(readLineAt(path, offset, length), () => 1);
  if (!parsed.ok) throw new IntegrityError(`${path} at byte ${offset}: the indexed entry no longer parses (${parsed.message})`, 'run `kourai memoir verify`');
  parsed.entry.entry_id = entryId;
  return parsed.entry;
}
