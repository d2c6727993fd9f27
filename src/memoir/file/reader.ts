import { isUtf8 } from 'node:buffer';
import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { fsError, IntegrityError, KouraiError } from '../../errors.js';
import { assertRegular, regularFd } from './durable.js';
import { MAX_LINE_BYTES } from '../format/limits.js';
import { parseLine } from '../format/parse.js';
import type { MemoirEntry } from '../format/schema.js';
import { firstInvalidUtf8 } from '../format/utf8.js';

/** A raw line of a memoir file: 1-based line number and byte range (newline excluded). */
export interface RawLine {
  line: number;
  offset: number;
  length: number;
  /** The line's text; empty for a line longer than MAX_LINE_BYTES (never loaded whole). */
  text: string;
  /** False for a final fragment with no newline: a torn write, never a complete entry. */
  terminated: boolean;
  /** Set when the bytes cannot be an entry whatever they say. */
  flaw?: { kind: 'too_long' | 'utf8'; message: string };
}

const CHUNK = 1 << 20;

export interface ReadRange {
  fromOffset?: number;
  fromLine?: number;
  untilOffset?: number;
  /** A read buffer to reuse (of READ_BUFFER_BYTES; e.g. across the ranges one thread reads), else a new one. */
  buffer?: Buffer;
}

/** The size of the buffer readLineViewsFd reads into: a read chunk plus the longest line read whole. */
export const READ_BUFFER_BYTES = CHUNK + MAX_LINE_BYTES + 2;

/**
 * Streams the lines of a file from `fromOffset` (which must be a line start), in bounded memory:
 * one buffer of a read chunk plus the longest line read whole (MAX_LINE_BYTES); a longer line is
 * skipped over and reported with `flaw.kind = 'too_long'`. Blank lines are skipped, as Python
 * readers skip them. Reads follow a symlinked path.
 */
export function* readRawLines(path: string, opts: ReadRange = {}): Generator<RawLine> {
  const fd = openForReading(path);
  try {
    yield* readRawLinesFd(fd, opts);
  } finally {
    closeSync(fd);
  }
}

export function* readRawLinesFd(fd: number, opts: ReadRange = {}): Generator<RawLine> {
  for (const v of readLineViewsFd(fd, opts)) yield rawLineOf(v);
}

/**
 * A line as bytes in the reader's buffer: `buf[start, end)` (newline and a CR before it excluded).
 * The same object is reused for every line and `buf` is overwritten as reading goes on: use it
 * before asking for the next line. Lines flagged `too_long` have no bytes (`start === end`).
 */
export interface LineView {
  line: number;
  offset: number;
  length: number;
  terminated: boolean;
  flaw: RawLine['flaw'] | undefined;
  buf: Buffer;
  start: number;
  end: number;
}

/** The RawLine of a view (its text decoded). */
export function rawLineOf(v: LineView): RawLine {
  const raw: RawLine = {
    line: v.line,
    offset: v.offset,
    length: v.length,
    text: v.flaw?.kind === 'too_long' ? '' : v.buf.toString('utf8', v.start, v.end),
    terminated: v.terminated,
  };
  if (v.flaw) raw.flaw = v.flaw;
  return raw;
}

/**
 * Streams the lines of a file as views over one read buffer (no string per line): the fast
 * readers scan bytes (src/memoir/format/scan/) and decode only what they need. Same lines, flaws and
 * bounds as readRawLinesFd, which is built on it. Returns the number of lines read, blank ones
 * included (a range's line count, for line numbers that go on in the next range).
 */
export function* readLineViewsFd(fd: number, opts: ReadRange = {}): Generator<LineView, number> {
  const size = opts.untilOffset ?? fstatSync(fd).size;
  let pos = opts.fromOffset ?? 0;
  let line = (opts.fromLine ?? 1) - 1;
  const buf =
    opts.buffer !== undefined && opts.buffer.length === READ_BUFFER_BYTES
      ? opts.buffer
      : Buffer.allocUnsafe(READ_BUFFER_BYTES);
  const v: LineView = { line: 0, offset: 0, length: 0, terminated: true, flaw: undefined, buf, start: 0, end: 0 };
  const tooLongView = (n: number, offset: number, length: number, terminated: boolean): LineView => {
    const t = tooLong(n, offset, length, terminated);
    v.line = t.line;
    v.offset = t.offset;
    v.length = t.length;
    v.terminated = t.terminated;
    v.flaw = t.flaw;
    v.start = 0;
    v.end = 0;
    return v;
  };
  let have = 0; // bytes held in buf
  let bufStart = pos; // file offset of buf[0]
  let skipFrom = -1; // file offset where an over-long line began, while skipping it
  while (pos < size) {
    const n = readSync(fd, buf, have, Math.min(buf.length - have, size - pos), pos);
    if (n <= 0) break;
    pos += n;
    const view = buf.subarray(0, have + n);
    let start = 0;
    if (skipFrom >= 0) {
      const nl = view.indexOf(10, have);
      if (nl < 0) {
        have = 0;
        bufStart = pos;
        continue;
      }
      line++;
      yield tooLongView(line, skipFrom, bufStart + nl - skipFrom, true);
      skipFrom = -1;
      start = nl + 1;
    }
    have += n;
    const lastNl = view.lastIndexOf(10);
    // One UTF-8 check for the whole block of complete lines; only a failing block is checked line by line.
    const blockValid = lastNl < start || isUtf8(view.subarray(start, lastNl + 1));
    while (start <= lastNl) {
      const nl = view.indexOf(10, start);
      line++;
      let end = nl;
      if (end > start && view[end - 1] === 13) end--; // tolerate CRLF
      if (end > start && !isBlank(view, start, end)) {
        const length = end - start;
        if (length > MAX_LINE_BYTES) yield tooLongView(line, bufStart + start, length, true);
        else {
          v.line = line;
          v.offset = bufStart + start;
          v.length = length;
          v.terminated = true;
          v.flaw = undefined;
          v.start = start;
          v.end = end;
          if (!blockValid) {
            const bad = firstInvalidUtf8(view, start, end);
            if (bad >= 0)
              v.flaw = { kind: 'utf8', message: `invalid UTF-8 at byte ${bad} of the line (offset ${v.offset + bad})` };
          }
          yield v;
        }
      }
      start = nl + 1;
    }
    const rest = have - start;
    if (rest > MAX_LINE_BYTES) {
      skipFrom = bufStart + start;
      have = 0;
      bufStart = pos;
    } else {
      buf.copyWithin(0, start, have);
      have = rest;
      bufStart += start;
    }
  }
  if (skipFrom >= 0) {
    yield tooLongView(line + 1, skipFrom, pos - skipFrom, false);
    return line + 1;
  } else if (have > 0 && !isBlank(buf, 0, have)) {
    v.line = line + 1;
    v.offset = bufStart;
    v.length = have;
    v.terminated = false;
    v.flaw = undefined;
    v.start = 0;
    v.end = have;
    yield v;
    return line + 1;
  }
  return line;
}

