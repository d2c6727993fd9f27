import { join } from 'node:path';
import type { Layout } from '../tensor/layout.js';
import { chunkRanges } from '../aggregation/strategy.js';
import type { Vec } from '../aggregation/vec.js';
import { ConflictError } from '../errors.js';
import { f32FromLE } from '../tensor/float-codec.js';
import { openDb, type DB, type Migration } from '../store/db.js';
import {
  LayoutChangedError,
  RoundNotOpenError,
  type AggregateRow,
  type ChunkReader,
  type CouncilStorage,
  type EventRow,
  type ForgeRow,
  type NewRound,
  type NewSubmission,
  type RoundRow,
  type ScoreRow,
  type SubmissionRow,
  type TrustUpdate,
} from './storage.js';

/**
 * The council's state in one SQLite file (`<data dir>/council.db`), WAL with synchronous=FULL:
 * when the council answers "accepted", the submission is on disk, and a kill -9 at any moment
 * loses nothing that was acknowledged. Updates are stored as float32 BLOB chunks (256 KiB), so
 * aggregation reads one chunk of every forge at a time instead of whole request bodies.
 */
export const COUNCIL_MIGRATIONS: Migration[] = [
  {
    version: 1,
    up: `
      CREATE TABLE forges (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        token_hash BLOB NOT NULL,
        created_at TEXT NOT NULL,
        trust REAL NOT NULL DEFAULT 1.0,
        rounds_scored INTEGER NOT NULL DEFAULT 0,
        exiled_at TEXT,
        exiled_round INTEGER
      );
      CREATE TABLE rounds (
        round INTEGER PRIMARY KEY,
        state TEXT NOT NULL CHECK (state IN ('open', 'closing', 'aggregated')),
        opened_at TEXT NOT NULL,
        deadline TEXT NOT NULL,
        closed_at TEXT,
        close_reason TEXT,
        aggregated_at TEXT,
        strategy_json TEXT NOT NULL
      );
      CREATE TABLE agent_layouts (
        agent TEXT PRIMARY KEY,
        layout_json TEXT NOT NULL,
        fixed_at TEXT NOT NULL
      );
      CREATE TABLE submissions (
        id INTEGER PRIMARY KEY,
        round INTEGER NOT NULL REFERENCES rounds(round),
        forge_id INTEGER NOT NULL REFERENCES forges(id),
        agent TEXT NOT NULL,
        digest TEXT NOT NULL,
        base_fingerprint TEXT NOT NULL,
        clip_norm REAL NOT NULL,
        noise_multiplier REAL NOT NULL,
        weight REAL,
        norm REAL NOT NULL,
        coords INTEGER NOT NULL,
        received_at TEXT NOT NULL,
        receipt_json TEXT NOT NULL,
        UNIQUE (round, forge_id, agent)
      );
      CREATE INDEX submissions_by_agent ON submissions (round, agent, forge_id);
      CREATE TABLE submission_chunks (
        submission_id INTEGER NOT NULL REFERENCES submissions(id),
        chunk INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (submission_id, chunk)
      );
      CREATE TABLE seals (
        round INTEGER NOT NULL REFERENCES rounds(round),
        forge_id INTEGER NOT NULL REFERENCES forges(id),
        sealed_at TEXT NOT NULL,
        PRIMARY KEY (round, forge_id)
      );
      CREATE TABLE aggregates (
        round INTEGER NOT NULL REFERENCES rounds(round),
        agent TEXT NOT NULL,
        updated INTEGER NOT NULL,
        outcome_json TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        PRIMARY KEY (round, agent)
      );
      CREATE TABLE aggregate_chunks (
        round INTEGER NOT NULL,
        agent TEXT NOT NULL,
        chunk INTEGER NOT NULL,
        data BLOB NOT NULL,
        PRIMARY KEY (round, agent, chunk),
        FOREIGN KEY (round, agent) REFERENCES aggregates(round, agent)
      );
      CREATE TABLE scores (
        round INTEGER NOT NULL,
        forge_id INTEGER NOT NULL REFERENCES forges(id),
        agent TEXT NOT NULL,
        distance2 REAL NOT NULL,
        similarity REAL NOT NULL,
        used INTEGER NOT NULL,
        PRIMARY KEY (round, forge_id, agent)
      );
      CREATE TABLE trust_history (
        round INTEGER NOT NULL,
        forge_id INTEGER NOT NULL REFERENCES forges(id),
        similarity REAL NOT NULL,
        trust_before REAL NOT NULL,
        trust_after REAL NOT NULL,
        PRIMARY KEY (round, forge_id)
      );
      CREATE TABLE events (
        id INTEGER PRIMARY KEY,
        at TEXT NOT NULL,
        round INTEGER,
        forge_id INTEGER,
        kind TEXT NOT NULL,
        detail_json TEXT NOT NULL
      );
    `,
  },
];

