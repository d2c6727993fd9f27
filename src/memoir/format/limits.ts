import { InvalidDataError } from '../../errors.js';
import { hasLoneSurrogate } from './utf8.js';

/**
 * The largest memoir line kourai writes or reads whole: 1 MiB of UTF-8, newline excluded. An
 * entry is a few hundred bytes; a longer line is refused on append and reported by `verify`
 * (read in pieces, never loaded whole), so one runaway line cannot take a reader's memory.
 */
export const MAX_LINE_BYTES = 1 << 20;

/**
 * Checks a line kourai is about to write: well-formed Unicode (a lone surrogate, raw or as the
 * `\udXXX` escape JSON.stringify writes for it, is not text: stored raw it would become U+FFFD,
 * escaped it makes Python readers refuse the line), no raw newline, at most MAX_LINE_BYTES.
 * Returns its UTF-8 length.
 */
export function checkOutgoingLine(line: string, where: string): number {
  if (!line.isWellFormed() || hasLoneSurrogate(line))
    throw new InvalidDataError(
      `${where}: the entry contains invalid Unicode (a lone surrogate), which cannot be written as UTF-8`,
      'nothing was written; fix the text and retry',
    );
  if (line.includes('\n'))
    throw new InvalidDataError(`${where}: a memoir line cannot contain a raw newline`, 'nothing was written');
  const bytes = Buffer.byteLength(line, 'utf8');
  if (bytes > MAX_LINE_BYTES) {
    const big = largestField(line);
    throw new InvalidDataError(
      `${where}: the entry is ${bytes.toLocaleString('en-US')} bytes as a line; the maximum is ${MAX_LINE_BYTES.toLocaleString('en-US')}${big ? ` (${big.field} holds ${big.bytes.toLocaleString('en-US')})` : ''}`,
      'nothing was written; shorten the text',
    );
  }
  return bytes;
}

/** The field of a line that holds the most bytes (a key of an object-valued field, such as `context.host`, when one dominates). */
function largestField(line: string): { field: string; bytes: number } | undefined {
  let top: unknown;
  try {
    top = JSON.parse(line);
  } catch {
    return undefined;
  }
  const largest = (o: Record<string, unknown>): [string, number] | undefined => {
    let best: [string, number] | undefined;
    for (const [k, v] of Object.entries(o)) {
      const n = Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');
      if (best === undefined || n > best[1]) best = [k, n];
    }
    return best;
  };
  if (typeof top !== 'object' || top === null) return undefined;
  const [k, n] = largest(top as Record<string, unknown>) ?? [];
  if (k === undefined || n === undefined) return undefined;
  const v = (top as Record<string, unknown>)[k];
  if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
    const inner = largest(v as Record<string, unknown>);
    if (inner !== undefined && inner[1] * 2 > n) return { field: `${k}.${inner[0]}`, bytes: inner[1] };
  }
  return { field: k, bytes: n };
}
