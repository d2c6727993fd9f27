import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { fsError } from '../errors.js';
import { describeLocation } from '../memoir/discover.js';
import { readRecords } from '../memoir/reader.js';
import type { MemoirEntry } from '../memoir/schema.js';
import { decideSplit, entryTypeOf } from '../memoir/split-rule.js';
import { openDb, type DB } from './db.js';
import { INDEX_MIGRATIONS } from './index-migrations.js';

export const HASH_WINDOW = 64 * 1024;
export const CHUNK_BYTES = 1 << 20;

export function indexPath(home: string): string {
  return join(home, 'cache', 'index.db');
}

export function openIndex(home: string): MemoirIndex {
  const db = openDb(indexPath(home), INDEX_MIGRATIONS);
  // A cache: a larger page cache makes bulk index builds several times faster.
  db.pragma('cache_size = -16384');
  db.pragma('temp_store = MEMORY');
  return new MemoirIndex(db);
}

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
  player: string | null;
  project: string | null;
  session: string | null;
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

function sha(buf: Buffer): string {
  return createHash('sha256').update(buf).digest('hex');
}

function readRange(fd: number, start: number, end: number): Buffer {
  const b = Buffer.alloc(Math.max(0, end - start));
  let got = 0;
  while (got < b.length) {
    const n = readSync(fd, b, got, b.length - got, start + got);
    if (n <= 0) break;
    got += n;
  }
  return b.subarray(0, got);
}

/** Searchable text of an entry (FTS5). */
export function searchText(e: MemoirEntry): string {
  const parts: string[] = [e.scene_id, e.agent, e.source];
  if (e.narrative_beat) parts.push(e.narrative_beat.replace(/_/g, ' '));
  if (e.agent_proposed) parts.push(e.agent_proposed);
  if (e.player_response?.delta) parts.push(e.player_response.delta);
  if (e.context) parts.push(e.context.task_type);
  if (e.training_label?.preference_pair) for (const p of e.training_label.preference_pair) parts.push(p.text);
  if (typeof e.comment === 'string') parts.push(e.comment);
  if (typeof e.revision_reason === 'string') parts.push(e.revision_reason);
  return parts.join('\n');
}

export function ftsQuery(text: string): string {
  // Each word must match (prefix match on the last one); quotes keep FTS5 syntax out of user text.
  const words = text.split(/\s+/).filter(Boolean).map((w) => `"${w.replace(/"/g, '""')}"`);
  if (words.length === 0) return '""';
  words[words.length - 1] += '*';
  return words.join(' ');
}

export class MemoirIndex {
  readonly db: DB;
  private readonly stmts;

  constructor(db: DB) {
    this.db = db;
    this.stmts = {
      fileByPath: db.prepare<[string], FileRow>('SELECT * FROM files WHERE path = ?'),
      fileById: db.prepare<[number], FileRow>('SELECT * FROM files WHERE id = ?'),
      insertFile: db.prepare('INSERT INTO files (path, dev, ino, player, project, session, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      resetFile: db.prepare(
        'UPDATE files SET dev = ?, ino = ?, indexed_bytes = 0, indexed_lines = 0, head_hash = NULL, tail_start = 0, tail_hash = NULL, updated_at = ? WHERE id = ?',
      ),
      deleteFts: db.prepare('DELETE FROM entries_fts WHERE rowid IN (SELECT seq FROM entries WHERE file_id = ?)'),
      deleteEntries: db.prepare('DELETE FROM entries WHERE file_id = ?'),
      deleteProblems: db.prepare('DELETE FROM problems WHERE file_id = ?'),
      deleteChunks: db.prepare('DELETE FROM chunks WHERE file_id = ?'),
      insertEntry: db.prepare(
        `INSERT INTO entries (file_id, line, offset, length, entry_id, base_id, scene_id, agent, source, entry_type, shareable, split_reason, lenient,
          recorded_at, affinity_delta, response_kind, felt, has_preference, supersedes)
         VALUES (@file_id, @line, @offset, @length, @entry_id, @base_id, @scene_id, @agent, @source, @entry_type, @shareable, @split_reason, @lenient,
          @recorded_at, @affinity_delta, @response_kind, @felt, @has_preference, @supersedes)`,
      ),
      insertFts: db.prepare('INSERT INTO entries_fts (rowid, text) VALUES (?, ?)'),
      insertProblem: db.prepare('INSERT INTO problems (file_id, line, offset, length, kind, message) VALUES (?, ?, ?, ?, ?, ?)'),
      shareableOf: db.prepare<[string], { shareable: number }>('SELECT shareable FROM entries WHERE entry_id = ? ORDER BY seq LIMIT 1'),
      countBase: db.prepare<[number, string], { n: number }>('SELECT count(*) AS n FROM entries WHERE file_id = ? AND base_id = ?'),
      progress: db.prepare('UPDATE files SET indexed_bytes = ?, indexed_lines = ?, head_hash = ?, tail_start = ?, tail_hash = ?, updated_at = ? WHERE id = ?'),
      upsertChunk: db.prepare('INSERT OR REPLACE INTO chunks (file_id, chunk, hash) VALUES (?, ?, ?)'),
      integrity: db.prepare('INSERT INTO integrity_events (path, detected_at, what) VALUES (?, ?, ?)'),
      acknowledge: db.prepare('DELETE FROM integrity_events WHERE path = ?'),
      byEntryId: db.prepare<[string], EntryRow>('SELECT e.*, f.path FROM entries e JOIN files f ON f.id = e.file_id WHERE e.entry_id = ? ORDER BY e.seq'),
    };
  }

