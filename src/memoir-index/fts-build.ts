import { closeSync, fstatSync } from 'node:fs';
import { IntegrityError } from '../errors.js';
import { openForReading } from '../memoir/file/reader.js';
import type { DB } from '../store/db.js';
import { appendOnlyViolation, BATCH, PARALLEL_MIN_BYTES, type FileRow } from './index-build.js';
import { rowBatches, WorkerRows, workerAvailable } from './index-pipeline.js';
import { encodeRows, RowDecoder, type RowBatch } from './index-rows.js';

/**
 * The full-text index (`entries_fts`, FTS5) is built lazily. A bulk load (index-build.ts) writes
 * no FTS rows: it marks the files it loads `fts_complete = 0`, and the first text query over such
 * a file builds their rows here, from the memoir (the index stores no text). Incremental runs keep
 * a complete file's rows current as before. The invariant, per file:
 *   fts_complete = 1: every entry of the file has its FTS row;
 *   fts_complete = 0: no entry of the file has one.
 * So a file's rows are written in one transaction together with the flag: a build cancelled or
 * killed half way leaves the file at 0 with no rows, never a partial index that looks complete.
 *
 * The memoir is read again from byte 0 up to what was indexed, after the same append-only check an
 * incremental run makes (inode, size, head and tail hashes); each row's text goes to the entry
 * indexed at the same line.
 */
export interface FullTextOptions {
  /** The caller awaits the promises `steps()` yields (a big file is parsed in a worker thread). */
  parallel?: boolean;
}

/** Files among `fileIds` (all files when undefined) whose full-text rows are not built. */
export function filesWithoutFullText(db: DB, fileIds?: readonly number[]): FileRow[] {
  const rows = db.prepare<[], FileRow>('SELECT * FROM files WHERE fts_complete = 0 ORDER BY id').all();
  if (fileIds === undefined) return rows;
  const wanted = new Set(fileIds);
  return rows.filter((r) => wanted.has(r.id));
}

export class FullTextBuild {
  private readonly stmts;

  constructor(
    private readonly db: DB,
    private readonly files: readonly FileRow[],
    private readonly opts: FullTextOptions = {},
  ) {
    this.stmts = {
      file: db.prepare<[number], FileRow>('SELECT * FROM files WHERE id = ?'),
      seqs: db
        .prepare<[number, number, number], [number, number]>(
          'SELECT line, seq FROM entries WHERE file_id = ? AND line BETWEEN ? AND ?',
        )
        .raw(),
      count: db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM entries WHERE file_id = ?'),
      span: db.prepare<[number], { n: number; lo: number | null; hi: number | null }>(
        'SELECT count(*) AS n, min(seq) AS lo, max(seq) AS hi FROM entries WHERE file_id = ?',
      ),
      lineOf: db.prepare<[number], number>('SELECT line FROM entries WHERE seq = ?').pluck(),
      insertFts: db.prepare('INSERT INTO entries_fts (rowid, text) VALUES (?, ?)'),
      done: db.prepare('UPDATE files SET fts_complete = 1 WHERE id = ?'),
    };
  }

  /** Runs to the end without stopping (the synchronous fallback of a text query). */
  runAll(): void {
    for (const _ of this.steps()) {
      // never a promise: not `parallel`
    }
  }

  /** Each number yielded is a consistent point (bytes read so far); a promise: the worker's next batch. */
  *steps(): Generator<number | Promise<void>> {
    let done = 0;
    for (const f of this.files) {
      let committed = false;
      this.db.exec('BEGIN IMMEDIATE');
      try {
        // Read again under the write lock: another process may have built it meanwhile.
        const row = this.stmts.file.get(f.id);
        if (row && row.fts_complete === 0) {
          for (const step of this.fillFile(row)) {
            if (typeof step === 'number') yield done + step;
            else yield step;
          }
          this.stmts.done.run(row.id);
        }
        this.db.exec('COMMIT');
        committed = true;
        done += f.indexed_bytes;
        yield done;
      } finally {
        // SQLite may have rolled back itself (a full disk, an I/O error): the error that did it is the one to report.
        if (!committed && this.db.inTransaction) this.db.exec('ROLLBACK');
      }
    }
  }

