import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { sameLayout, type Layout } from '../tensor/layout.js';
import { chunkRanges } from '../aggregation/strategy.js';
import type { Vec } from '../aggregation/vec.js';
import { ConflictError, EnvironmentError, ExitCode, IntegrityError, KouraiError, NotFoundError } from '../errors.js';
import { f32FromLE } from '../tensor/float-codec.js';
import { openDb, type DB, type Migration } from '../store/db.js';
import {
  DamagedStateError,
  LayoutChangedError,
  type LayoutRecord,
  RoundNotOpenError,
  type AggregateRow,
  type ChunkReader,
  type CouncilStorage,
  type EventRow,
  type ForgeRow,
  type NewRound,
  type NewSubmission,
  type ProcessRow,
  type RoundRow,
  type StorageInfo,
  type ScoreRow,
  type SubmissionRow,
  type TrustUpdate,
} from './storage.js';

/**
 * The council's state in one SQLite file (`<data dir>/council.db`), WAL with synchronous=FULL:
 * when the council answers "accepted", the submission is on disk, and a kill -9 at any moment
 * loses nothing that was acknowledged. Updates are stored as float32 BLOB chunks (256 KiB), so
 * aggregation reads one chunk of every forge at a time instead of whole request bodies; every
 * chunk carries the sha256 of its bytes.
 *
 * The council's state cannot be rebuilt from anything else (unlike the memoir index), so a
 * damaged file is refused, never repaired or replaced: see SqliteCouncilStorage.open.
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
  {
    // Layouts come from the configuration and have a history (a reset retires the globals before
    // it); tokens are looked up by hash; forges can be revoked; chunks carry digests.
    version: 2,
    up: (db) => {
      db.exec(`
        CREATE TABLE layouts (
          agent TEXT NOT NULL,
          since_round INTEGER NOT NULL,
          layout_json TEXT NOT NULL,
          set_at TEXT NOT NULL,
          source TEXT NOT NULL,
          PRIMARY KEY (agent, since_round)
        );
        INSERT INTO layouts (agent, since_round, layout_json, set_at, source)
          SELECT agent, 1, layout_json, fixed_at, 'first accepted update (before layouts were configured)' FROM agent_layouts;
        DROP TABLE agent_layouts;
        ALTER TABLE forges ADD COLUMN revoked_at TEXT;
        CREATE INDEX forges_by_token ON forges (token_hash);
        ALTER TABLE submission_chunks ADD COLUMN sha256 BLOB;
        ALTER TABLE aggregate_chunks ADD COLUMN sha256 BLOB;
      `);
      const sub = db.prepare('UPDATE submission_chunks SET sha256 = ? WHERE submission_id = ? AND chunk = ?');
      for (const r of db
        .prepare('SELECT submission_id, chunk, data FROM submission_chunks')
        .iterate() as IterableIterator<{ submission_id: number; chunk: number; data: Buffer }>)
        sub.run(sha256(r.data), r.submission_id, r.chunk);
      const agg = db.prepare('UPDATE aggregate_chunks SET sha256 = ? WHERE round = ? AND agent = ? AND chunk = ?');
      for (const r of db
        .prepare('SELECT round, agent, chunk, data FROM aggregate_chunks')
        .iterate() as IterableIterator<{ round: number; agent: string; chunk: number; data: Buffer }>)
        agg.run(sha256(r.data), r.round, r.agent, r.chunk);
    },
  },
  {
    // Cohorts, the aggregation lease, the council's own settings and its processes (the same
    // schema as PostgreSQL's, so both backends answer alike).
    version: 3,
    up: `
      ALTER TABLE rounds ADD COLUMN cohort_json TEXT;
      ALTER TABLE rounds ADD COLUMN claimed_by TEXT;
      ALTER TABLE rounds ADD COLUMN lease_until TEXT;
      CREATE TABLE settings (
        key TEXT PRIMARY KEY,
        value BLOB NOT NULL
      );
      CREATE TABLE processes (
        id TEXT PRIMARY KEY,
        host TEXT NOT NULL,
        pid INTEGER NOT NULL,
        url TEXT NOT NULL,
        started_at TEXT NOT NULL,
        heartbeat_at TEXT NOT NULL,
        role TEXT NOT NULL,
        policy_json TEXT NOT NULL
      );
    `,
  },
];

function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

const DAMAGED_HINT =
  'the council state cannot be rebuilt from anything else: stop the council and restore council.db from a backup (`sqlite3 council.db .recover` may salvage rows into a new file)';

interface ForgeDb {
  id: number;
  name: string;
  token_hash: Buffer;
  created_at: string;
  trust: number;
  rounds_scored: number;
  exiled_at: string | null;
  exiled_round: number | null;
  revoked_at: string | null;
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
  revokedAt: r.revoked_at,
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
  cohort_json: string | null;
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
  cohort: r.cohort_json === null ? null : (JSON.parse(r.cohort_json) as string[]),
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

  /**
   * Opens `<dataDir>/council.db`, creating it only where no file exists. An existing file must be a
   * whole council database: an empty file, a file that is not SQLite, a database that is not a
   * council's, or one that fails SQLite's integrity check (writers only: `quick_check` reads every
   * page) is refused with IntegrityError (exit 8) and a hint fit for state that cannot be rebuilt.
   * `readonly`: for the reporting commands (rounds, trust) while a council may be serving.
   */
  constructor(dataDir: string, opts: { readonly?: boolean } = {}) {
    const path = councilDbPath(dataDir);
    const readonly = opts.readonly ?? false;
    if (existsSync(path)) preflight(path, readonly);
    else if (readonly) throw new NotFoundError(`no council database at ${path}`);
    try {
      this.db = openDb(path, COUNCIL_MIGRATIONS, { readonly });
    } catch (err) {
      if (err instanceof KouraiError && err.exitCode === ExitCode.integrity)
        throw new IntegrityError(`council database ${path} is damaged: ${err.message}`, DAMAGED_HINT);
      throw err;
    }
    // An acknowledged submission must survive power loss, not only a crash of this process.
    if (!readonly) this.db.pragma('synchronous = FULL');
    const db = this.db;
    this.s = {
      addForge: db.prepare('INSERT INTO forges (name, token_hash, created_at) VALUES (?, ?, ?) RETURNING *'),
      setTokenHash: db.prepare('UPDATE forges SET token_hash = ? WHERE id = ?'),
      forgeById: db.prepare('SELECT * FROM forges WHERE id = ?'),
      forgeByName: db.prepare('SELECT * FROM forges WHERE name = ?'),
      listForges: db.prepare('SELECT * FROM forges ORDER BY id'),
      forgeByToken: db.prepare('SELECT * FROM forges WHERE token_hash = ?'),
      setToken: db.prepare('UPDATE forges SET token_hash = ?, revoked_at = NULL WHERE id = ?'),
      revoke: db.prepare('UPDATE forges SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      activity: db.prepare(
        'SELECT forge_id, count(*) AS n, max(received_at) AS last FROM submissions GROUP BY forge_id',
      ),
      latestRound: db.prepare('SELECT * FROM rounds ORDER BY round DESC LIMIT 1'),
      round: db.prepare('SELECT * FROM rounds WHERE round = ?'),
      listRounds: db.prepare('SELECT * FROM rounds ORDER BY round DESC LIMIT ?'),
      closingRounds: db.prepare("SELECT * FROM rounds WHERE state = 'closing' ORDER BY round"),
      openRound: db.prepare(
        "INSERT INTO rounds (round, state, opened_at, deadline, strategy_json, cohort_json) VALUES (?, 'open', ?, ?, ?, ?)",
      ),
      claim: db.prepare(
        "UPDATE rounds SET claimed_by = @owner, lease_until = @until WHERE round = @round AND state = 'closing' AND (claimed_by IS NULL OR claimed_by = @owner OR lease_until < @at)",
      ),
      settingOnce: db.prepare('INSERT OR IGNORE INTO settings (key, value) VALUES (?, ?)'),
      setting: db.prepare('SELECT value FROM settings WHERE key = ?'),
      heartbeat: db.prepare(
        `INSERT INTO processes (id, host, pid, url, started_at, heartbeat_at, role, policy_json) VALUES (@id, @host, @pid, @url, @startedAt, @heartbeatAt, @role, @policyJson)
         ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, role = excluded.role, url = excluded.url`,
      ),
      processes: db.prepare(
        'SELECT id, host, pid, url, started_at AS startedAt, heartbeat_at AS heartbeatAt, role, policy_json AS policyJson FROM processes WHERE heartbeat_at >= ? ORDER BY heartbeat_at DESC, id',
      ),
      removeProcess: db.prepare('DELETE FROM processes WHERE id = ?'),
      extend: db.prepare("UPDATE rounds SET deadline = ? WHERE round = ? AND state = 'open'"),
      setCohort: db.prepare('UPDATE rounds SET cohort_json = ? WHERE round = ?'),
      close: db.prepare(
        "UPDATE rounds SET state = 'closing', closed_at = ?, close_reason = ? WHERE round = ? AND state = 'open'",
      ),
      layout: db.prepare(
        'SELECT layout_json FROM layouts WHERE agent = ? AND since_round <= ? ORDER BY since_round DESC LIMIT 1',
      ),
      layoutHistory: db.prepare(
        'SELECT agent, since_round, layout_json, set_at, source FROM layouts WHERE agent = ? ORDER BY since_round',
      ),
      putLayout: db.prepare(
        'INSERT OR REPLACE INTO layouts (agent, since_round, layout_json, set_at, source) VALUES (?, ?, ?, ?, ?)',
      ),
      pendingSubmissions: db.prepare(
        `SELECT s.id, s.round, s.forge_id FROM submissions s
         WHERE s.agent = ? AND s.round >= ? AND NOT EXISTS (SELECT 1 FROM aggregates a WHERE a.round = s.round AND a.agent = s.agent)`,
      ),
      deleteChunks: db.prepare('DELETE FROM submission_chunks WHERE submission_id = ?'),
      deleteSubmission: db.prepare('DELETE FROM submissions WHERE id = ?'),
      chunkDigests: db.prepare(
        'SELECT chunk, data, sha256 FROM submission_chunks WHERE submission_id = ? ORDER BY chunk',
      ),
      submission: db.prepare('SELECT * FROM submissions WHERE round = ? AND forge_id = ? AND agent = ?'),
      insertSubmission: db.prepare(
        `INSERT INTO submissions (round, forge_id, agent, digest, base_fingerprint, clip_norm, noise_multiplier, weight, norm, coords, received_at, receipt_json)
         VALUES (@round, @forgeId, @agent, @digest, @baseFingerprint, @clipNorm, @noiseMultiplier, @weight, @norm, @coords, @receivedAt, @receiptJson) RETURNING *`,
      ),
      insertChunk: db.prepare('INSERT INTO submission_chunks (submission_id, chunk, data, sha256) VALUES (?, ?, ?, ?)'),
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
      insertAggregate: db.prepare(
        'INSERT OR IGNORE INTO aggregates (round, agent, updated, outcome_json, recorded_at) VALUES (?, ?, ?, ?, ?)',
      ),
      insertAggChunk: db.prepare(
        'INSERT INTO aggregate_chunks (round, agent, chunk, data, sha256) VALUES (?, ?, ?, ?, ?)',
      ),
      insertScore: db.prepare(
        'INSERT INTO scores (round, forge_id, agent, distance2, similarity, used) VALUES (?, ?, ?, ?, ?, ?)',
      ),
      globalOf: db.prepare(
        `SELECT a.round, a.outcome_json FROM aggregates a
         WHERE a.agent = @agent AND a.updated = 1 AND a.round < @before
           AND a.round >= coalesce((SELECT max(since_round) FROM layouts l WHERE l.agent = @agent AND l.since_round <= @before), 0)
         ORDER BY a.round DESC LIMIT 1`,
      ),
      globalChunks: db.prepare(
        'SELECT chunk, data, sha256 FROM aggregate_chunks WHERE round = ? AND agent = ? ORDER BY chunk',
      ),
      globalChunk: db.prepare('SELECT data, sha256 FROM aggregate_chunks WHERE round = ? AND agent = ? AND chunk = ?'),
      scores: db.prepare('SELECT * FROM scores WHERE round = ? ORDER BY forge_id, agent'),
      finish: db.prepare(
        "UPDATE rounds SET state = 'aggregated', aggregated_at = ? WHERE round = ? AND state = 'closing'",
      ),
      setTrust: db.prepare('UPDATE forges SET trust = ?, rounds_scored = rounds_scored + 1 WHERE id = ?'),
      exile: db.prepare('UPDATE forges SET exiled_at = ?, exiled_round = ? WHERE id = ? AND exiled_at IS NULL'),
      history: db.prepare(
        'INSERT INTO trust_history (round, forge_id, similarity, trust_before, trust_after) VALUES (?, ?, ?, ?, ?)',
      ),
      trustHistory: db.prepare(
        'SELECT round, similarity, trust_after AS trust FROM trust_history WHERE forge_id = ? ORDER BY round',
      ),
      event: db.prepare('INSERT INTO events (at, round, forge_id, kind, detail_json) VALUES (?, ?, ?, ?, ?)'),
      events: db.prepare(
        'SELECT id, at, round, forge_id AS forgeId, kind, detail_json AS detailJson FROM events ORDER BY id DESC LIMIT ?',
      ),
    };
  }

  /** Creates or upgrades `<dataDir>/council.db` (`kourai council migrate`); the versions before and after. */
  static migrate(dataDir: string): { from: number; to: number } {
    const path = councilDbPath(dataDir);
    let from = 0;
    if (existsSync(path)) {
      preflight(path, false);
      const db = new Database(path, { readonly: true, fileMustExist: true });
      try {
        from = db.pragma('user_version', { simple: true }) as number;
      } finally {
        db.close();
      }
    }
    const storage = new SqliteCouncilStorage(dataDir);
    const to = storage.db.pragma('user_version', { simple: true }) as number;
    storage.db.close();
    return { from, to };
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
      if ((err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE')
        throw new ConflictError(`a forge named "${name}" already exists`, 'pick another name (forge names are unique)');
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

  async forgeByTokenHash(hash: Buffer): Promise<ForgeRow | undefined> {
    const r = this.s.forgeByToken.get(hash) as ForgeDb | undefined;
    return r && forgeRow(r);
  }

  async setForgeToken(forgeId: number, tokenHash: Buffer, at: string): Promise<void> {
    this.db.transaction(() => {
      this.s.setToken.run(tokenHash, forgeId);
      this.s.event.run(at, null, forgeId, 'token_rotated', '{}');
    })();
  }

  async revokeForge(forgeId: number, at: string): Promise<void> {
    this.db.transaction(() => {
      if (this.s.revoke.run(at, forgeId).changes === 1) this.s.event.run(at, null, forgeId, 'forge_revoked', '{}');
    })();
  }

  async forgeActivity(): Promise<Map<number, { submissions: number; lastAt: string | null }>> {
    const rows = this.s.activity.all() as { forge_id: number; n: number; last: string | null }[];
    return new Map(rows.map((r) => [r.forge_id, { submissions: r.n, lastAt: r.last }]));
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
    this.s.openRound.run(r.round, r.openedAt, r.deadline, r.strategyJson, r.cohort && JSON.stringify(r.cohort));
  }

  async extendDeadline(round: number, deadline: string, at: string, cohort?: string[] | null): Promise<void> {
    this.db.transaction(() => {
      if (this.s.extend.run(deadline, round).changes === 1 && cohort !== undefined)
        this.s.setCohort.run(cohort && JSON.stringify(cohort), round);
      this.s.event.run(
        at,
        round,
        null,
        'round_extended',
        JSON.stringify({ deadline, reason: 'no submissions by the deadline' }),
      );
    })();
  }

  async closeRound(round: number, at: string, reason: 'min_forges' | 'deadline'): Promise<boolean> {
    return this.db.transaction(() => {
      const changed = this.s.close.run(at, reason, round).changes === 1;
      if (changed) this.s.event.run(at, round, null, 'round_closed', JSON.stringify({ reason }));
      return changed;
    })();
  }

  async claimRound(round: number, owner: string, at: string, leaseUntil: string): Promise<boolean> {
    return this.s.claim.run({ round, owner, at, until: leaseUntil }).changes === 1;
  }

  async agentLayout(agent: string, round = Number.MAX_SAFE_INTEGER): Promise<Layout | undefined> {
    const r = this.s.layout.get(agent, round) as { layout_json: string } | undefined;
    if (!r || r.layout_json === 'null') return undefined;
    return JSON.parse(r.layout_json) as Layout;
  }

  async layoutHistory(agent: string): Promise<LayoutRecord[]> {
    return (
      this.s.layoutHistory.all(agent) as {
        agent: string;
        since_round: number;
        layout_json: string;
        set_at: string;
        source: string;
      }[]
    )
      .filter((r) => r.layout_json !== 'null')
      .map((r) => ({
        agent: r.agent,
        sinceRound: r.since_round,
        layout: JSON.parse(r.layout_json) as Layout,
        setAt: r.set_at,
        source: r.source,
      }));
  }

  async adoptLayout(
    agent: string,
    layout: Layout | null,
    sinceRound: number,
    at: string,
    source: string,
  ): Promise<{ removed: { round: number; forgeId: number }[] }> {
    return this.db.transaction(() => {
      const removed = (
        this.s.pendingSubmissions.all(agent, sinceRound) as { id: number; round: number; forge_id: number }[]
      ).map((r) => {
        this.s.deleteChunks.run(r.id);
        this.s.deleteSubmission.run(r.id);
        return { round: r.round, forgeId: r.forge_id };
      });
      this.s.putLayout.run(agent, sinceRound, JSON.stringify(layout), at, source);
      this.s.event.run(
        at,
        sinceRound,
        null,
        'layout_adopted',
        JSON.stringify({ agent, source, coords: layout?.size ?? null, removed }),
      );
      return { removed };
    })();
  }

  async submission(round: number, forgeId: number, agent: string): Promise<SubmissionRow | undefined> {
    const r = this.s.submission.get(round, forgeId, agent) as SubmissionDb | undefined;
    return r && submissionRow(r);
  }

  async insertSubmission(
    sub: NewSubmission,
  ): Promise<{ inserted: true; row: SubmissionRow } | { inserted: false; row: SubmissionRow }> {
    // One connection serves every request, so no transaction can stay open while the body arrives:
    // the update's chunks (its float32 bytes, not the body's text) are held until it is complete.
    const chunks: Buffer[] = [];
    for await (const c of sub.chunks) chunks[c.index] = c.data;
    const fields = await sub.complete(async (i) => {
      const data = chunks[i];
      if (!data) throw new Error(`chunk ${i} of the update was never given`);
      return data;
    });
    const count = chunkRanges(sub.layout).length;
    if (chunks.length !== count || chunks.some((c) => c === undefined))
      throw new Error(`an update of ${count} chunks was given ${chunks.filter(Boolean).length}`);
    return this.db.transaction(() => {
      const existing = this.s.submission.get(sub.round, sub.forgeId, sub.agent) as SubmissionDb | undefined;
      if (existing) return { inserted: false as const, row: submissionRow(existing) };
      const round = this.s.round.get(sub.round) as RoundDb | undefined;
      if (round?.state !== 'open') throw new RoundNotOpenError(sub.round);
      const stored = this.s.layout.get(sub.agent, sub.round) as { layout_json: string } | undefined;
      if (!stored || stored.layout_json === 'null' || !sameLayout(JSON.parse(stored.layout_json) as Layout, sub.layout))
        throw new LayoutChangedError(sub.agent);
      const row = this.s.insertSubmission.get({
        ...fields,
        round: sub.round,
        forgeId: sub.forgeId,
        agent: sub.agent,
      }) as SubmissionDb;
      chunks.forEach((data, i) => this.s.insertChunk.run(row.id, i, data, sha256(data)));
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

  async damagedSubmissions(submissions: readonly SubmissionRow[]): Promise<{ id: number; chunk: number }[]> {
    const out: { id: number; chunk: number }[] = [];
    for (const s of submissions) {
      for (const r of this.s.chunkDigests.iterate(s.id) as IterableIterator<{
        chunk: number;
        data: Buffer;
        sha256: Buffer | null;
      }>) {
        if (!r.sha256 || !sha256(r.data).equals(r.sha256)) {
          out.push({ id: s.id, chunk: r.chunk });
          break;
        }
      }
    }
    return out;
  }

  async chunkReader(
    submissions: readonly SubmissionRow[],
    layout: Layout,
    agent: string,
    round: number,
  ): Promise<ChunkReader> {
    const ranges = chunkRanges(layout);
    const ids = submissions.map((s) => s.id);
    const stmt = this.db.prepare(
      `SELECT submission_id AS id, data FROM submission_chunks WHERE chunk = ? AND submission_id IN (${ids.map(() => '?').join(',') || 'NULL'})`,
    );
    const readChunk = (c: number): Float32Array[] => {
      const rows = stmt.all(c, ...ids) as { id: number; data: Buffer }[];
      const byId = new Map(rows.map((r) => [r.id, r.data]));
      return ids.map((id) => {
        const data = byId.get(id);
        if (!data) throw new Error(`council.db: chunk ${c} of submission ${id} is missing`);
        return f32FromLE(data);
      });
    };
    const global = this.s.globalOf.get({ agent, before: round }) as { round: number } | undefined;
    const baseChunk = (c: number): Float32Array => {
      const r = this.s.globalChunk.get(global?.round, agent, c) as { data: Buffer; sha256: Buffer | null } | undefined;
      if (!r)
        throw new DamagedStateError(
          `council.db: chunk ${c} of the ${agent} global from round ${global?.round} is missing`,
        );
      if (!r.sha256 || !sha256(r.data).equals(r.sha256))
        throw new DamagedStateError(
          `council.db: chunk ${c} of the ${agent} global from round ${global?.round} does not match its digest`,
        );
      return f32FromLE(r.data);
    };
    const assemble = (
      start: number,
      end: number,
      get: (c: number) => Float32Array[],
      count: number,
    ): Float32Array[] => {
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
    const r = this.s.aggregateOf.get(round, agent) as
      { round: number; agent: string; updated: number; outcome_json: string; recorded_at: string } | undefined;
    return (
      r && {
        round: r.round,
        agent: r.agent,
        updated: r.updated === 1,
        outcomeJson: r.outcome_json,
        recordedAt: r.recorded_at,
      }
    );
  }

  async aggregatesOf(round: number): Promise<AggregateRow[]> {
    return (
      this.s.aggregatesOf.all(round) as {
        round: number;
        agent: string;
        updated: number;
        outcome_json: string;
        recorded_at: string;
      }[]
    ).map((r) => ({
      round: r.round,
      agent: r.agent,
      updated: r.updated === 1,
      outcomeJson: r.outcome_json,
      recordedAt: r.recorded_at,
    }));
  }

  async recordAggregate(row: AggregateRow, globalChunks: Buffer[] | null, scores: ScoreRow[]): Promise<void> {
    this.db.transaction(() => {
      if (
        this.s.insertAggregate.run(row.round, row.agent, row.updated ? 1 : 0, row.outcomeJson, row.recordedAt)
          .changes === 0
      )
        return;
      globalChunks?.forEach((data, i) => this.s.insertAggChunk.run(row.round, row.agent, i, data, sha256(data)));
      for (const s of scores)
        this.s.insertScore.run(s.round, s.forgeId, s.agent, s.distance2, s.similarity, s.used ? 1 : 0);
    })();
  }

  async globalOf(
    agent: string,
    beforeRound = Number.MAX_SAFE_INTEGER,
  ): Promise<{ round: number; strategy: string } | undefined> {
    const r = this.s.globalOf.get({ agent, before: beforeRound }) as
      { round: number; outcome_json: string } | undefined;
    return r && { round: r.round, strategy: (JSON.parse(r.outcome_json) as { strategy: string }).strategy };
  }

  async globalChunks(round: number, agent: string): Promise<Buffer[]> {
    return (this.s.globalChunks.all(round, agent) as { chunk: number; data: Buffer; sha256: Buffer | null }[]).map(
      (r) => {
        if (!r.sha256 || !sha256(r.data).equals(r.sha256))
          throw new DamagedStateError(
            `council.db: chunk ${r.chunk} of the ${agent} global from round ${round} does not match its digest`,
          );
        return r.data;
      },
    );
  }

  async scoresFor(round: number): Promise<ScoreRow[]> {
    return (
      this.s.scores.all(round) as {
        round: number;
        forge_id: number;
        agent: string;
        distance2: number;
        similarity: number;
        used: number;
      }[]
    ).map((r) => ({
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
          this.s.event.run(
            at,
            round,
            u.forgeId,
            'stoa_falls',
            JSON.stringify({
              forge: f.name,
              trust: u.after,
              similarity: u.similarity,
              ...(u.evidence?.length ? { evidence: u.evidence } : {}),
            }),
          );
        }
      }
      this.s.event.run(at, round, null, 'round_aggregated', JSON.stringify({ forges_scored: updates.length }));
      if (next)
        this.s.openRound.run(
          next.round,
          next.openedAt,
          next.deadline,
          next.strategyJson,
          next.cohort && JSON.stringify(next.cohort),
        );
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

  async settingOnce(key: string, value: Buffer): Promise<Buffer> {
    this.s.settingOnce.run(key, value);
    return (this.s.setting.get(key) as { value: Buffer }).value;
  }

  async setting(key: string): Promise<Buffer | undefined> {
    return (this.s.setting.get(key) as { value: Buffer } | undefined)?.value;
  }

  async heartbeat(p: ProcessRow): Promise<void> {
    this.s.heartbeat.run(p);
  }

  async processes(since: string): Promise<ProcessRow[]> {
    return this.s.processes.all(since) as ProcessRow[];
  }

  async removeProcess(id: string): Promise<void> {
    this.s.removeProcess.run(id);
  }

  info(): StorageInfo {
    return { backend: 'sqlite', location: this.db.name };
  }

  async close(): Promise<void> {
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

/** Checks an existing file before anything is written to it (see the constructor). */
function preflight(path: string, readonly: boolean): void {
  const size = statSync(path).size;
  if (size === 0) {
    throw new IntegrityError(
      `council database ${path} is an empty file: it is not a council, and kourai will not start a new council over it (every forge token would stop working)`,
      'restore council.db from a backup; to start a new council on purpose, move the empty file aside first',
    );
  }
  let db: Database.Database | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    const version = db.pragma('user_version', { simple: true }) as number;
    const hasForges =
      db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'forges'").get() !== undefined;
    if (version === 0 || !hasForges)
      throw new IntegrityError(
        `${path} is an SQLite database but not a council's (no council schema): refusing to use it`,
        "point --data-dir at the council's own directory",
      );
    if (!readonly) {
      const check = (db.pragma('quick_check(5)') as { quick_check: string }[]).map((r) => r.quick_check);
      if (check[0] !== 'ok')
        throw new IntegrityError(`council database ${path} is damaged: ${check.join('; ')}`, DAMAGED_HINT);
    } else if (version < (COUNCIL_MIGRATIONS.at(-1)?.version ?? 0)) {
      throw new EnvironmentError(
        `council database ${path} has an older schema (version ${version})`,
        'run `kourai council serve` (or any command that changes the council) once to upgrade it',
      );
    }
  } catch (err) {
    if (err instanceof KouraiError) throw err;
    throw new IntegrityError(`council database ${path} is damaged: ${(err as Error).message}`, DAMAGED_HINT);
  } finally {
    db?.close();
  }
}