  close(): void {
    this.db.close();
  }

  file(path: string): FileRow | undefined {
    return this.stmts.fileByPath.get(path);
  }

  /**
   * Brings the index up to date with each file: reads only the bytes appended since the last
   * run, after checking (head and tail hashes, size, inode) that nothing before them changed.
   */
  update(paths: readonly string[], opts: { now?: () => Date; onProgress?: (bytes: number) => void } = {}): FileUpdate[] {
    const now = opts.now ?? (() => new Date());
    return paths.map((p) => this.updateFile(p, now, opts.onProgress));
  }

  private updateFile(path: string, now: () => Date, onProgress?: (bytes: number) => void): FileUpdate {
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (err) {
      throw fsError(err, 'memoir', path);
    }
    try {
      const st = fstatSync(fd, { bigint: true });
      const size = Number(st.size);
      const dev = String(st.dev);
      const ino = String(st.ino);
      let row = this.file(path);
      let integrity: string | undefined;
      if (!row) {
        const loc = describeLocation(path);
        this.stmts.insertFile.run(path, dev, ino, loc.player ?? null, loc.project ?? null, loc.session ?? null, now().toISOString());
        row = this.file(path) as FileRow;
      } else {
        integrity = this.appendOnlyViolation(fd, row, size, dev, ino);
        if (integrity) {
          const what = integrity;
          this.db.transaction(() => {
            this.stmts.integrity.run(path, now().toISOString(), what);
            this.clearFile(row as FileRow, dev, ino, now);
          })();
          row = this.file(path) as FileRow;
        }
      }
      const res = this.indexFrom(fd, row, size, now, onProgress);
      return { ...res, path, fileId: row.id, ...(integrity ? { integrity } : {}) };
    } finally {
      closeSync(fd);
    }
  }

  /** Why the file is no longer an extension of what was indexed, or undefined. */
  appendOnlyViolation(fd: number, row: FileRow, size: number, dev: string, ino: string): string | undefined {
    if (row.indexed_bytes === 0) return undefined;
    if (row.ino !== ino || row.dev !== dev) return 'the file was replaced (different inode): not an append';
    if (size < row.indexed_bytes) return `the file shrank from ${row.indexed_bytes} to ${size} bytes: not an append`;
    if (row.head_hash !== sha(readRange(fd, 0, Math.min(HASH_WINDOW, row.indexed_bytes)))) return 'bytes near the start of the file changed: not an append';
    if (row.tail_hash !== sha(readRange(fd, row.tail_start, row.indexed_bytes))) return 'bytes near the end of the indexed part changed: not an append';
    return undefined;
  }

  private clearFile(row: FileRow, dev: string, ino: string, now: () => Date): void {
    this.stmts.deleteFts.run(row.id);
    this.stmts.deleteEntries.run(row.id);
    this.stmts.deleteProblems.run(row.id);
    this.stmts.deleteChunks.run(row.id);
    this.stmts.resetFile.run(dev, ino, now().toISOString(), row.id);
  }

  /**
   * Forget everything indexed for these files and index them again from byte 0. This is how a
   * change that was not an append is acknowledged: its integrity events are cleared, and the
   * rebuilt index (and `verify`) take the file as it is now.
   */
  rebuild(paths: readonly string[], opts: { now?: () => Date; onProgress?: (bytes: number) => void } = {}): FileUpdate[] {
    const now = opts.now ?? (() => new Date());
    for (const p of paths) {
      const row = this.file(p);
      this.db.transaction(() => {
        if (row) this.clearFile(row, row.dev, row.ino, now);
        this.stmts.acknowledge.run(p);
      })();
    }
    return this.update(paths, opts);
  }