  private *fillFile(row: FileRow): Generator<number | Promise<void>> {
    if (row.indexed_bytes === 0) return;
    const fd = openForReading(row.path);
    let worker: WorkerRows | undefined;
    try {
      const st = fstatSync(fd, { bigint: true });
      const changed = appendOnlyViolation(fd, row, Number(st.size), String(st.dev), String(st.ino));
      if (changed) throw changedError(row.path, changed);
      const until = row.indexed_bytes;
      worker =
        this.opts.parallel && until >= PARALLEL_MIN_BYTES && workerAvailable()
          ? new WorkerRows(fd, until, BATCH, { content: 'text', hashes: false })
          : undefined;
      const local = worker
        ? undefined
        : encodeRows(fd, {
            fromOffset: 0,
            fromLine: 1,
            untilOffset: until,
            batchEntries: BATCH,
            priorOccurrences: () => 0,
            content: 'text',
          });
      const decoder = new RowDecoder();
      // A file's rows are inserted in line order, so seq order is line order; when its seqs are also
      // consecutive (a file loaded in one go: the usual case here), the k-th entry read is row lo + k.
      const span = this.stmts.span.get(row.id);
      const first =
        span && span.lo !== null && span.hi !== null && span.hi - span.lo + 1 === span.n ? span.lo : undefined;
      let written = 0;
      for (const batch of rowBatches(worker, local)) {
        if (batch instanceof Promise) {
          yield batch;
          continue;
        }
        written +=
          first === undefined
            ? this.writeBatch(row, batch, decoder)
            : this.writeBatchAt(row, batch, decoder, first + written);
        yield batch.endBytes;
      }
      // Every entry indexed for the file got its text: nothing more, nothing less.
      const expected = this.stmts.count.get(row.id)?.n ?? 0;
      if (written !== expected) throw changedError(row.path, `${written} entries read for ${expected} indexed`);
    } finally {
      worker?.stop();
      closeSync(fd);
    }
  }

  /** Rows `seq`, `seq + 1`, … in order; the first and last lines of the batch are checked against them. */
  private writeBatchAt(row: FileRow, batch: RowBatch, decoder: RowDecoder, seq: number): number {
    let n = 0;
    let firstLine = 0;
    let lastLine = 0;
    decoder.eachText(batch, (line, text) => {
      if (n === 0) firstLine = line;
      lastLine = line;
      this.stmts.insertFts.run(seq + n++, text);
    });
    if (n > 0 && (this.stmts.lineOf.get(seq) !== firstLine || this.stmts.lineOf.get(seq + n - 1) !== lastLine))
      throw changedError(row.path, `line ${firstLine} or ${lastLine} is not where it was indexed`);
    return n;
  }

  /** Each row's seq looked up by its line (a file whose rows are not consecutive). */
  private writeBatch(row: FileRow, batch: RowBatch, decoder: RowDecoder): number {
    const rows: [number, string][] = [];
    decoder.eachText(batch, (line, text) => rows.push([line, text]));
    if (rows.length === 0) return 0;
    const seqs = new Map<number, number>();
    for (const [line, seq] of this.stmts.seqs.all(
      row.id,
      (rows[0] as [number, string])[0],
      (rows[rows.length - 1] as [number, string])[0],
    ))
      seqs.set(line, seq);
    for (const [line, text] of rows) {
      const seq = seqs.get(line);
      if (seq === undefined) throw changedError(row.path, `line ${line} is an entry now but was not when indexed`);
      this.stmts.insertFts.run(seq, text);
    }
    return rows.length;
  }
}

function changedError(path: string, why: string): IntegrityError {
  return new IntegrityError(
    `${path} changed since it was indexed (${why}): the full-text index was not built`,
    'run the command again: the index is brought up to date with the memoir first',
  );
}