interface ForgeDb {
  id: number;
  name: string;
  token_hash: Buffer;
  created_at: string;
  trust: number;
  rounds_scored: number;
  exiled_at: string | null;
  exiled_round: number | null;
}
const forgeRow = (r: ForgeDb): ForgeRow => ({
  id: r.id,
  name: r.name,
  tokenHash: r.token_hash,
  createdAt: r.created_at,
  trust: r.trust,
  roundsScored: r.rounds_scored,
  exiledAt: r.exiled_at,
  exiledRound: r.exiled_round,
});

interface RoundDb {
  round: number;
  state: RoundRow['state'];
  opened_at: string;
  deadline: string;
  closed_at: string | null;
  close_reason: RoundRow['closeReason'];
  aggregated_at: string | null;
  strategy_json: string;
}
const roundRow = (r: RoundDb): RoundRow => ({
  round: r.round,
  state: r.state,
  openedAt: r.opened_at,
  deadline: r.deadline,
  closedAt: r.closed_at,
  closeReason: r.close_reason,
  aggregatedAt: r.aggregated_at,
  strategyJson: r.strategy_json,
});

interface SubmissionDb {
  id: number;
  round: number;
  forge_id: number;
  agent: string;
  digest: string;
  base_fingerprint: string;
  clip_norm: number;
  noise_multiplier: number;
  weight: number | null;
  norm: number;
  coords: number;
  received_at: string;
  receipt_json: string;
}
const submissionRow = (r: SubmissionDb): SubmissionRow => ({
  id: r.id,
  round: r.round,
  forgeId: r.forge_id,
  agent: r.agent,
  digest: r.digest,
  baseFingerprint: r.base_fingerprint,
  clipNorm: r.clip_norm,
  noiseMultiplier: r.noise_multiplier,
  weight: r.weight,
  norm: r.norm,
  coords: r.coords,
  receivedAt: r.received_at,
  receiptJson: r.receipt_json,
});

export function councilDbPath(dataDir: string): string {
  return join(dataDir, 'council.db');
}

export class SqliteCouncilStorage implements CouncilStorage {
  readonly db: DB;
  private readonly s;

