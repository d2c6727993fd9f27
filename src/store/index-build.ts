import { openForReading } from '../memoir/reader.js';
import { createHash } from 'node:crypto';
import { closeSync, fstatSync, readSync } from 'node:fs';
import { describeLocation } from '../memoir/discover.js';
import { IdSet } from '../memoir/id-set.js';
import { readRecordsFd } from '../memoir/reader.js';
import type { MemoirEntry } from '../memoir/schema.js';
import { entryTypeOf, entryVerdict } from '../memoir/split-rule.js';
import type { DB } from './db.js';
import { BULK_INDEXES } from './index-migrations.js';

/**
 * Bringing the index up to date with memoir files: only the bytes appended since the last run
 * are read, after checking (inode, size, head and tail hashes) that nothing before them changed;
 * a file that changed otherwise is recorded as an integrity event and indexed again.
 *
 * Speed: rows are inserted with positional statements in batches of 10,000. A large load (more
 * new bytes than are already indexed, at least 8 MiB) is one transaction that drops the secondary
 * indexes first and builds each once at the end (sorting once instead of updating eight B-trees
 * row by row); revisions of private entries are narrowed after that, in file order.
 *
 * The work runs in steps (a generator): each yield is a consistent point. Cancelled there, an
 * incremental run keeps the batches committed so far (the progress row is part of each batch's
 * transaction); a bulk load is rolled back whole.
 */
export const HASH_WINDOW = 64 * 1024;
export const CHUNK_BYTES = 1 << 20;
const BATCH = 10_000;
const BULK_MIN_BYTES = 8 << 20;

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

export interface BuildOptions {
  now: () => Date;
  rebuild?: boolean;
  /** Bytes of the current file indexed so far. */
  onProgress?: (bytes: number) => void;
}

export function sha(buf: Uint8Array): string {
  return createHash('sha256').update(buf).digest('hex');
}

export function readRange(fd: number, start: number, end: number): Buffer {
  const b = Buffer.allocUnsafe(Math.max(0, end - start));
  let got = 0;
  while (got < b.length) {
    const n = readSync(fd, b, got, b.length - got, start + got);
    if (n <= 0) break;
    got += n;
  }
  return b.subarray(0, got);
}

