import { randomBytes } from 'node:crypto';
import { appendBatch, prepareBatch, type AppendOptions } from './append.js';
import { LineWriter } from '../format/encode-bytes.js';
import { ulidGenerator, type IdSource } from '../format/entry-id.js';
import { readRecords, type MemoirRecord } from './reader.js';
import type { MemoirEntry, MemoirInput } from '../format/schema.js';

/** A batch buffer larger than this is not kept between appends. */
const MAX_KEPT_SCRATCH = 64 << 20;

/**
 * A Forge Memoir for Node hosts. Appends validate everything first, then write one batch in
 * one O_APPEND write (fsynced); reads stream in bounded memory.
 *
 *   const m = new Memoir(path);
 *   const [written] = m.append([{ scene_id, agent: 'techne', source: 'specialist_proposed' }]);
 *   for (const e of m.entries()) …
 */
export class Memoir {
  readonly path: string;
  private readonly ids: IdSource;
  private readonly now: () => Date;
  /** The batch buffer, reused from one append to the next (written and consumed within append()). */
  private scratch = new LineWriter(0);

  constructor(path: string, opts: { now?: () => Date } = {}) {
    this.path = path;
    this.now = opts.now ?? (() => new Date());
    this.ids = ulidGenerator(
      () => this.now().getTime(),
      (n) => randomBytes(n),
    );
  }

  /** Validates and appends; throws InvalidDataError (nothing written) if any entry is invalid. */
  append(entries: readonly MemoirInput[], opts: AppendOptions = {}): MemoirEntry[] {
    const batch = prepareBatch({ values: entries, where: (n) => `entry ${n + 1}` }, this.ids, this.now, this.scratch);
    appendBatch(this.path, batch, { ...opts, now: this.now });
    // Kept for the next batch unless a huge one made it big: memory held is bounded.
    if (this.scratch.buf.length > MAX_KEPT_SCRATCH) this.scratch = new LineWriter(0);
    return batch.entries;
  }

  /** Valid entries in file order (invalid lines and a torn tail are skipped; see `records`). */
  *entries(): Generator<MemoirEntry> {
    for (const r of readRecords(this.path)) if (r.kind === 'entry') yield r.entry;
  }

  /** Every record, including invalid lines and a torn tail, with line numbers and offsets. */
  records(): Generator<MemoirRecord> {
    return readRecords(this.path);
  }

  get(id: string): MemoirEntry | undefined {
    for (const e of this.entries()) if (e.entry_id === id) return e;
    return undefined;
  }
}