  /** `readonly`: for the reporting commands (rounds, trust) while a council may be serving. */
  constructor(dataDir: string, opts: { readonly?: boolean } = {}) {
    this.db = openDb(councilDbPath(dataDir), COUNCIL_MIGRATIONS, { readonly: opts.readonly ?? false });
    // An acknowledged submission must survive power loss, not only a crash of this process.
    if (!opts.readonly) this.db.pragma('synchronous = FULL');
    const db = this.db;
    this.s = {
      addForge: db.prepare('INSERT INTO forges (name, token_hash, created_at) VALUES (?, ?, ?) RETURNING *'),
      setTokenHash: db.prepare('UPDATE forges SET token_hash = ? WHERE id = ?'),
      forgeById: db.prepare('SELECT * FROM forges WHERE id = ?'),
      forgeByName: db.prepare('SELECT * FROM forges WHERE name = ?'),
      listForges: db.prepare('SELECT * FROM forges ORDER BY id'),
      latestRound: db.prepare('SELECT * FROM rounds ORDER BY round DESC LIMIT 1'),
      round: db.prepare('SELECT * FROM rounds WHERE round = ?'),
      listRounds: db.prepare('SELECT * FROM rounds ORDER BY round DESC LIMIT ?'),
      closingRounds: db.prepare("SELECT * FROM rounds WHERE state = 'closing' ORDER BY round"),
      openRound: db.prepare("INSERT INTO rounds (round, state, opened_at, deadline, strategy_json) VALUES (?, 'open', ?, ?, ?)"),
      extend: db.prepare("UPDATE rounds SET deadline = ? WHERE round = ? AND state = 'open'"),
      close: db.prepare("UPDATE rounds SET state = 'closing', closed_at = ?, close_reason = ? WHERE round = ? AND state = 'open'"),
      layout: db.prepare('SELECT layout_json FROM agent_layouts WHERE agent = ?'),
      fixLayout: db.prepare('INSERT OR IGNORE INTO agent_layouts (agent, layout_json, fixed_at) VALUES (?, ?, ?)'),
      submission: db.prepare('SELECT * FROM submissions WHERE round = ? AND forge_id = ? AND agent = ?'),
      insertSubmission: db.prepare(
        `INSERT INTO submissions (round, forge_id, agent, digest, base_fingerprint, clip_norm, noise_multiplier, weight, norm, coords, received_at, receipt_json)
         VALUES (@round, @forgeId, @agent, @digest, @baseFingerprint, @clipNorm, @noiseMultiplier, @weight, @norm, @coords, @receivedAt, @receiptJson) RETURNING *`,
      ),
      insertChunk: db.prepare('INSERT INTO submission_chunks (submission_id, chunk, data) VALUES (?, ?, ?)'),
      submissionsFor: db.prepare('SELECT * FROM submissions WHERE round = ? AND agent = ? ORDER BY forge_id'),
      submittedAgents: db.prepare('SELECT agent FROM submissions WHERE round = ? AND forge_id = ? ORDER BY agent'),
      agentsWith: db.prepare('SELECT DISTINCT agent FROM submissions WHERE round = ? ORDER BY agent'),
      counts: db.prepare(
        `SELECT (SELECT count(DISTINCT forge_id) FROM submissions WHERE round = @round) AS submitted,
                (SELECT count(*) FROM seals s WHERE s.round = @round AND EXISTS (SELECT 1 FROM submissions u WHERE u.round = s.round AND u.forge_id = s.forge_id)) AS sealed`,
      ),
      seal: db.prepare('INSERT OR IGNORE INTO seals (round, forge_id, sealed_at) VALUES (?, ?, ?)'),
      sealOf: db.prepare('SELECT sealed_at FROM seals WHERE round = ? AND forge_id = ?'),
      aggregateOf: db.prepare('SELECT * FROM aggregates WHERE round = ? AND agent = ?'),
      aggregatesOf: db.prepare('SELECT * FROM aggregates WHERE round = ? ORDER BY agent'),
      insertAggregate: db.prepare('INSERT OR IGNORE INTO aggregates (round, agent, updated, outcome_json, recorded_at) VALUES (?, ?, ?, ?, ?)'),
      insertAggChunk: db.prepare('INSERT INTO aggregate_chunks (round, agent, chunk, data) VALUES (?, ?, ?, ?)'),
      insertScore: db.prepare('INSERT INTO scores (round, forge_id, agent, distance2, similarity, used) VALUES (?, ?, ?, ?, ?, ?)'),
      globalOf: db.prepare('SELECT round, outcome_json FROM aggregates WHERE agent = ? AND updated = 1 AND round < ? ORDER BY round DESC LIMIT 1'),
      globalChunks: db.prepare('SELECT data FROM aggregate_chunks WHERE round = ? AND agent = ? ORDER BY chunk'),
      globalChunk: db.prepare('SELECT data FROM aggregate_chunks WHERE round = ? AND agent = ? AND chunk = ?'),
      scores: db.prepare('SELECT * FROM scores WHERE round = ? ORDER BY forge_id, agent'),
      finish: db.prepare("UPDATE rounds SET state = 'aggregated', aggregated_at = ? WHERE round = ? AND state = 'closing'"),
      setTrust: db.prepare('UPDATE forges SET trust = ?, rounds_scored = rounds_scored + 1 WHERE id = ?'),
      exile: db.prepare('UPDATE forges SET exiled_at = ?, exiled_round = ? WHERE id = ? AND exiled_at IS NULL'),
      history: db.prepare('INSERT INTO trust_history (round, forge_id, similarity, trust_before, trust_after) VALUES (?, ?, ?, ?, ?)'),
      trustHistory: db.prepare('SELECT round, similarity, trust_after AS trust FROM trust_history WHERE forge_id = ? ORDER BY round'),
      event: db.prepare('INSERT INTO events (at, round, forge_id, kind, detail_json) VALUES (?, ?, ?, ?, ?)'),
      events: db.prepare('SELECT id, at, round, forge_id AS forgeId, kind, detail_json AS detailJson FROM events ORDER BY id DESC LIMIT ?'),
    };
  }

