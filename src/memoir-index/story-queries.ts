import type { Statement } from 'better-sqlite3';
import { AGENTS, type Agent } from '../memoir/format/agents.js';
import { ftsQuery, type MemoirIndex } from './memoir-index.js';

/**
 * Story-order queries over the memoir index: sessions in the order they began, and keyset pages
 * by (memoir, line) so no query ever reads more rows than it returns (no OFFSET). Superseded
 * entries are left out everywhere (the newest revision of each chain stands for it).
 */

/** A memoir as a session of the story, in the order sessions began. */
export interface SessionInfo {
  /** Position in story order (0-based): the `session` of a BeatRef. */
  rank: number;
  fileId: number;
  path: string;
  session: string;
  player: string | null;
  project: string | null;
  /** Earliest recorded_at in the memoir, or null when none is stamped. */
  startedAt: string | null;
}

/** The columns a story needs to navigate; the entry itself is read from its file on demand. */
export interface StoryRow {
  line: number;
  offset: number;
  length: number;
  entry_id: string;
  scene_id: string;
  agent: Agent;
  shareable: number;
  affinity_delta: number;
}

/** A sum of affinity deltas and the number of changes in it. */
export interface AffinitySum {
  total: number;
  n: number;
}

export interface AffinityRow {
  entry_id: string;
  scene_id: string;
  agent: Agent;
  affinity_delta: number;
  recorded_at: string | null;
}

const COLS = 'e.line, e.offset, e.length, e.entry_id, e.scene_id, e.agent, e.shareable, e.affinity_delta';
const LATEST = 'NOT EXISTS (SELECT 1 FROM entries r WHERE r.supersedes = e.entry_id)';

function agentCond(agents: readonly string[]): string {
  return agents.length ? ` AND e.agent IN (${agents.map(() => '?').join(',')})` : '';
}

export class StoryIndex {
  readonly index: MemoirIndex;
  readonly sessions: readonly SessionInfo[];
  private readonly stmts = new Map<string, Statement>();

  constructor(index: MemoirIndex, fileIds: readonly number[]) {
    this.index = index;
    this.sessions = orderSessions(index, fileIds);
  }

  private stmt(sql: string): Statement {
    let s = this.stmts.get(sql);
    if (!s) {
      s = this.index.db.prepare(sql);
      this.stmts.set(sql, s);
    }
    return s;
  }

  private fileId(session: number): number {
    const s = this.sessions[session];
    if (!s) throw new RangeError(`no session ${session}`);
    return s.fileId;
  }

  /** Up to `limit` rows after (dir 1) or before (dir -1) `line` in one session, nearest first. */
  rows(session: number, line: number, dir: 1 | -1, agents: readonly string[], limit: number): StoryRow[] {
    const sql = `SELECT ${COLS} FROM entries e WHERE e.file_id = ? AND e.line ${dir === 1 ? '>' : '<'} ?${agentCond(agents)} AND ${LATEST}
      ORDER BY e.line ${dir === 1 ? 'ASC' : 'DESC'} LIMIT ?`;
    return this.stmt(sql).all(this.fileId(session), line, ...agents, limit) as StoryRow[];
  }

  /** The row at a line (superseded rows included: callers check `superseded`). */
  rowAt(session: number, line: number): (StoryRow & { superseded: number }) | undefined {
    const sql = `SELECT ${COLS}, NOT ${LATEST} AS superseded FROM entries e WHERE e.file_id = ? AND e.line = ?`;
    return this.stmt(sql).get(this.fileId(session), line) as (StoryRow & { superseded: number }) | undefined;
  }

  /** The nearest row after/before `line` in the session whose scene differs from `sceneId`. */
  otherScene(
    session: number,
    line: number,
    sceneId: string,
    dir: 1 | -1,
    agents: readonly string[],
  ): StoryRow | undefined {
    const sql = `SELECT ${COLS} FROM entries e WHERE e.file_id = ? AND e.line ${dir === 1 ? '>' : '<'} ? AND e.scene_id != ?${agentCond(agents)} AND ${LATEST}
      ORDER BY e.line ${dir === 1 ? 'ASC' : 'DESC'} LIMIT 1`;
    return this.stmt(sql).get(this.fileId(session), line, sceneId, ...agents) as StoryRow | undefined;
  }