/** Why the file is no longer an extension of what was indexed, or undefined. */
export function appendOnlyViolation(fd: number, row: FileRow, size: number, dev: string, ino: string): string | undefined {
  if (row.indexed_bytes === 0) return undefined;
  if (row.ino !== ino || row.dev !== dev) return 'the file was replaced (different inode): not an append';
  if (size < row.indexed_bytes) return `the file shrank from ${row.indexed_bytes} to ${size} bytes: not an append`;
  if (row.head_hash !== sha(readRange(fd, 0, Math.min(HASH_WINDOW, row.indexed_bytes)))) return 'bytes near the start of the file changed: not an append';
  if (row.tail_hash !== sha(readRange(fd, row.tail_start, row.indexed_bytes))) return 'bytes near the end of the indexed part changed: not an append';
  return undefined;
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

const ISO_UTC = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

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
      insertFile: db.prepare('INSERT INTO files (path, dev, ino, player, project, session, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)'),
      resetFile: db.prepare('UPDATE files SET dev = ?, ino = ?, indexed_bytes = 0, indexed_lines = 0, head_hash = NULL, tail_start = 0, tail_hash = NULL, updated_at = ? WHERE id = ?'),
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
      insertProblem: db.prepare('INSERT INTO problems (file_id, line, offset, length, kind, message) VALUES (?, ?, ?, ?, ?, ?)'),
      shareableOf: db.prepare<[string], { shareable: number }>('SELECT shareable FROM entries WHERE entry_id = ? ORDER BY seq LIMIT 1'),
      narrow: db.prepare(
        `UPDATE entries SET shareable = 0, split_reason = 'private_original', lenient = 1
         WHERE seq = ? AND (SELECT o.shareable FROM entries o WHERE o.entry_id = ? AND o.seq < ? ORDER BY o.seq LIMIT 1) = 0`,
      ),
      countBase: db.prepare<[number, string], { n: number }>('SELECT count(*) AS n FROM entries WHERE file_id = ? AND base_id = ?'),
      progress: db.prepare('UPDATE files SET indexed_bytes = ?, indexed_lines = ?, head_hash = ?, tail_start = ?, tail_hash = ?, updated_at = ? WHERE id = ?'),
      upsertChunk: db.prepare('INSERT OR REPLACE INTO chunks (file_id, chunk, hash) VALUES (?, ?, ?)'),
      integrity: db.prepare('INSERT INTO integrity_events (path, detected_at, what) VALUES (?, ?, ?)'),
      indexedTotal: db.prepare<[], { n: number }>('SELECT coalesce(sum(indexed_bytes), 0) AS n FROM files'),
    };
  }

  /** Runs to the end without stopping (a synchronous caller). */
  runAll(): FileUpdate[] {
    for (const _ of this.steps()) {
      // every step is consistent; nothing to do between them
    }
    return this.results;
  }

  /** Each yield is a consistent point; the value is the bytes indexed so far in this run. */
  *steps(): Generator<number> {
    const plans: Plan[] = [];
    let committed = false;
    try {
      for (const p of this.paths) plans.push(this.plan(p));
      const newBytes = plans.reduce((s, p) => s + p.size - (p.clear ? 0 : p.row.indexed_bytes), 0);
      const keptBytes = (this.stmts.indexedTotal.get()?.n ?? 0) - plans.reduce((s, p) => s + (p.clear ? p.row.indexed_bytes : 0), 0);
      const bulk = newBytes >= BULK_MIN_BYTES && newBytes >= keptBytes;
      if (bulk) {
        this.db.exec('BEGIN IMMEDIATE');
        this.inBulk = true;
        for (const name of Object.keys(BULK_INDEXES)) this.db.exec(`DROP INDEX IF EXISTS ${name}`);
      }
      this.clearAll(plans.filter((p) => p.clear));
      let done = 0;
      const revisions: [number, string][] = [];
      for (const plan of plans) {
        let fileDone = 0;
        for (const b of this.indexFile(plan, revisions)) {
          fileDone = b;
          yield done + b;
        }
        done += fileDone;
      }
      if (bulk) {
        for (const ddl of Object.values(BULK_INDEXES)) this.db.exec(ddl);
        for (const [seq, target] of revisions) this.stmts.narrow.run(seq, target, seq);
        this.db.exec('COMMIT');
        this.inBulk = false;
      }
      committed = true;
    } finally {
      if (this.inBulk && !committed) {
        this.db.exec('ROLLBACK');
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
          this.stmts.deleteFts.run(p.row.id);
          this.stmts.deleteEntries.run(p.row.id);
        }
      }
      for (const p of plans) {
        this.stmts.deleteProblems.run(p.row.id);
        this.stmts.deleteChunks.run(p.row.id);
        this.stmts.resetFile.run(p.row.dev, p.row.ino, now, p.row.id);
        p.row = { ...p.row, indexed_bytes: 0, indexed_lines: 0, head_hash: null, tail_start: 0, tail_hash: null };
      }
    };
    if (this.inBulk) run();
    else this.db.transaction(run)();
  }

  private *indexFile(plan: Plan, revisions: [number, string][]): Generator<number> {
    const { fd, row, size } = plan;
    const fresh = row.indexed_bytes === 0;
    const startBytes = row.indexed_bytes;
    // Identical Python lines get `~2`, `~3`…: a compact set of the base ids seen, exact counts only for repeats.
    const seenBases = new IdSet();
    const repeats = new Map<string, number>();
    let batch: unknown[][] = [];
    let texts: string[] = [];
    let problems: unknown[][] = [];
    const occurrenceOf = (base: string): number => {
      let n = repeats.get(base);
      if (n === undefined) {
        const first = seenBases.addOrGet(base, 0) === undefined;
        if (first && fresh) n = 0;
        else n = (this.stmts.countBase.get(row.id, base)?.n ?? 0) + batch.filter((r) => r[5] === base).length;
      }
      n += 1;
      if (n > 1) repeats.set(base, n);
      return n;
    };
    let newEntries = 0;
    let newProblems = 0;
    let indexedBytes = row.indexed_bytes;
    let indexedLines = row.indexed_lines;
    const flush = (): void => {
      const write = (): void => {
        for (let i = 0; i < batch.length; i++) {
          const r = batch[i] as unknown[];
          const info = this.stmts.insertEntry.run(r);
          const seq = Number(info.lastInsertRowid);
          this.stmts.insertFts.run(seq, texts[i]);
          const target = r[18] as string | null;
          if (target !== null && r[10] === 1) {
            // A revision never widens privacy: it is shareable only if what it replaces is.
            if (this.inBulk) revisions.push([seq, target]);
            else if (this.stmts.shareableOf.get(target)?.shareable === 0) this.stmts.narrow.run(seq, target, seq);
          }
        }
        for (const p of problems) this.stmts.insertProblem.run(p);
        this.recordProgress(fd, row, indexedBytes, indexedLines);
      };
      if (this.inBulk) write();
      else this.db.transaction(write)();
      batch = [];
      texts = [];
      problems = [];
    };
    for (const rec of readRecordsFd(fd, { fromOffset: row.indexed_bytes, fromLine: row.indexed_lines + 1, untilOffset: size, occurrenceOf })) {
      if (rec.kind === 'torn') break;
      if (rec.kind === 'entry') {
        const e = rec.entry;
        const type = entryTypeOf(e);
        const verdict = entryVerdict(e);
        const t = e.recorded_at;
        batch.push([
          row.id,
          rec.line,
          rec.offset,
          rec.length,
          e.entry_id,
          rec.derived ? e.entry_id.replace(/~\d+$/, '') : null,
          e.scene_id,
          e.agent,
          e.source,
          type,
          verdict.shareable ? 1 : 0,
          verdict.reason,
          verdict.lenient ? 1 : 0,
          typeof t === 'string' ? (ISO_UTC.test(t) ? t : new Date(t).toISOString()) : null,
          e.affinity_delta,
          e.player_response?.kind ?? null,
          e.player_response?.felt ?? null,
          e.training_label?.preference_pair ? 1 : 0,
          typeof e.supersedes === 'string' ? e.supersedes : null,
        ]);
        texts.push(searchText(e));
        newEntries++;
      } else {
        problems.push([row.id, rec.line, rec.offset, rec.length, rec.problem, rec.message]);
        newProblems++;
      }
      indexedBytes = rec.offset + rec.length + 1;
      indexedLines = rec.line;
      if (batch.length + problems.length >= BATCH) {
        flush();
        this.opts.onProgress?.(indexedBytes);
        yield indexedBytes - startBytes;
      }
    }
    // Blank lines after the last entry are consumed too, up to the last newline.
    if (size > indexedBytes) {
      const nl = readRange(fd, indexedBytes, size).lastIndexOf(10);
      if (nl >= 0) indexedBytes += nl + 1;
    }
    flush();
    this.opts.onProgress?.(indexedBytes);
    this.results.push({
      path: plan.path,
      fileId: row.id,
      newEntries,
      newProblems,
      bytesRead: indexedBytes - startBytes,
      tornTailBytes: size - indexedBytes,
      ...(plan.integrity ? { integrity: plan.integrity } : {}),
    });
    yield indexedBytes - startBytes;
  }

  private recordProgress(fd: number, row: FileRow, bytes: number, lines: number): void {
    const head = sha(readRange(fd, 0, Math.min(HASH_WINDOW, bytes)));
    const tailStart = Math.max(0, bytes - HASH_WINDOW);
    const tail = sha(readRange(fd, tailStart, bytes));
    // Every indexed byte is covered by a chunk hash, the partial last chunk included (re-hashed as it grows).
    for (let c = Math.floor(row.indexed_bytes / CHUNK_BYTES); c * CHUNK_BYTES < bytes; c++) {
      this.stmts.upsertChunk.run(row.id, c, sha(readRange(fd, c * CHUNK_BYTES, Math.min((c + 1) * CHUNK_BYTES, bytes))));
    }
    this.stmts.progress.run(bytes, lines, head, tailStart, tail, this.opts.now().toISOString(), row.id);
    row.indexed_bytes = bytes;
    row.indexed_lines = lines;
  }
}