  async addForge(name: string, createdAt: string, tokenHashFor: (id: number) => Buffer): Promise<ForgeRow> {
    try {
      return this.db.transaction(() => {
        const row = this.s.addForge.get(name, Buffer.alloc(32), createdAt) as ForgeDb;
        const hash = tokenHashFor(row.id);
        this.s.setTokenHash.run(hash, row.id);
        this.s.event.run(createdAt, null, row.id, 'forge_added', JSON.stringify({ forge: name }));
        return forgeRow({ ...row, token_hash: hash });
      })();
    } catch (err) {
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE') throw new ConflictError(`a forge named "${name}" already exists`, 'pick another name (forge names are unique)');
      throw err;
    }
  }

  async forgeById(id: number): Promise<ForgeRow | undefined> {
    const r = this.s.forgeById.get(id) as ForgeDb | undefined;
    return r && forgeRow(r);
  }

  async forgeByName(name: string): Promise<ForgeRow | undefined> {
    const r = this.s.forgeByName.get(name) as ForgeDb | undefined;
    return r && forgeRow(r);
  }

  async listForges(): Promise<ForgeRow[]> {
    return (this.s.listForges.all() as ForgeDb[]).map(forgeRow);
  }

  async latestRound(): Promise<RoundRow | undefined> {
    const r = this.s.latestRound.get() as RoundDb | undefined;
    return r && roundRow(r);
  }

  async round(round: number): Promise<RoundRow | undefined> {
    const r = this.s.round.get(round) as RoundDb | undefined;
    return r && roundRow(r);
  }

  async listRounds(limit: number): Promise<RoundRow[]> {
    return (this.s.listRounds.all(limit) as RoundDb[]).map(roundRow);
  }

  async closingRounds(): Promise<RoundRow[]> {
    return (this.s.closingRounds.all() as RoundDb[]).map(roundRow);
  }

  async openRound(r: NewRound): Promise<void> {
    this.s.openRound.run(r.round, r.openedAt, r.deadline, r.strategyJson);
  }

  async extendDeadline(round: number, deadline: string, at: string): Promise<void> {
    this.db.transaction(() => {
      this.s.extend.run(deadline, round);
      this.s.event.run(at, round, null, 'round_extended', JSON.stringify({ deadline, reason: 'no submissions by the deadline' }));
    })();
  }

  async closeRound(round: number, at: string, reason: 'min_forges' | 'deadline'): Promise<boolean> {
    return this.db.transaction(() => {
      const changed = this.s.close.run(at, reason, round).changes === 1;
      if (changed) this.s.event.run(at, round, null, 'round_closed', JSON.stringify({ reason }));
      return changed;
    })();
  }

  async agentLayout(agent: string): Promise<Layout | undefined> {
    const r = this.s.layout.get(agent) as { layout_json: string } | undefined;
    return r ? (JSON.parse(r.layout_json) as Layout) : undefined;
  }

  async submission(round: number, forgeId: number, agent: string): Promise<SubmissionRow | undefined> {
    const r = this.s.submission.get(round, forgeId, agent) as SubmissionDb | undefined;
    return r && submissionRow(r);
  }