  /** Agents with at least one entry, in the forge's agent order. */
  agentsPresent(): Agent[] {
    const ids = this.sessions.map((s) => s.fileId);
    if (ids.length === 0) return [];
    const present = new Set(
      this.stmt(`SELECT DISTINCT agent FROM entries WHERE file_id IN (${ids.map(() => '?').join(',')})`)
        .pluck()
        .all(...ids) as Agent[],
    );
    return AGENTS.filter((a) => present.has(a));
  }

  /** Rows per session (in session order). */
  countsBySession(agents: readonly string[]): number[] {
    const ids = this.sessions.map((s) => s.fileId);
    if (ids.length === 0) return [];
    const sql = `SELECT e.file_id AS f, count(*) AS n FROM entries e WHERE e.file_id IN (${ids.map(() => '?').join(',')})${agentCond(agents)} AND ${LATEST} GROUP BY e.file_id`;
    const byFile = new Map(
      (this.stmt(sql).all(...ids, ...agents) as { f: number; n: number }[]).map((r) => [r.f, r.n]),
    );
    return this.sessions.map((s) => byFile.get(s.fileId) ?? 0);
  }

  /** The last line number of a session (0 when empty). */
  maxLine(session: number): number {
    return (
      (
        this.stmt('SELECT max(line) AS m FROM entries WHERE file_id = ?').get(this.fileId(session)) as {
          m: number | null;
        }
      ).m ?? 0
    );
  }

  /** Rows in the session strictly between two lines. */
  countBetween(session: number, afterLine: number, beforeLine: number, agents: readonly string[]): number {
    const sql = `SELECT count(*) AS n FROM entries e WHERE e.file_id = ? AND e.line > ? AND e.line < ?${agentCond(agents)} AND ${LATEST}`;
    return (this.stmt(sql).get(this.fileId(session), afterLine, beforeLine, ...agents) as { n: number }).n;
  }

  /** Where an entry id is (exact, else a unique prefix of at least 6 characters), following revisions to the newest. */
  locate(entryId: string): { session: number; line: number } | 'ambiguous' | null {
    const bySession = new Map(this.sessions.map((s) => [s.fileId, s.rank]));
    const find = (id: string): { file_id: number; line: number; entry_id: string }[] =>
      this.stmt('SELECT file_id, line, entry_id FROM entries WHERE entry_id = ? ORDER BY seq').all(id) as {
        file_id: number;
        line: number;
        entry_id: string;
      }[];
    let hits = find(entryId).filter((r) => bySession.has(r.file_id));
    if (hits.length === 0 && entryId.length >= 6) {
      const like = this.stmt(
        'SELECT file_id, line, entry_id FROM entries WHERE entry_id >= ? AND entry_id < ? LIMIT 50',
      ).all(entryId, `${entryId}\uffff`) as {
        file_id: number;
        line: number;
        entry_id: string;
      }[];
      hits = like.filter((r) => bySession.has(r.file_id));
      if (new Set(hits.map((h) => h.entry_id)).size > 1) return 'ambiguous';
    }
    let hit = hits[0];
    if (!hit) return null;
    // A superseded entry is shown as its newest revision.
    for (let hops = 0; hops < 1000; hops++) {
      const next = this.stmt(
        'SELECT file_id, line, entry_id FROM entries WHERE supersedes = ? ORDER BY seq DESC LIMIT 1',
      ).get(hit.entry_id) as { file_id: number; line: number; entry_id: string } | undefined;
      if (!next || !bySession.has(next.file_id)) break;
      hit = next;
    }
    return { session: bySession.get(hit.file_id) as number, line: hit.line };
  }

