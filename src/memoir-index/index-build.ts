import { closeSync, fstatSync } from 'node:fs';
import { describeLocation } from '../memoir/file/discover.js';
import { openForReading } from '../memoir/file/reader.js';
import type { DB } from '../store/db.js';
import { BASE_ID_INDEX, BULK_INDEXES } from './index-migrations.js';
import { rowBatches, WorkerRows, workerAvailable } from './index-pipeline.js';
import {
  encodeRows,
  fileHashes,
  HASH_WINDOW,
  readBytes,
  RowDecoder,
  sha,
  type FileHashes,
  type RowBatch,
} from './index-rows.js';

export { CHUNK_BYTES, HASH_WINDOW, searchText, sha } from './index-rows.js';

/**
 * Bringing the index up to date with memoir files: only the bytes appended since the last run
 * are read, after checking (inode, size, head and tail hashes) that nothing before them changed;
 * a file that changed otherwise is recorded as an integrity event and indexed again.
 *
 * Speed: rows are inserted with positional statements in batches of 10,000. A large load (more
 * new bytes than are already indexed, at least 8 MiB) is one transaction that drops the secondary
 * indexes first and builds each once at the end (sorting once instead of updating eight B-trees
 * row by row); revisions of private entries are narrowed after that, in file order. In a large
 * load, a file indexed from byte 0 is parsed in a worker thread while this thread inserts
 * (index-pipeline.ts) when the caller can wait (`parallel`, the async `MemoirIndex.build`).
 *
 * The work runs in steps (a generator): each number yielded is a consistent point; a promise
 * yielded is the worker's next batch, to await before the next step. Cancelled at a consistent
 * point, an incremental run keeps the batches committed so far (the progress row is part of each
 * batch's transaction); a bulk load is rolled back whole.
 */
export const BATCH = 10_000;
const BULK_MIN_BYTES = 8 << 20;
/** A smaller file is parsed on this thread: starting a worker costs more than it saves. */
export const PARALLEL_MIN_BYTES = 4 << 20;

export interface FileRow {
  id: number;
  path: string;
  dev: string;
  ino: string;
  indexed_bytes: number;
  indexed_lines: number;
  head_hash: string | null;
  tail_start: number;
  tail_hash: string | null;
  /** 1: every entry of the file has its full-text row; 0: none has (built lazily, fts-build.ts). */
  fts_complete: number;
  player: string | null;
  project: string | null;
  session: string | null;
}

export interface FileUpdate {
  path: string;
  fileId: number;
  newEntries: number;
  newProblems: number;
  bytesRead: number;
  /** Set when the file changed other than by an append: the index was rebuilt for it. */
  integrity?: string;
  /** Bytes after the last newline: a torn write (see `memoir repair`). */
  tornTailBytes: number;
  /** Parsed in a worker thread while this one inserted (a bulk load of a file from byte 0). */
  parallel?: true;
}

export interface BuildOptions {
  now: () => Date;
  rebuild?: boolean;
  /** The caller awaits the promises `steps()` yields: a bulk load may parse in a worker thread. */
  parallel?: boolean;
  /** Bytes of the current file indexed so far. */
  onProgress?: (bytes: number) => void;
}

/** Why the file is no longer an extension of what was indexed, or undefined. */
export function appendOnlyViolation(
  fd: number,
  row: FileRow,
  size: number,
  dev: string,
  ino: string,
): string | undefined {
  if (row.indexed_bytes === 0) return undefined;
  if (row.ino !== ino || row.dev !== dev) return 'the file was replaced (different inode): not an append';
  if (size < row.indexed_bytes) return `the file shrank from ${row.indexed_bytes} to ${size} bytes: not an append`;
  if (row.head_hash !== sha(readBytes(fd, 0, Math.min(HASH_WINDOW, row.indexed_bytes))))
    return 'bytes near the start of the file changed: not an append';
  if (row.tail_hash !== sha(readBytes(fd, row.tail_start, row.indexed_bytes)))
    return 'bytes near the end of the indexed part changed: not an append';
  return undefined;
}

interface Plan {
  path: string;
  fd: number;
  size: number;
  row: FileRow;
  integrity?: string;
  clear: boolean;
}

