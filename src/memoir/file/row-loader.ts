import { closeSync, openSync, readSync } from 'node:fs';
import { fsError, IntegrityError } from '../../errors.js';
import { parseLine } from '../format/parse.js';
import type { MemoirEntry } from '../format/schema.js';

/** Where an indexed entry lives (an index row has these fields). */
export interface EntryLocation {
  path: string;
  offset: number;
  length: number;
  entry_id: string;
}

/**
 * Loads many indexed entries from their memoirs, keeping one descriptor per file open instead
 * of opening the file for every entry (`loadEntryAt`). Close it when done.
 */
export class RowLoader {
  private readonly fds = new Map<string, number>();
  private buf = Buffer.alloc(64 * 1024);

  load(row: EntryLocation): MemoirEntry {
    let fd = this.fds.get(row.path);
    if (fd === undefined) {
      try {
        fd = openSync(row.path, 'r');
      } catch (err) {
        throw fsError(err, 'memoir', row.path);
      }
      this.fds.set(row.path, fd);
    }
    if (this.buf.length < row.length) this.buf = Buffer.alloc(row.length * 2);
    let got = 0;
    while (got < row.length) {
      const n = readSync(fd, this.buf, got, row.length - got, row.offset + got);
      if (n <= 0) break;
      got += n;
    }
    const parsed = parseLine(this.buf.toString('utf8', 0, got), () => 1);
    if (!parsed.ok)
      throw new IntegrityError(
        `${row.path} at byte ${row.offset}: the indexed entry no longer parses (${parsed.message})`,
        'run `kourai memoir verify`',
      );
    parsed.entry.entry_id = row.entry_id;
    return parsed.entry;
  }

  close(): void {
    for (const fd of this.fds.values()) closeSync(fd);
    this.fds.clear();
  }
}