  async insertSubmission(sub: NewSubmission): Promise<{ inserted: true; row: SubmissionRow } | { inserted: false; row: SubmissionRow }> {
    return this.db.transaction(() => {
      const existing = this.s.submission.get(sub.round, sub.forgeId, sub.agent) as SubmissionDb | undefined;
      if (existing) return { inserted: false as const, row: submissionRow(existing) };
      const round = this.s.round.get(sub.round) as RoundDb | undefined;
      if (round?.state !== 'open') throw new RoundNotOpenError(sub.round);
      const stored = this.s.layout.get(sub.agent) as { layout_json: string } | undefined;
      if (!stored) this.s.fixLayout.run(sub.agent, JSON.stringify(sub.layout), sub.receivedAt);
      else if (stored.layout_json !== JSON.stringify(sub.layout)) throw new LayoutChangedError(sub.agent);
      const { chunks: _c, layout: _l, ...fields } = sub;
      const row = this.s.insertSubmission.get(fields) as SubmissionDb;
      sub.chunks.forEach((data, i) => this.s.insertChunk.run(row.id, i, data));
      return { inserted: true as const, row: submissionRow(row) };
    })();
  }

  async submissionsFor(round: number, agent: string): Promise<SubmissionRow[]> {
    return (this.s.submissionsFor.all(round, agent) as SubmissionDb[]).map(submissionRow);
  }

  async submittedAgents(round: number, forgeId: number): Promise<string[]> {
    return (this.s.submittedAgents.all(round, forgeId) as { agent: string }[]).map((r) => r.agent);
  }

  async agentsWithSubmissions(round: number): Promise<string[]> {
    return (this.s.agentsWith.all(round) as { agent: string }[]).map((r) => r.agent);
  }

  async forgeCounts(round: number): Promise<{ submitted: number; sealed: number }> {
    return this.s.counts.get({ round }) as { submitted: number; sealed: number };
  }

  async seal(round: number, forgeId: number, at: string): Promise<{ sealedAt: string }> {
    return this.db.transaction(() => {
      const r = this.s.round.get(round) as RoundDb | undefined;
      const prior = this.s.sealOf.get(round, forgeId) as { sealed_at: string } | undefined;
      if (prior) return { sealedAt: prior.sealed_at };
      if (r?.state !== 'open') throw new RoundNotOpenError(round);
      this.s.seal.run(round, forgeId, at);
      return { sealedAt: at };
    })();
  }

  async sealOf(round: number, forgeId: number): Promise<string | undefined> {
    return (this.s.sealOf.get(round, forgeId) as { sealed_at: string } | undefined)?.sealed_at;
  }

  async chunkReader(submissions: readonly SubmissionRow[], layout: Layout, agent: string, round: number): Promise<ChunkReader> {
    const ranges = chunkRanges(layout);
    const ids = submissions.map((s) => s.id);
    const stmt = this.db.prepare(`SELECT submission_id AS id, data FROM submission_chunks WHERE chunk = ? AND submission_id IN (${ids.map(() => '?').join(',') || 'NULL'})`);
    const readChunk = (c: number): Float32Array[] => {
      const rows = stmt.all(c, ...ids) as { id: number; data: Buffer }[];
      const byId = new Map(rows.map((r) => [r.id, r.data]));
      return ids.map((id) => {
        const data = byId.get(id);
        if (!data) throw new Error(`council.db: chunk ${c} of submission ${id} is missing`);
        return f32FromLE(data);
      });
    };
    const global = this.s.globalOf.get(agent, round) as { round: number } | undefined;
    const baseChunk = (c: number): Float32Array => {
      const r = this.s.globalChunk.get(global?.round, agent, c) as { data: Buffer } | undefined;
      if (!r) throw new Error(`council.db: chunk ${c} of the ${agent} global from round ${global?.round} is missing`);
      return f32FromLE(r.data);
    };
    const assemble = (start: number, end: number, get: (c: number) => Float32Array[], count: number): Float32Array[] => {
      let c = firstRange(ranges, start);
      const first = ranges[c];
      if (first && first[0] === start && first[1] === end) return get(c);
      const out = Array.from({ length: count }, () => new Float32Array(end - start));
      for (; c < ranges.length; c++) {
        const [s, e] = ranges[c] as [number, number];
        if (s >= end) break;
        const parts = get(c);
        const from = Math.max(s, start);
        const to = Math.min(e, end);
        parts.forEach((p, i) => (out[i] as Float32Array).set(p.subarray(from - s, to - s), from - start));
      }
      return out;
    };
    return {
      n: ids.length,
      read: (start, end) => assemble(start, end, readChunk, ids.length) as Vec[],
      base: global ? (start, end) => assemble(start, end, (c) => [baseChunk(c)], 1)[0] as Vec : undefined,
      close: () => undefined,
    };
  }