export class IndexBuild {
  readonly results: FileUpdate[] = [];
  private readonly stmts;
  private inBulk = false;

  constructor(
    private readonly db: DB,
    private readonly paths: readonly string[],
    private readonly opts: BuildOptions,
  ) {
    this.stmts = {
      fileByPath: db.prepare<[string], FileRow>('SELECT * FROM files WHERE path = ?'),
      insertFile: db.prepare(
        'INSERT INTO files (path, dev, ino, player, project, session, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      resetFile: db.prepare(
        'UPDATE files SET dev = ?, ino = ?, indexed_bytes = 0, indexed_lines = 0, head_hash = NULL, tail_start = 0, tail_hash = NULL, fts_complete = 1, updated_at = ? WHERE id = ?',
      ),
      deferFts: db.prepare('UPDATE files SET fts_complete = 0 WHERE id = ?'),
      deleteFts: db.prepare('DELETE FROM entries_fts WHERE rowid IN (SELECT seq FROM entries WHERE file_id = ?)'),
      deleteEntries: db.prepare('DELETE FROM entries WHERE file_id = ?'),
      deleteProblems: db.prepare('DELETE FROM problems WHERE file_id = ?'),
      deleteChunks: db.prepare('DELETE FROM chunks WHERE file_id = ?'),
      countEntries: db.prepare<[], { n: number }>('SELECT count(*) AS n FROM entries'),
      countFileEntries: db.prepare<[number], { n: number }>('SELECT count(*) AS n FROM entries WHERE file_id = ?'),
      insertEntry: db.prepare(
        `INSERT INTO entries (file_id, line, offset, length, entry_id, base_id, scene_id, agent, source, entry_type, shareable, split_reason, lenient,
          recorded_at, affinity_delta, response_kind, felt, has_preference, supersedes) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)`,
      ),
      insertFts: db.prepare('INSERT INTO entries_fts (rowid, text) VALUES (?, ?)'),
      insertProblem: db.prepare(
        'INSERT INTO problems (file_id, line, offset, length, kind, message) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      shareableOf: db.prepare<[string], { shareable: number }>(
        'SELECT shareable FROM entries WHERE entry_id = ? ORDER BY seq LIMIT 1',
      ),
      narrow: db.prepare(
        `UPDATE entries SET shareable = 0, split_reason = 'private_original', lenient = 1
         WHERE seq = ? AND (SELECT o.shareable FROM entries o WHERE o.entry_id = ? AND o.seq < ? ORDER BY o.seq LIMIT 1) = 0`,
      ),
      countBase: db.prepare<[number, string], { n: number }>(
        'SELECT count(*) AS n FROM entries WHERE file_id = ? AND base_id = ?',
      ),
      progress: db.prepare(
        'UPDATE files SET indexed_bytes = ?, indexed_lines = ?, head_hash = ?, tail_start = ?, tail_hash = ?, updated_at = ? WHERE id = ?',
      ),
      upsertChunk: db.prepare('INSERT OR REPLACE INTO chunks (file_id, chunk, hash) VALUES (?, ?, ?)'),
      integrity: db.prepare('INSERT INTO integrity_events (path, detected_at, what) VALUES (?, ?, ?)'),
      indexedTotal: db.prepare<[], { n: number }>('SELECT coalesce(sum(indexed_bytes), 0) AS n FROM files'),
    };
  }

  /** Runs to the end without stopping (a synchronous caller). */
  runAll(): FileUpdate[] {
    for (const _ of this.steps()) {
      // every step is consistent (and never a promise: not `parallel`); nothing to do between them
    }
    return this.results;
  }

