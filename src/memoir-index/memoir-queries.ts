import type { Statement } from 'better-sqlite3';
import { AGENTS, type Agent } from '../memoir/format/agents.js';
import { whereClause, type EntryFilter, type EntryRow, type MemoirIndex } from './memoir-index.js';

/**
 * Read queries over the memoir index for the reporting commands (stats, show and supersede's id
 * lookup, whisper's shareable counts, episodes' grouping, doctor's health check). Statements are
 * prepared once per index and take their list of files as one JSON array parameter, so the SQL
 * text never depends on how many memoirs are read.
 */
const IN_FILES = 'file_id IN (SELECT value FROM json_each(?))';
const SESSION = "substr(scene_id, 1, instr(scene_id || '.', '.') - 1)";
const LATEST = 'NOT EXISTS (SELECT 1 FROM entries r WHERE r.supersedes = e.entry_id)';

export interface MemoirStatsRows {
  entries: number;
  shared: number;
  lenient: number;
  sessions: number;
  invalid: number;
  byAgent: { agent: string; entries: number; shared: number; affinity: number }[];
  bySource: { source: string; entries: number; shared: number }[];
  byType: { entry_type: string; entries: number }[];
  byReason: { reason: string; entries: number }[];
}

export type EpisodeGrouping = 'scene' | 'session';

export class MemoirQueries {
  private readonly s: {
    invalid: Statement<[string], { n: number }>;
    byPrefix: Statement<[string, string, number], EntryRow>;
    totals: Statement<[string], { n: number; shared: number; lenient: number; sessions: number }>;
    byAgent: Statement<[string], MemoirStatsRows['byAgent'][number]>;
    bySource: Statement<[string], MemoirStatsRows['bySource'][number]>;
    byType: Statement<[string], MemoirStatsRows['byType'][number]>;
    byReason: Statement<[string], MemoirStatsRows['byReason'][number]>;
    shareable: Statement<[string], { agent: Agent; n: number }>;
    files: Statement<[], { path: string; indexed_bytes: number }>;
    integrityEvents: Statement<[], { n: number }>;
  };
  /** Statements whose SQL depends on a filter's shape, prepared once per shape. */
  private readonly byShape = new Map<string, Statement>();

  constructor(private readonly index: MemoirIndex) {
    const db = index.db;
    this.s = {
      invalid: db.prepare(`SELECT count(*) AS n FROM problems WHERE ${IN_FILES}`),
      byPrefix: db.prepare(
        'SELECT e.*, f.path FROM entries e JOIN files f ON f.id = e.file_id WHERE e.entry_id >= ? AND e.entry_id < ? ORDER BY e.seq LIMIT ?',
      ),
      totals: db.prepare(
        `SELECT count(*) AS n, coalesce(sum(shareable), 0) AS shared, coalesce(sum(lenient), 0) AS lenient, count(DISTINCT ${SESSION}) AS sessions FROM entries WHERE ${IN_FILES}`,
      ),
      byAgent: db.prepare(
        `SELECT agent, count(*) AS entries, sum(shareable) AS shared, sum(affinity_delta) AS affinity FROM entries WHERE ${IN_FILES} GROUP BY agent ORDER BY entries DESC, agent`,
      ),
      bySource: db.prepare(
        `SELECT source, count(*) AS entries, sum(shareable) AS shared FROM entries WHERE ${IN_FILES} GROUP BY source ORDER BY entries DESC, source`,
      ),
      byType: db.prepare(
        `SELECT entry_type, count(*) AS entries FROM entries WHERE ${IN_FILES} GROUP BY entry_type ORDER BY entries DESC`,
      ),
      byReason: db.prepare(
        `SELECT split_reason AS reason, count(*) AS entries FROM entries WHERE ${IN_FILES} GROUP BY split_reason ORDER BY entries DESC`,
      ),
      shareable: db.prepare(
        `SELECT e.agent AS agent, count(*) AS n FROM entries e WHERE e.${IN_FILES} AND e.shareable = 1 AND ${LATEST} GROUP BY e.agent`,
      ),
      files: db.prepare('SELECT path, indexed_bytes FROM files'),
      integrityEvents: db.prepare('SELECT count(*) AS n FROM integrity_events'),
    };
  }

  /** Lines of these files that are not valid entries. */
  invalidLines(fileIds: readonly number[]): number {
    return this.s.invalid.get(JSON.stringify(fileIds))?.n ?? 0;
  }

  /** Entries whose id starts with `prefix`, in memoir order (at most `limit`). */
  byIdPrefix(prefix: string, limit: number): EntryRow[] {
    return this.s.byPrefix.all(prefix, `${prefix}\uffff`, limit);
  }

  /** What `memoir stats` counts: every line of these files (revisions included). */
  stats(fileIds: readonly number[]): MemoirStatsRows {
    const files = JSON.stringify(fileIds);
    const t = this.s.totals.get(files) ?? { n: 0, shared: 0, lenient: 0, sessions: 0 };
    return {
      entries: t.n,
      shared: t.shared,
      lenient: t.lenient,
      sessions: t.sessions,
      invalid: this.invalidLines(fileIds),
      byAgent: this.s.byAgent.all(files),
      bySource: this.s.bySource.all(files),
      byType: this.s.byType.all(files),
      byReason: this.s.byReason.all(files),
    };
  }

  /** Shareable entries per agent (newest revisions only, by the strict split rule); 0 for agents with none. */
  shareableByAgent(fileIds: readonly number[]): Record<Agent, number> {
    const out = Object.fromEntries(AGENTS.map((a) => [a, 0])) as Record<Agent, number>;
    for (const r of this.s.shareable.all(JSON.stringify(fileIds))) out[r.agent] = r.n;
    return out;
  }

  /** Entries matching a filter, ordered so that each scene (or session) is contiguous, then by line. */
  groupedRows(filter: EntryFilter, by: EpisodeGrouping): IterableIterator<EntryRow> {
    const { where, params } = whereClause(filter);
    const key = by === 'scene' ? 'e.scene_id' : "substr(e.scene_id, 1, instr(e.scene_id || '.', '.') - 1)";
    return this.shaped(
      `SELECT e.*, f.path FROM entries e JOIN files f ON f.id = e.file_id ${where} ORDER BY ${key}, e.seq`,
    ).iterate(...params) as IterableIterator<EntryRow>;
  }

  /** Every indexed file and how far it was read. */
  indexedFiles(): { path: string; indexed_bytes: number }[] {
    return this.s.files.all();
  }

  /** Non-append changes ever recorded. */
  integrityEventCount(): number {
    return this.s.integrityEvents.get()?.n ?? 0;
  }

  private shaped(sql: string): Statement {
    let st = this.byShape.get(sql);
    if (!st) {
      st = this.index.db.prepare(sql);
      this.byShape.set(sql, st);
    }
    return st;
  }
}