  private indexFrom(
    fd: number,
    row: FileRow,
    size: number,
    now: () => Date,
    onProgress?: (bytes: number) => void,
  ): Omit<FileUpdate, 'path' | 'fileId' | 'integrity'> {
    const pending = new Map<string, number>();
    const fresh = row.indexed_bytes === 0; // nothing of this file is indexed yet: no earlier twins
    const occurrenceOf = (base: string): number => {
      let n = pending.get(base);
      if (n === undefined) n = fresh ? 0 : (this.stmts.countBase.get(row.id, base)?.n ?? 0);
      n += 1;
      pending.set(base, n);
      return n;
    };
    let newEntries = 0;
    let newProblems = 0;
    const startBytes = row.indexed_bytes;
    let indexedBytes = row.indexed_bytes;
    let indexedLines = row.indexed_lines;
    const BATCH = 5000;
    type Item = { kind: 'entry'; line: number; offset: number; length: number; entry: MemoirEntry; derived: boolean } | { kind: 'problem'; line: number; offset: number; length: number; problem: string; message: string };
    let batch: Item[] = [];
    const flush = this.db.transaction((items: Item[], bytes: number, lines: number) => {
      for (const it of items) {
        if (it.kind === 'problem') {
          this.stmts.insertProblem.run(row.id, it.line, it.offset, it.length, it.problem, it.message);
          continue;
        }
        const e = it.entry;
        const type = entryTypeOf(e);
        let verdict = decideSplit({ ...e, entry_type: type });
        if (verdict.shareable && typeof e.supersedes === 'string') {
          // A revision never widens privacy: it is shareable only if what it replaces is.
          const original = this.stmts.shareableOf.get(e.supersedes);
          if (original && original.shareable === 0) verdict = { shareable: false, reason: 'private_original', lenient: true };
        }
        const info = this.stmts.insertEntry.run({
          file_id: row.id,
          line: it.line,
          offset: it.offset,
          length: it.length,
          entry_id: e.entry_id,
          base_id: it.derived ? e.entry_id.replace(/~\d+$/, '') : null,
          scene_id: e.scene_id,
          agent: e.agent,
          source: e.source,
          entry_type: type,
          shareable: verdict.shareable ? 1 : 0,
          split_reason: verdict.reason,
          lenient: verdict.lenient ? 1 : 0,
          recorded_at: typeof e.recorded_at === 'string' ? new Date(e.recorded_at).toISOString() : null,
          affinity_delta: e.affinity_delta,
          response_kind: e.player_response?.kind ?? null,
          felt: e.player_response?.felt ?? null,
          has_preference: e.training_label?.preference_pair ? 1 : 0,
          supersedes: typeof e.supersedes === 'string' ? e.supersedes : null,
        });
        this.stmts.insertFts.run(info.lastInsertRowid, searchText(e));
      }
      this.recordProgress(fd, row, bytes, lines, now);
    });
    for (const rec of readRecords(row.path, { fromOffset: row.indexed_bytes, fromLine: row.indexed_lines + 1, occurrenceOf })) {
      if (rec.kind === 'torn') break;
      if (rec.kind === 'entry') {
        batch.push({ kind: 'entry', line: rec.line, offset: rec.offset, length: rec.length, entry: rec.entry, derived: rec.derived });
        newEntries++;
      } else {
        batch.push({ kind: 'problem', line: rec.line, offset: rec.offset, length: rec.length, problem: rec.problem, message: rec.message });
        newProblems++;
      }
      indexedBytes = rec.offset + rec.length + 1;
      indexedLines = rec.line;
      if (batch.length >= BATCH) {
        flush(batch, indexedBytes, indexedLines);
        batch = [];
        onProgress?.(indexedBytes);
      }
    }
    // Blank lines after the last entry are consumed too, up to the last newline.
    const lastNl = this.lastNewlineBefore(fd, size, indexedBytes);
    if (lastNl > indexedBytes) indexedBytes = lastNl;
    flush(batch, indexedBytes, indexedLines);
    onProgress?.(indexedBytes);
    return { newEntries, newProblems, bytesRead: indexedBytes - startBytes, tornTailBytes: size - indexedBytes };
  }

  private lastNewlineBefore(fd: number, size: number, from: number): number {
    if (size <= from) return from;
    const tail = readRange(fd, from, size);
    const nl = tail.lastIndexOf(10);
    return nl < 0 ? from : from + nl + 1;
  }

  private recordProgress(fd: number, row: FileRow, bytes: number, lines: number, now: () => Date): void {
    const head = sha(readRange(fd, 0, Math.min(HASH_WINDOW, bytes)));
    const tailStart = Math.max(0, bytes - HASH_WINDOW);
    const tail = sha(readRange(fd, tailStart, bytes));
    // Every indexed byte is covered by a chunk hash, the partial last chunk included (re-hashed as it grows).
    for (let c = Math.floor(row.indexed_bytes / CHUNK_BYTES); c * CHUNK_BYTES < bytes; c++) {
      this.stmts.upsertChunk.run(row.id, c, sha(readRange(fd, c * CHUNK_BYTES, Math.min((c + 1) * CHUNK_BYTES, bytes))));
    }
    this.stmts.progress.run(bytes, lines, head, tailStart, tail, now().toISOString(), row.id);
    row.indexed_bytes = bytes;
    row.indexed_lines = lines;
  }