  /** Each yield is a consistent point; the value is the bytes indexed so far in this run. */
  *steps(): Generator<number | Promise<void>> {
    const plans: Plan[] = [];
    let committed = false;
    try {
      for (const p of this.paths) plans.push(this.plan(p));
      const newBytes = plans.reduce((s, p) => s + p.size - (p.clear ? 0 : p.row.indexed_bytes), 0);
      const keptBytes =
        (this.stmts.indexedTotal.get()?.n ?? 0) - plans.reduce((s, p) => s + (p.clear ? p.row.indexed_bytes : 0), 0);
      const bulk = newBytes >= BULK_MIN_BYTES && newBytes >= keptBytes;
      // Every file from byte 0: Python lines are numbered without looking up the index.
      const allFresh = plans.every((p) => p.clear || p.row.indexed_bytes === 0);
      const dropped = bulk ? { ...BULK_INDEXES, ...(allFresh ? BASE_ID_INDEX : {}) } : {};
      if (bulk) {
        this.db.exec('BEGIN IMMEDIATE');
        this.inBulk = true;
        for (const name of Object.keys(dropped)) this.db.exec(`DROP INDEX IF EXISTS ${name}`);
      }
      this.clearAll(plans.filter((p) => p.clear));
      if (bulk) {
        // A file loaded from byte 0 gets no full-text rows now: the first text query builds them (fts-build.ts).
        for (const p of plans) {
          if (p.row.indexed_bytes !== 0) continue;
          this.stmts.deferFts.run(p.row.id);
          p.row.fts_complete = 0;
        }
      }
      let done = 0;
      const revisions: [number, string][] = [];
      for (const plan of plans) {
        let fileDone = 0;
        for (const b of this.indexFile(plan, revisions)) {
          if (typeof b !== 'number') {
            yield b;
            continue;
          }
          fileDone = b;
          yield done + b;
        }
        done += fileDone;
      }
      if (bulk) {
        for (const ddl of Object.values(dropped)) {
          this.db.exec(ddl);
          yield done; // a point to cancel at: at 1M entries each index takes a while to build
        }
        for (const [seq, target] of revisions) this.stmts.narrow.run(seq, target, seq);
        this.db.exec('COMMIT');
        this.inBulk = false;
      }
      committed = true;
    } finally {
      if (this.inBulk && !committed) {
        // SQLite may have rolled back itself (a full disk, an I/O error): the error that did it is the one to report.
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        this.inBulk = false;
      }
      for (const p of plans) closeSync(p.fd);
    }
  }