function tooLong(line: number, offset: number, length: number, terminated: boolean): RawLine {
  return {
    line,
    offset,
    length,
    text: '',
    terminated,
    flaw: {
      kind: 'too_long',
      message: `the line is ${length.toLocaleString('en-US')} bytes, over the ${MAX_LINE_BYTES.toLocaleString('en-US')}-byte maximum (not read)`,
    },
  };
}

function isBlank(b: Uint8Array, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = b[i];
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

export type InvalidProblem = 'json' | 'schema' | 'too_long' | 'utf8';

export type MemoirRecord =
  | ({ kind: 'entry'; entry: MemoirEntry; derived: boolean } & RawLine)
  | ({ kind: 'invalid'; problem: InvalidProblem; message: string } & RawLine)
  | ({ kind: 'torn' } & RawLine);

export interface ReadRecordsOptions extends ReadRange {
  occurrenceOf?: (baseId: string) => number;
}

/** Streams parsed records. Identical Python lines get `~2`, `~3`… via `occurrenceOf`. */
export function* readRecords(path: string, opts: ReadRecordsOptions = {}): Generator<MemoirRecord> {
  const fd = openForReading(path);
  try {
    yield* readRecordsFd(fd, opts);
  } finally {
    closeSync(fd);
  }
}

export function* readRecordsFd(fd: number, opts: ReadRecordsOptions = {}): Generator<MemoirRecord> {
  const counts = new Map<string, number>();
  const occurrenceOf =
    opts.occurrenceOf ??
    ((base: string) => {
      const n = (counts.get(base) ?? 0) + 1;
      counts.set(base, n);
      return n;
    });
  for (const raw of readRawLinesFd(fd, opts)) yield toRecord(raw, occurrenceOf);
}

export function toRecord(raw: RawLine, occurrenceOf?: (baseId: string) => number): MemoirRecord {
  if (!raw.terminated) return { kind: 'torn', ...raw };
  if (raw.flaw) return { kind: 'invalid', problem: raw.flaw.kind, message: raw.flaw.message, ...raw };
  const parsed = parseLine(raw.text, occurrenceOf);
  if (parsed.ok) return { kind: 'entry', entry: parsed.entry, derived: parsed.derived, ...raw };
  return { kind: 'invalid', problem: parsed.problem, message: parsed.message, ...raw };
}

/** Opens a memoir for reading (following symlinks); a failure is the usual one-line fs error naming it. */
export function openForReading(path: string): number {
  assertRegular(path, 'memoir', true);
  try {
    return regularFd(openSync(path, constants.O_RDONLY | constants.O_NONBLOCK), path, 'memoir');
  } catch (err) {
    if (err instanceof KouraiError) throw err;
    throw fsError(err, 'memoir', path);
  }
}

/** The bytes of one line, read by offset (the index knows where every entry is). */
export function readLineAt(path: string, offset: number, length: number): string {
  const fd = openForReading(path);
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
  return loadEntryLineAt(path, offset, length, entryId).entry;
}

/** The same, with the entry's line as the file holds it (without its line ending). */
export function loadEntryLineAt(
  path: string,
  offset: number,
  length: number,
  entryId: string,
): { entry: MemoirEntry; line: string } {
  const line = readLineAt(path, offset, length);
  const parsed = parseLine(line, () => 1);
  if (!parsed.ok)
    throw new IntegrityError(
      `${path} at byte ${offset}: the indexed entry no longer parses (${parsed.message})`,
      'run `kourai memoir verify`',
    );
  parsed.entry.entry_id = entryId;
  return { entry: parsed.entry, line };
}