  /**
   * Re-hashes every byte of `path` the index has seen (chunk by chunk, the partial last one
   * included) and says where the file first differs, or undefined when it is still exactly what
   * was indexed plus appends. `checkpoint` is awaited between chunks (progress, Ctrl-C).
   */
  async checkIndexedBytes(path: string, checkpoint?: (bytesDone: number) => Promise<void>): Promise<{ message: string; offset: number | null } | undefined> {
    const row = this.file(path);
    if (!row || row.indexed_bytes === 0) return undefined;
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (err) {
      throw fsError(err, 'memoir', path);
    }
    try {
      const st = fstatSync(fd, { bigint: true });
      if (String(st.ino) !== row.ino || String(st.dev) !== row.dev) return { message: 'the file was replaced (different inode): not an append', offset: null };
      if (Number(st.size) < row.indexed_bytes) return { message: `the file shrank from ${row.indexed_bytes} to ${st.size} bytes: not an append`, offset: null };
      const buf = Buffer.allocUnsafe(CHUNK_BYTES);
      for (const { chunk, hash } of this.chunks(row.id)) {
        const start = chunk * CHUNK_BYTES;
        const end = Math.min(start + CHUNK_BYTES, row.indexed_bytes);
        if (end <= start) continue;
        const n = readSync(fd, buf, 0, end - start, start);
        if (sha(buf.subarray(0, n)) !== hash) return { message: `bytes ${start}–${end} changed after they were indexed: not an append`, offset: start };
        await checkpoint?.(end);
      }
      return undefined;
    } finally {
      closeSync(fd);
    }
  }

  /** Chunk hashes recorded for a file (verify re-hashes every chunk and compares). */
  chunks(fileId: number): { chunk: number; hash: string }[] {
    return this.db.prepare<[number], { chunk: number; hash: string }>('SELECT chunk, hash FROM chunks WHERE file_id = ? ORDER BY chunk').all(fileId);
  }

  problems(fileIds: readonly number[]): { path: string; line: number; offset: number; length: number; kind: string; message: string }[] {
    if (fileIds.length === 0) return [];
    return this.db
      .prepare(`SELECT f.path, p.line, p.offset, p.length, p.kind, p.message FROM problems p JOIN files f ON f.id = p.file_id WHERE p.file_id IN (${fileIds.map(() => '?').join(',')}) ORDER BY f.path, p.line`)
      .all(...fileIds) as { path: string; line: number; offset: number; length: number; kind: string; message: string }[];
  }

  integrityEvents(paths: readonly string[]): { path: string; detected_at: string; what: string }[] {
    if (paths.length === 0) return [];
    return this.db
      .prepare(`SELECT path, detected_at, what FROM integrity_events WHERE path IN (${paths.map(() => '?').join(',')}) ORDER BY id`)
      .all(...paths) as { path: string; detected_at: string; what: string }[];
  }

  byEntryId(id: string): EntryRow[] {
    return this.stmts.byEntryId.all(id);
  }

  /** Filtered entries in memoir order (file as first indexed, then line), using the indexes. */
  query(f: EntryFilter): EntryRow[] {
    const { where, params } = whereClause(f);
    const limit = f.limit !== undefined ? ` LIMIT ${Math.max(0, Math.floor(f.limit))}` : '';
    return this.db
      .prepare(`SELECT e.*, f.path FROM entries e JOIN files f ON f.id = e.file_id ${where} ORDER BY e.file_id, e.line${limit}`)
      .all(...params) as EntryRow[];
  }

  /** Iterates filtered entries without materialising them all (NDJSON output of big memoirs). */
  iterate(f: EntryFilter): IterableIterator<EntryRow> {
    const { where, params } = whereClause(f);
    const limit = f.limit !== undefined ? ` LIMIT ${Math.max(0, Math.floor(f.limit))}` : '';
    return this.db.prepare(`SELECT e.*, f.path FROM entries e JOIN files f ON f.id = e.file_id ${where} ORDER BY e.file_id, e.line${limit}`).iterate(...params) as IterableIterator<EntryRow>;
  }

  /** Matching entries, counted up to `cap` (counting a million rows is not free). */
  count(f: EntryFilter, cap?: number): number {
    const { where, params } = whereClause(f);
    const sql = cap === undefined ? `SELECT count(*) AS n FROM entries e ${where}` : `SELECT count(*) AS n FROM (SELECT 1 FROM entries e ${where} LIMIT ${Math.floor(cap)})`;
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
    conds.push("e.scene_id >= ? AND e.scene_id < ?");
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