  /** Opens a file, finds (or creates) its row, and decides whether it must be indexed from 0. */
  private plan(path: string): Plan {
    const fd = openForReading(path);
    try {
      const st = fstatSync(fd, { bigint: true });
      const size = Number(st.size);
      const dev = String(st.dev);
      const ino = String(st.ino);
      const now = this.opts.now().toISOString();
      let row = this.stmts.fileByPath.get(path);
      if (!row) {
        const loc = describeLocation(path);
        this.stmts.insertFile.run(path, dev, ino, loc.player ?? null, loc.project ?? null, loc.session ?? null, now);
        row = this.stmts.fileByPath.get(path) as FileRow;
        return { path, fd, size, row, clear: false };
      }
      if (this.opts.rebuild) return { path, fd, size, row: { ...row, dev, ino }, clear: true };
      const integrity = appendOnlyViolation(fd, row, size, dev, ino);
      if (integrity) {
        this.stmts.integrity.run(path, now, integrity);
        return { path, fd, size, row: { ...row, dev, ino }, integrity, clear: true };
      }
      return { path, fd, size, row, clear: false };
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }

  /** Forgets what was indexed for these files (all at once when they are everything indexed). */
  private clearAll(plans: Plan[]): void {
    if (plans.length === 0) return;
    const now = this.opts.now().toISOString();
    const run = (): void => {
      const total = this.stmts.countEntries.get()?.n ?? 0;
      const mine = plans.reduce((s, p) => s + (this.stmts.countFileEntries.get(p.row.id)?.n ?? 0), 0);
      if (mine === total) {
        this.db.exec("INSERT INTO entries_fts(entries_fts) VALUES ('delete-all')");
        for (const p of plans) this.stmts.deleteEntries.run(p.row.id);
      } else {
        for (const p of plans) {
          if (p.row.fts_complete === 1) this.stmts.deleteFts.run(p.row.id); // else it has none
          this.stmts.deleteEntries.run(p.row.id);
        }
      }
      for (const p of plans) {
        this.stmts.deleteProblems.run(p.row.id);
        this.stmts.deleteChunks.run(p.row.id);
        this.stmts.resetFile.run(p.row.dev, p.row.ino, now, p.row.id);
        p.row = {
          ...p.row,
          indexed_bytes: 0,
          indexed_lines: 0,
          head_hash: null,
          tail_start: 0,
          tail_hash: null,
          fts_complete: 1,
        };
      }
    };
    if (this.inBulk) run();
    else this.db.transaction(run)();
  }

  private *indexFile(plan: Plan, revisions: [number, string][]): Generator<number | Promise<void>> {
    const { fd, row, size } = plan;
    const startBytes = row.indexed_bytes;
    const fresh = startBytes === 0;
    // Without full-text rows to write (a bulk load), the rows need no search text either.
    const fts = row.fts_complete === 1;
    const worker =
      this.inBulk && fresh && this.opts.parallel && size >= PARALLEL_MIN_BYTES && workerAvailable()
        ? new WorkerRows(fd, size, BATCH, { content: fts ? 'all' : 'rows' })
        : undefined;
    const local = worker
      ? undefined
      : encodeRows(fd, {
          fromOffset: row.indexed_bytes,
          fromLine: row.indexed_lines + 1,
          untilOffset: size,
          batchEntries: BATCH,
          priorOccurrences: fresh ? () => 0 : (base) => this.stmts.countBase.get(row.id, base)?.n ?? 0,
          content: fts ? 'all' : 'rows',
        });
    const decoder = new RowDecoder();
    let newEntries = 0;
    let newProblems = 0;
    let endBytes = row.indexed_bytes;
    let endLines = row.indexed_lines;
    let hashes: FileHashes | undefined;
    const write = (batch: RowBatch): void => {
      decoder.each(batch, (r, text) => {
        const seq = Number(this.stmts.insertEntry.run(row.id, ...r).lastInsertRowid);
        if (fts) this.stmts.insertFts.run(seq, text);
        const target = r[17];
        if (target !== null && r[9] === 1) {
          // A revision never widens privacy: it is shareable only if what it replaces is.
          if (this.inBulk) revisions.push([seq, target]);
          else if (this.stmts.shareableOf.get(target)?.shareable === 0) this.stmts.narrow.run(seq, target, seq);
        }
      });
      for (const p of batch.problems) this.stmts.insertProblem.run(row.id, ...p);
      // A bulk load is one transaction: its progress is recorded once, at the end of the file.
      if (!this.inBulk) this.recordProgress(fd, row, batch.endBytes, batch.endLines);
    };
    try {
      const batches = rowBatches(worker, local);
      for (;;) {
        const it = batches.next();
        if (it.done) {
          hashes = it.value ?? undefined;
          break;
        }
        if (it.value instanceof Promise) {
          yield it.value;
          continue;
        }
        const batch = it.value;
        // Nothing new (the last, empty batch of a file already up to date): no write, so that a reading
        // command never needs the write lock another process may hold for a long time (`memoir index`).
        const nothing =
          batch.entries === 0 && batch.problems.length === 0 && batch.endBytes === row.indexed_bytes && !fresh;
        if (this.inBulk) write(batch);
        else if (!nothing) this.db.transaction(write)(batch);
        newEntries += batch.entries;
        newProblems += batch.problems.length;
        endBytes = batch.endBytes;
        endLines = batch.endLines;
        this.opts.onProgress?.(endBytes);
        yield endBytes - startBytes;
      }
    } finally {
      worker?.stop();
    }
    if (this.inBulk) this.recordProgress(fd, row, endBytes, endLines, hashes);
    this.results.push({
      path: plan.path,
      fileId: row.id,
      newEntries,
      newProblems,
      bytesRead: endBytes - startBytes,
      tornTailBytes: size - endBytes,
      ...(plan.integrity ? { integrity: plan.integrity } : {}),
      ...(worker ? { parallel: true as const } : {}),
    });
    yield endBytes - startBytes;
  }

  private recordProgress(fd: number, row: FileRow, bytes: number, lines: number, known?: FileHashes): void {
    // Every indexed byte is covered by a chunk hash, the partial last chunk included (re-hashed as it grows).
    const h = known ?? fileHashes(fd, bytes, row.indexed_bytes);
    h.chunks.forEach((hash, i) => this.stmts.upsertChunk.run(row.id, h.fromChunk + i, hash));
    this.stmts.progress.run(bytes, lines, h.head, h.tailStart, h.tail, this.opts.now().toISOString(), row.id);
    row.indexed_bytes = bytes;
    row.indexed_lines = lines;
  }
}