  async aggregateOf(round: number, agent: string): Promise<AggregateRow | undefined> {
    const r = this.s.aggregateOf.get(round, agent) as { round: number; agent: string; updated: number; outcome_json: string; recorded_at: string } | undefined;
    return r && { round: r.round, agent: r.agent, updated: r.updated === 1, outcomeJson: r.outcome_json, recordedAt: r.recorded_at };
  }

  async aggregatesOf(round: number): Promise<AggregateRow[]> {
    return (this.s.aggregatesOf.all(round) as { round: number; agent: string; updated: number; outcome_json: string; recorded_at: string }[]).map((r) => ({
      round: r.round,
      agent: r.agent,
      updated: r.updated === 1,
      outcomeJson: r.outcome_json,
      recordedAt: r.recorded_at,
    }));
  }

  async recordAggregate(row: AggregateRow, globalChunks: Buffer[] | null, scores: ScoreRow[]): Promise<void> {
    this.db.transaction(() => {
      if (this.s.insertAggregate.run(row.round, row.agent, row.updated ? 1 : 0, row.outcomeJson, row.recordedAt).changes === 0) return;
      globalChunks?.forEach((data, i) => this.s.insertAggChunk.run(row.round, row.agent, i, data));
      for (const s of scores) this.s.insertScore.run(s.round, s.forgeId, s.agent, s.distance2, s.similarity, s.used ? 1 : 0);
    })();
  }

  async globalOf(agent: string, beforeRound = Number.MAX_SAFE_INTEGER): Promise<{ round: number; strategy: string } | undefined> {
    const r = this.s.globalOf.get(agent, beforeRound) as { round: number; outcome_json: string } | undefined;
    return r && { round: r.round, strategy: (JSON.parse(r.outcome_json) as { strategy: string }).strategy };
  }

  async globalChunks(round: number, agent: string): Promise<Buffer[]> {
    return (this.s.globalChunks.all(round, agent) as { data: Buffer }[]).map((r) => r.data);
  }

  async scoresFor(round: number): Promise<ScoreRow[]> {
    return (this.s.scores.all(round) as { round: number; forge_id: number; agent: string; distance2: number; similarity: number; used: number }[]).map((r) => ({
      round: r.round,
      forgeId: r.forge_id,
      agent: r.agent,
      distance2: r.distance2,
      similarity: r.similarity,
      used: r.used === 1,
    }));
  }

  async finishRound(round: number, at: string, updates: TrustUpdate[], next: NewRound | null): Promise<boolean> {
    return this.db.transaction(() => {
      if (this.s.finish.run(at, round).changes === 0) return false;
      for (const u of updates) {
        this.s.setTrust.run(u.after, u.forgeId);
        this.s.history.run(round, u.forgeId, u.similarity, u.before, u.after);
        if (u.exile && this.s.exile.run(at, round, u.forgeId).changes === 1) {
          const f = this.s.forgeById.get(u.forgeId) as ForgeDb;
          this.s.event.run(at, round, u.forgeId, 'stoa_falls', JSON.stringify({ forge: f.name, trust: u.after, similarity: u.similarity }));
        }
      }
      this.s.event.run(at, round, null, 'round_aggregated', JSON.stringify({ forges_scored: updates.length }));
      if (next) this.s.openRound.run(next.round, next.openedAt, next.deadline, next.strategyJson);
      return true;
    })();
  }

  async trustHistory(forgeId: number): Promise<{ round: number; similarity: number; trust: number }[]> {
    return this.s.trustHistory.all(forgeId) as { round: number; similarity: number; trust: number }[];
  }

  async recordEvent(e: Omit<EventRow, 'id'>): Promise<void> {
    this.s.event.run(e.at, e.round, e.forgeId, e.kind, e.detailJson);
  }

  async events(limit: number): Promise<EventRow[]> {
    return this.s.events.all(limit) as EventRow[];
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

function firstRange(ranges: readonly [number, number][], start: number): number {
  let lo = 0;
  let hi = ranges.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((ranges[mid] as [number, number])[1] <= start) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
