import { fstatSync, readSync } from 'node:fs';
import { EnvironmentError } from '../../errors.js';
import { parseLine } from '../format/parse.js';
import { readRecordsFd } from './reader.js';

/**
 * Is this file a memoir kourai may write into? It is when it is empty, or when it holds at least
 * one valid memoir line (normally the first one; a memoir damaged at the start is still one).
 * Binary content (a NUL byte before the first newline) or text with no valid entry at all (a
 * Markdown file, a log) is not: writers refuse it untouched, whatever its name.
 */
export function assertIsMemoir(fd: number, path: string): void {
  const size = fstatSync(fd).size;
  if (size === 0) return;
  const head = Buffer.allocUnsafe(Math.min(size, 64 * 1024));
  const n = readSync(fd, head, 0, head.length, 0);
  const firstNl = head.subarray(0, n).indexOf(10);
  if (isEntry(head.subarray(0, firstNl < 0 ? 0 : firstNl))) return;
  // The first line is not an entry. A NUL byte with data after it is binary content (a crash can
  // leave a run of zeros, but only at the very end).
  const nul = head.subarray(0, n).indexOf(0);
  if (nul >= 0 && head.subarray(nul, n).some((b) => b !== 0)) throw notAMemoir(path, 'it holds binary data');
  let lines = 0;
  for (const rec of readRecordsFd(fd)) {
    if (rec.kind === 'entry') return;
    // A memoir whose very first write was torn: one unfinished JSON object and nothing else.
    if (rec.kind === 'torn' && lines === 0 && /^\s*\{/.test(rec.text)) return;
    lines++;
  }
  throw notAMemoir(path, `none of its ${lines} line${lines === 1 ? ' is' : 's is'} a memoir entry`);
}

function isEntry(line: Buffer): boolean {
  return line.length > 0 && parseLine(line.toString('utf8')).ok;
}

function notAMemoir(path: string, why: string): EnvironmentError {
  return new EnvironmentError(
    `not a memoir, refusing to write into it: ${path} (${why})`,
    'check --memoir: it must name a memoir.jsonl (or its forge directory); the file was not changed',
  );
}
