import { openForReading } from '../memoir/file/reader.js';
import { closeSync, fstatSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { openDb, type DB } from '../store/db.js';
import { filesWithoutFullText, FullTextBuild } from './fts-build.js';
import { CHUNK_BYTES, IndexBuild, sha, type BuildOptions, type FileRow, type FileUpdate } from './index-build.js';
import {
  guardDb,
  IndexDamagedError,
  isDamage,
  isPermission,
  memoryDb,
  moveAside,
  openIndexDb,
  unwritable,
  writeFailure,
  type IndexSource,
} from './index-file.js';
import { INDEX_MIGRATIONS } from './index-migrations.js';
import { claimFirstBuild, discard, publish, stageIndex, type BuildLock, type Staging } from './index-staging.js';

export { CHUNK_BYTES, HASH_WINDOW, searchText, type FileRow, type FileUpdate } from './index-build.js';

/** What a failed write leaves (see writeFailure): each writer rolls back what it had not committed. */
const INDEXED_KEPT = 'what was indexed so far is kept';
/** A first build fails in its private file, which is discarded: there is no index yet. */
const NONE_KEPT = 'no index was kept (the next run builds it again)';
const FULL_TEXT_NOT_BUILT = 'the full-text index was not built (nothing half-written)';

export function indexPath(home: string): string {
  return join(home, 'cache', 'index.db');
}

/**
 * Opens the memoir index of a home: the file (a damaged one is moved aside and rebuilt), the
 * file read-only, or an index in memory when the home cannot be written (see index-file.ts).
 * What happened is in `notes`, for the caller to show. With `firstBuild` (from claimFirstBuild,
 * see openIndexForBuild), the index is built in a private file, published by the first `build`
 * (index-staging.ts).
 */
export function openIndex(home: string, opts: { now?: () => Date; firstBuild?: BuildLock } = {}): MemoirIndex {
  const now = opts.now ?? (() => new Date());
  const path = indexPath(home);
  const staging = opts.firstBuild ? stageIndex(path, opts.firstBuild) : undefined;
  if (staging) {
    try {
      return new MemoirIndex(openDb(staging.tmp, INDEX_MIGRATIONS, { private: true }), { path, now, staging });
    } catch {
      discard(staging); // e.g. a full disk: the usual open below says what is wrong
    }
  }
  const opened = openIndexDb(path, now);
  return new MemoirIndex(opened.db, {
    path,
    source: opened.source,
    notes: opened.notes,
    now,
    ...(opened.cleanup ? { cleanup: opened.cleanup } : {}),
  });
}

/**
 * `openIndex` for a command about to bring the index up to date: a home without an index gets
 * it built in a private file; if another process is building it right now, this waits for it
 * (`onWait` names it; `signal` cancels the wait) and opens the index it published.
 */
export async function openIndexForBuild(
  home: string,
  opts: { now?: () => Date; signal?: AbortSignal; onWait?: (holder: string) => void } = {},
): Promise<MemoirIndex> {
  const path = indexPath(home);
  const firstBuild = unwritable(path) ? undefined : await claimFirstBuild(path, opts);
  return openIndex(home, { ...(opts.now ? { now: opts.now } : {}), ...(firstBuild ? { firstBuild } : {}) });
}

function tune(db: DB): void {
  // A cache: a larger page cache makes bulk builds faster; sorts for index builds stay in memory.
  db.pragma('cache_size = -65536');
  db.pragma('temp_store = MEMORY');
}

export interface EntryRow {
  seq: number;
  file_id: number;
  path: string;
  line: number;
  offset: number;
  length: number;
  entry_id: string;
  scene_id: string;
  agent: string;
  source: string;
  entry_type: string;
  shareable: number;
  split_reason: string;
  lenient: number;
  recorded_at: string | null;
  affinity_delta: number;
  response_kind: string | null;
  felt: string | null;
  has_preference: number;
  supersedes: string | null;
}

export interface EntryFilter {
  files?: readonly number[];
  agents?: readonly string[];
  sources?: readonly string[];
  types?: readonly string[];
  split?: 'shared' | 'private';
  scenePrefix?: string;
  since?: string;
  until?: string;
  text?: string;
  limit?: number;
  /** Only the newest revision of each chain (default); false lists every line. */
  latestOnly?: boolean;
}

export function ftsQuery(text: string): string {
  // Each word must match (prefix match on the last one); quotes keep FTS5 syntax out of user text.
  const words = text
    .split(/\s+/)
    .filter(Boolean)
    .map((w) => `"${w.replace(/"/g, '""')}"`);
  if (words.length === 0) return '""';
  words[words.length - 1] += '*';
  return words.join(' ');
}

export class MemoirIndex {
  private current: DB;
  private guarded: DB | undefined;
  private readonly stmts;
  /** Where this index lives: its file, the file read-only, or memory. */
  source: IndexSource;
  /** What the caller should tell the operator (a damaged index moved aside, a read-only home). */
  readonly notes: string[];
  private readonly path: string | undefined;
  private readonly now: () => Date;
  private readonly cleanup: (() => void) | undefined;
  /** Every file's full-text rows were seen built since the last index update (saves a query per text query). */
  private fullTextReady = false;
  /** Set while this index is a private file not yet published as `path` (index-staging.ts). */
  private staging: Staging | undefined;

  constructor(
    db: DB,
    opts: {
      path?: string;
      source?: IndexSource;
      notes?: string[];
      now?: () => Date;
      cleanup?: () => void;
      staging?: Staging;
    } = {},
  ) {
    this.current = db;
    this.staging = opts.staging;
    this.source = opts.source ?? 'file';
    this.notes = opts.notes ?? [];
    this.path = opts.path;
    this.now = opts.now ?? (() => new Date());
    this.cleanup = opts.cleanup;
    tune(db);
    this.stmts = this.prepare();
  }

  /** The connection for queries (corruption is caught and handled, see guardDb). */
  get db(): DB {
    this.guarded ??= guardDb(this.current, (err) => this.damagedWhileReading(err));
    return this.guarded;
  }

  private damagedWhileReading(err: unknown): Error {
    if (this.source !== 'file' || !this.path) return err instanceof Error ? err : new Error(String(err));
    const aside = moveAside(this.path, this.now());
    return new IndexDamagedError(
      `the memoir index ${this.path} is damaged (${(err as Error).message}): it was moved aside to ${aside}: run the command again to rebuild it from the memoirs`,
      'the index is a cache: nothing in the memoirs was affected',
    );
  }

  private prepare() {
    const db = this.db;
    return {
      fileByPath: db.prepare<[string], FileRow>('SELECT * FROM files WHERE path = ?'),
      fileById: db.prepare<[number], FileRow>('SELECT * FROM files WHERE id = ?'),
      byEntryId: db.prepare<[string], EntryRow>(
        'SELECT e.*, f.path FROM entries e JOIN files f ON f.id = e.file_id WHERE e.entry_id = ? ORDER BY e.seq',
      ),
      acknowledge: db.prepare('DELETE FROM integrity_events WHERE path = ?'),
      chunks: db.prepare<[number], { chunk: number; hash: string }>(
        'SELECT chunk, hash FROM chunks WHERE file_id = ? ORDER BY chunk',
      ),
    };
  }

  close(): void {
    this.current.close();
    if (this.staging) discard(this.staging); // never published: cancelled or failed
    this.cleanup?.();
  }

  /**
   * A staged index, built: published as the index file and reopened there. Returns false when
   * another process published one first; this index is then theirs, still to be brought up to date.
   */
  private publish(): boolean {
    const staging = this.staging as Staging;
    this.current.pragma('journal_mode = WAL'); // what every other open expects
    this.current.close();
    try {
      return publish(staging);
    } finally {
      this.unstage(staging);
    }
  }

  /** Leaves the (closed) private file, published or not: the index is the index file again, opened as usual. */
  private unstage(staging: Staging): void {
    this.staging = undefined;
    let opened;
    try {
      opened = openIndexDb(staging.final, this.now); // before the lock goes: a waiting builder finds it
    } finally {
      discard(staging);
    }
    this.notes.push(...opened.notes);
    this.swap(opened.db, opened.source, true);
  }

  file(path: string): FileRow | undefined {
    return this.stmts.fileByPath.get(path);
  }

  /**
   * Brings the index up to date with each file: reads only the bytes appended since the last
   * run, after checking (head and tail hashes, size, inode) that nothing before them changed.
   */
  update(
    paths: readonly string[],
    opts: { now?: () => Date; onProgress?: (bytes: number) => void } = {},
  ): FileUpdate[] {
    this.fullTextReady = false;
    return this.withRecovery(paths, () => new IndexBuild(this.current, paths, this.buildOptions(opts, false)).runAll());
  }

  /**
   * Forget everything indexed for these files and index them again from byte 0. This is how a
   * change that was not an append is acknowledged: its integrity events are cleared, and the
   * rebuilt index (and `verify`) take the file as it is now.
   */
  rebuild(
    paths: readonly string[],
    opts: { now?: () => Date; onProgress?: (bytes: number) => void } = {},
  ): FileUpdate[] {
    this.fullTextReady = false;
    return this.withRecovery(paths, () => {
      const results = new IndexBuild(this.current, paths, this.buildOptions(opts, true)).runAll();
      this.acknowledge(paths);
      return results;
    });
  }

  /**
   * `update` (or `rebuild`) that stops at `checkpoint`: awaited after every batch, it yields to
   * the event loop and throws to cancel (Ctrl-C), leaving the index consistent.
   */
  async build(
    paths: readonly string[],
    opts: {
      now?: () => Date;
      onProgress?: (bytes: number) => void;
      rebuild?: boolean;
      checkpoint?: (bytesDone: number) => Promise<void>;
    } = {},
  ): Promise<FileUpdate[]> {
    this.fullTextReady = false;
    for (let attempt = 0; ; attempt++) {
      const build = new IndexBuild(this.current, paths, {
        ...this.buildOptions(opts, opts.rebuild ?? false),
        parallel: true,
      });
      try {
        for (const step of build.steps()) {
          if (typeof step === 'number') await opts.checkpoint?.(step);
          else await step; // the worker's next batch
        }
        if (opts.rebuild) this.acknowledge(paths);
        if (this.staging && !this.publish()) return this.build(paths, opts);
        return build.results;
      } catch (err) {
        if (attempt > 0 || !this.recover(err)) throw this.failedWrite(err, this.staging ? NONE_KEPT : INDEXED_KEPT);
      }
    }
  }

  /**
   * Index files (of `fileIds`; all when undefined) whose full-text rows a bulk load left to build
   * (fts-build.ts), with the bytes each build reads.
   */
  withoutFullText(fileIds?: readonly number[]): { fileId: number; path: string; bytes: number }[] {
    return filesWithoutFullText(this.current, fileIds).map((r) => ({
      fileId: r.id,
      path: r.path,
      bytes: r.indexed_bytes,
    }));
  }

  /**
   * Builds the full-text rows of these files where a bulk load left them out, reading the memoirs
   * again (in a worker thread for big files). `checkpoint` is awaited between batches and may
   * throw to cancel: the file being built is rolled back whole (no rows, still marked unbuilt).
   */
  async buildFullText(
    fileIds?: readonly number[],
    opts: { checkpoint?: (bytesDone: number) => Promise<void> } = {},
  ): Promise<void> {
    const build = new FullTextBuild(this.current, filesWithoutFullText(this.current, fileIds), { parallel: true });
    try {
      for (const step of build.steps()) {
        if (typeof step === 'number') await opts.checkpoint?.(step);
        else await step;
      }
    } catch (err) {
      throw this.failedWrite(err, FULL_TEXT_NOT_BUILT);
    }
  }

  /**
   * Every text query goes through this first: files whose full-text rows are not built yet get
   * them now, synchronously (commands that search call `buildFullText` before, with progress).
   */
  requireFullText(fileIds?: readonly number[]): void {
    if (this.fullTextReady) return;
    const missing = filesWithoutFullText(this.current, fileIds);
    try {
      if (missing.length > 0) new FullTextBuild(this.current, missing).runAll();
    } catch (err) {
      throw this.failedWrite(err, FULL_TEXT_NOT_BUILT);
    }
    if (fileIds === undefined || filesWithoutFullText(this.current).length === 0) this.fullTextReady = true;
  }

  private buildOptions(
    opts: { now?: () => Date; onProgress?: (bytes: number) => void },
    rebuild: boolean,
  ): BuildOptions {
    return { now: opts.now ?? this.now, rebuild, ...(opts.onProgress ? { onProgress: opts.onProgress } : {}) };
  }

  private acknowledge(paths: readonly string[]): void {
    if (this.source === 'memory') return;
    this.current.transaction(() => {
      for (const p of paths) this.stmts.acknowledge.run(p);
    })();
  }

  private withRecovery(paths: readonly string[], work: () => FileUpdate[]): FileUpdate[] {
    try {
      return work();
    } catch (err) {
      if (!this.recover(err)) throw this.failedWrite(err, INDEXED_KEPT);
      try {
        return work();
      } catch (again) {
        throw this.failedWrite(again, INDEXED_KEPT);
      }
    }
  }

  /** A write that failed for a reason outside kourai (lock, full disk, read-only) as a one-line error; anything else as it is. */
  private failedWrite(err: unknown, after: string): unknown {
    return writeFailure(err, this.path ?? 'in memory', after) ?? err;
  }

  /**
   * After a failed write: a damaged file is moved aside and started afresh; a file that turned out
   * not to be writable is replaced by an index in memory. Returns false when the error is neither.
   */
  private recover(err: unknown): boolean {
    if (this.staging && (isPermission(err) || isDamage(err))) {
      // The private file failed: build in place, as without staging.
      this.current.close();
      this.unstage(this.staging);
      return true;
    }
    if (this.source === 'file' && isPermission(err)) {
      this.swap(memoryDb(), 'memory');
      this.notes.push(
        `the memoir index ${this.path ?? ''} cannot be written (${(err as Error).message}): using an index in memory for this run`,
      );
      return true;
    }
    if (this.source === 'file' && this.path && isDamage(err)) {
      this.current.close();
      const aside = moveAside(this.path, this.now());
      this.swap(openIndexDb(this.path, this.now).db, 'file', true);
      this.notes.push(
        `the memoir index ${this.path} was damaged (${(err as Error).message}); it was moved aside to ${aside} and is rebuilt from the memoirs`,
      );
      return true;
    }
    return false;
  }

  private swap(db: DB, source: IndexSource, closed = false): void {
    if (!closed) this.current.close(); // `closed`: the caller closed it already (a damaged or staged file)
    this.current = db;
    this.guarded = undefined;
    this.fullTextReady = false;
    this.source = source;
    tune(db);
    Object.assign(this.stmts, this.prepare());
  }

  /**
   * Re-hashes every byte of `path` the index has seen (chunk by chunk, the partial last one
   * included) and says where the file first differs, or undefined when it is still exactly what
   * was indexed plus appends. `checkpoint` is awaited between chunks (progress, Ctrl-C).
   */
  async checkIndexedBytes(
    path: string,
    checkpoint?: (bytesDone: number) => Promise<void>,
  ): Promise<{ message: string; offset: number | null } | undefined> {
    const row = this.file(path);
    if (!row || row.indexed_bytes === 0) return undefined;
    const fd = openForReading(path);
    try {
      const st = fstatSync(fd, { bigint: true });
      if (String(st.ino) !== row.ino || String(st.dev) !== row.dev)
        return { message: 'the file was replaced (different inode): not an append', offset: null };
      if (Number(st.size) < row.indexed_bytes)
        return {
          message: `the file shrank from ${row.indexed_bytes} to ${st.size} bytes: not an append`,
          offset: null,
        };
      const buf = Buffer.allocUnsafe(CHUNK_BYTES);
      for (const { chunk, hash } of this.chunks(row.id)) {
        const start = chunk * CHUNK_BYTES;
        const end = Math.min(start + CHUNK_BYTES, row.indexed_bytes);
        if (end <= start) continue;
        const n = readSync(fd, buf, 0, end - start, start);
        if (sha(buf.subarray(0, n)) !== hash)
          return { message: `bytes ${start}–${end} changed after they were indexed: not an append`, offset: start };
        await checkpoint?.(end);
      }
      return undefined;
    } finally {
      closeSync(fd);
    }
  }

  /** Chunk hashes recorded for a file (verify re-hashes every chunk and compares). */
  chunks(fileId: number): { chunk: number; hash: string }[] {
    return this.stmts.chunks.all(fileId);
  }

  problems(
    fileIds: readonly number[],
  ): { path: string; line: number; offset: number; length: number; kind: string; message: string }[] {
    if (fileIds.length === 0) return [];
    return this.db
      .prepare(
        `SELECT f.path, p.line, p.offset, p.length, p.kind, p.message FROM problems p JOIN files f ON f.id = p.file_id WHERE p.file_id IN (${fileIds.map(() => '?').join(',')}) ORDER BY f.path, p.line`,
      )
      .all(...fileIds) as {
      path: string;
      line: number;
      offset: number;
      length: number;
      kind: string;
      message: string;
    }[];
  }

  integrityEvents(paths: readonly string[]): { path: string; detected_at: string; what: string }[] {
    if (paths.length === 0) return [];
    return this.db
      .prepare(
        `SELECT path, detected_at, what FROM integrity_events WHERE path IN (${paths.map(() => '?').join(',')}) ORDER BY id`,
      )
      .all(...paths) as { path: string; detected_at: string; what: string }[];
  }

  byEntryId(id: string): EntryRow[] {
    return this.stmts.byEntryId.all(id);
  }

  /** Filtered entries in memoir order (file as first indexed, then line), using the indexes. */
  query(f: EntryFilter): EntryRow[] {
    if (f.text) this.requireFullText(f.files);
    const { where, params } = whereClause(f);
    const limit = f.limit !== undefined ? ` LIMIT ${Math.max(0, Math.floor(f.limit))}` : '';
    return this.db
      .prepare(
        `SELECT e.*, f.path FROM entries e JOIN files f ON f.id = e.file_id ${where} ORDER BY e.file_id, e.line${limit}`,
      )
      .all(...params) as EntryRow[];
  }

  /** Iterates filtered entries without materialising them all (NDJSON output of big memoirs). */
  iterate(f: EntryFilter): IterableIterator<EntryRow> {
    if (f.text) this.requireFullText(f.files);
    const { where, params } = whereClause(f);
    const limit = f.limit !== undefined ? ` LIMIT ${Math.max(0, Math.floor(f.limit))}` : '';
    return this.db
      .prepare(
        `SELECT e.*, f.path FROM entries e JOIN files f ON f.id = e.file_id ${where} ORDER BY e.file_id, e.line${limit}`,
      )
      .iterate(...params) as IterableIterator<EntryRow>;
  }

  /** Matching entries, counted up to `cap` (counting a million rows is not free). */
  count(f: EntryFilter, cap?: number): number {
    if (f.text) this.requireFullText(f.files);
    const { where, params } = whereClause(f);
    const sql =
      cap === undefined
        ? `SELECT count(*) AS n FROM entries e ${where}`
        : `SELECT count(*) AS n FROM (SELECT 1 FROM entries e ${where} LIMIT ${Math.floor(cap)})`;
    return (this.db.prepare(sql).get(...params) as { n: number }).n;
  }
}

export function whereClause(f: EntryFilter): { where: string; params: unknown[] } {
  const conds: string[] = [];
  const params: unknown[] = [];
  const inList = (col: string, values: readonly (string | number)[] | undefined): void => {
    if (!values || values.length === 0) return;
    conds.push(`${col} IN (${values.map(() => '?').join(',')})`);
    params.push(...values);
  };
  inList('e.file_id', f.files);
  inList('e.agent', f.agents);
  inList('e.source', f.sources);
  inList('e.entry_type', f.types);
  if (f.split) conds.push(`e.shareable = ${f.split === 'shared' ? 1 : 0}`);
  if (f.scenePrefix) {
    conds.push('e.scene_id >= ? AND e.scene_id < ?');
    params.push(f.scenePrefix, `${f.scenePrefix}\uffff`);
  }
  if (f.since) {
    conds.push('e.recorded_at >= ?');
    params.push(f.since);
  }
  if (f.until) {
    conds.push('e.recorded_at < ?');
    params.push(f.until);
  }
  if (f.text) {
    conds.push('e.seq IN (SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?)');
    params.push(ftsQuery(f.text));
  }
  if (f.latestOnly) {
    conds.push('NOT EXISTS (SELECT 1 FROM entries r WHERE r.supersedes = e.entry_id)');
  }
  return { where: conds.length ? `WHERE ${conds.join(' AND ')}` : '', params };
}