  /** Rows matching the query (and the agents), per session in story order. */
  searchCounts(agents: readonly string[], query: string): number[] {
    this.index.requireFullText(this.sessions.map((x) => x.fileId));
    const ids = this.sessions.map((s) => s.fileId);
    if (ids.length === 0) return [];
    const sql = `SELECT e.file_id AS f, count(*) AS n FROM entries e WHERE e.file_id IN (SELECT value FROM json_each(?))${agentCond(agents)} AND ${LATEST}
      AND e.seq IN (SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?) GROUP BY e.file_id`;
    const byFile = new Map(
      (this.stmt(sql).all(JSON.stringify(ids), ...agents, ftsQuery(query)) as { f: number; n: number }[]).map((r) => [
        r.f,
        r.n,
      ]),
    );
    return ids.map((id) => byFile.get(id) ?? 0);
  }

  /** Rows of one session up to and including `line` that match the query (and the agents). */
  searchCountUpTo(session: number, line: number, agents: readonly string[], query: string): number {
    this.index.requireFullText(this.sessions.map((x) => x.fileId));
    const sql = `SELECT count(*) AS n FROM entries e WHERE e.file_id = ? AND e.line <= ?${agentCond(agents)} AND ${LATEST}
      AND e.seq IN (SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?)`;
    return (this.stmt(sql).get(this.fileId(session), line, ...agents, ftsQuery(query)) as { n: number }).n;
  }

  /** The nearest row after/before `line` in the session whose searchable text matches every word. */
  search(session: number, line: number, dir: 1 | -1, agents: readonly string[], query: string): StoryRow | undefined {
    this.index.requireFullText(this.sessions.map((x) => x.fileId));
    const sql = `SELECT ${COLS} FROM entries e WHERE e.file_id = ? AND e.line ${dir === 1 ? '>' : '<'} ?${agentCond(agents)} AND ${LATEST}
      AND e.seq IN (SELECT rowid FROM entries_fts WHERE entries_fts MATCH ?) ORDER BY e.line ${dir === 1 ? 'ASC' : 'DESC'} LIMIT 1`;
    return this.stmt(sql).get(this.fileId(session), line, ...agents, ftsQuery(query)) as StoryRow | undefined;
  }

  /** Affinity per agent over whole sessions, in session order: the sum of deltas and how many changes. */
  affinityBySession(): Map<Agent, AffinitySum>[] {
    const ids = this.sessions.map((s) => s.fileId);
    const out = this.sessions.map(() => new Map<Agent, AffinitySum>());
    if (ids.length === 0) return out;
    const rank = new Map(this.sessions.map((s) => [s.fileId, s.rank]));
    const sql = `SELECT e.file_id AS f, e.agent AS agent, sum(e.affinity_delta) AS total, count(*) AS n FROM entries e
      WHERE e.file_id IN (${ids.map(() => '?').join(',')}) AND e.affinity_delta != 0 AND ${LATEST} GROUP BY e.file_id, e.agent`;
    for (const r of this.stmt(sql).all(...ids) as { f: number; agent: Agent; total: number; n: number }[])
      out[rank.get(r.f) as number]?.set(r.agent, { total: r.total, n: r.n });
    return out;
  }

  /** Affinity per agent over the session's lines after `afterLine` up to and including `uptoLine`. */
  affinityBetween(session: number, afterLine: number, uptoLine: number): Map<Agent, AffinitySum> {
    const sql = `SELECT e.agent AS agent, sum(e.affinity_delta) AS total, count(*) AS n FROM entries e
      WHERE e.file_id = ? AND e.line > ? AND e.line <= ? AND e.affinity_delta != 0 AND ${LATEST} GROUP BY e.agent`;
    const rows = this.stmt(sql).all(this.fileId(session), afterLine, uptoLine) as {
      agent: Agent;
      total: number;
      n: number;
    }[];
    return new Map(rows.map((r) => [r.agent, { total: r.total, n: r.n }]));
  }

  /** Every affinity change in story order (streamed). */
  *affinityChanges(agents: readonly string[] = []): Generator<AffinityRow> {
    const sql = `SELECT e.entry_id, e.scene_id, e.agent, e.affinity_delta, e.recorded_at FROM entries e
      WHERE e.file_id = ? AND e.affinity_delta != 0${agentCond(agents)} AND ${LATEST} ORDER BY e.line`;
    for (const s of this.sessions) yield* this.stmt(sql).iterate(s.fileId, ...agents) as IterableIterator<AffinityRow>;
  }

  /**
   * Sessions by recency, newest first: by the last timestamp in each memoir (a session written to
   * today is newer than one that merely started later); memoirs with no timestamp come last, in
   * reverse story order.
   */
  sessionsByRecency(): number[] {
    const lastStamp = this.stmt(
      'SELECT recorded_at FROM entries WHERE file_id = ? AND recorded_at IS NOT NULL ORDER BY line DESC LIMIT 1',
    );
    const keyed = this.sessions.map((s) => ({
      rank: s.rank,
      last: (lastStamp.get(s.fileId) as { recorded_at: string } | undefined)?.recorded_at ?? null,
    }));
    keyed.sort((a, b) => {
      if (a.last !== null && b.last !== null && a.last !== b.last) return a.last > b.last ? -1 : 1;
      if ((a.last === null) !== (b.last === null)) return a.last === null ? 1 : -1;
      return b.rank - a.rank;
    });
    return keyed.map((k) => k.rank);
  }

  /** An agent's rows, newest first (sessions by recency, lines from the end; streamed: stop whenever you like). */
  *agentRowsNewestFirst(agent: Agent): Generator<StoryRow & { session: number }> {
    const sql = `SELECT ${COLS} FROM entries e WHERE e.file_id = ? AND e.agent = ? AND ${LATEST} ORDER BY e.line DESC`;
    for (const i of this.sessionsByRecency()) {
      for (const r of this.stmt(sql).iterate(this.fileId(i), agent) as IterableIterator<StoryRow>)
        yield { ...r, session: i };
    }
  }

  /** Rows of one scene in one session (at most `limit`, newest first). */
  sceneRows(session: number, sceneId: string, limit: number): StoryRow[] {
    const sql = `SELECT ${COLS} FROM entries e WHERE e.file_id = ? AND e.scene_id = ? ORDER BY e.line DESC LIMIT ?`;
    return this.stmt(sql).all(this.fileId(session), sceneId, limit) as StoryRow[];
  }

  /** The last `limit` distinct scene ids of a session (newest first): hints for a mistyped scene. */
  recentScenes(session: number, limit: number): string[] {
    const rows = this.stmt('SELECT e.scene_id FROM entries e WHERE e.file_id = ? ORDER BY e.line DESC LIMIT 500').all(
      this.fileId(session),
    ) as { scene_id: string }[];
    const out: string[] = [];
    for (const r of rows) {
      if (!out.includes(r.scene_id)) out.push(r.scene_id);
      if (out.length >= limit) break;
    }
    return out;
  }
}

/**
 * Sessions in the order they began: by the first timestamp in each memoir; memoirs with no
 * timestamp at all (Python-host lines) follow, by path.
 */
export function orderSessions(index: MemoirIndex, fileIds: readonly number[]): SessionInfo[] {
  const fileStmt = index.db.prepare('SELECT id, path, player, project, session FROM files WHERE id = ?');
  const firstStamp = index.db
    .prepare('SELECT recorded_at FROM entries WHERE file_id = ? AND recorded_at IS NOT NULL ORDER BY line LIMIT 1')
    .pluck();
  const rows = [...new Set(fileIds)].map((id) => {
    const f = fileStmt.get(id) as
      { id: number; path: string; player: string | null; project: string | null; session: string | null } | undefined;
    if (!f) throw new RangeError(`file ${id} is not in the index`);
    const started = (firstStamp.get(id) as string | undefined) ?? null;
    return { f, started };
  });
  rows.sort((a, b) => {
    if (a.started !== null && b.started !== null && a.started !== b.started) return a.started < b.started ? -1 : 1;
    if ((a.started === null) !== (b.started === null)) return a.started === null ? 1 : -1;
    return a.f.path < b.f.path ? -1 : a.f.path > b.f.path ? 1 : 0;
  });
  return rows.map(({ f, started }, rank) => ({
    rank,
    fileId: f.id,
    path: f.path,
    session: f.session ?? f.path,
    player: f.player,
    project: f.project,
    startedAt: started,
  }));
}
