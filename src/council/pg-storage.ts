import { createHash, randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readSync, rmSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { chunkRanges } from '../aggregation/strategy.js';
import type { Vec } from '../aggregation/vec.js';
import { ConflictError, EnvironmentError } from '../errors.js';
import { sameLayout, type Layout } from '../tensor/layout.js';
import { PG_MIGRATIONS, PG_SCHEMA_VERSION } from './pg-schema.js';
import {
  DamagedStateError,
  LayoutChangedError,
  RoundNotOpenError,
  StorageUnavailableError,
  type AggregateRow,
  type ChunkReader,
  type CouncilStorage,
  type EventRow,
  type ForgeRow,
  type LayoutRecord,
  type NewRound,
  type NewSubmission,
  type ProcessRow,
  type RoundRow,
  type ScoreRow,
  type StorageInfo,
  type SubmissionRow,
  type TrustUpdate,
} from './storage.js';

/**
 * The council's state in PostgreSQL, shared by any number of `council serve` processes. Every
 * conditional change of storage.ts is one transaction here; the round row is the lock that orders
 * them: an upload or a seal holds it FOR SHARE while it checks that the round is open and writes,
 * and closing the round updates it, so no update is accepted into a round that has closed.
 *
 * Updates are stored as rows of 256 KiB chunks (bytea), each with its sha256, as in SQLite; an upload
 * writes each chunk as its bytes arrive (insertSubmission). Aggregation reads synchronously
 * (storage.ts, ChunkReader), so `chunkReader` first copies the round's chunks into a private
 * temporary file, a few submissions per query.
 *
 * Times are ISO-8601 text, as in SQLite, so both backends return identical rows.
 */
type Queryable = pg.Pool | pg.PoolClient;

/** Connection-level failures: the database is unreachable, restarting or shutting down. */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  '57P01',
  '57P02',
  '57P03',
  '53300',
]);

function unavailable(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (e.code && (UNAVAILABLE_CODES.has(e.code) || e.code.startsWith('08'))) return true;
  return /Connection terminated|connection timeout|Client has encountered a connection error|not queryable/i.test(
    e.message ?? '',
  );
}

/** The URL without its password, for logs and health. */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

export function isPostgresUrl(s: string): boolean {
  return /^postgres(ql)?:\/\//i.test(s);
}

function sha256(data: Buffer): Buffer {
  return createHash('sha256').update(data).digest();
}

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

const ROUND_COLUMNS =
  'round, state, opened_at, deadline, closed_at, close_reason, aggregated_at, strategy_json, cohort_json';
const INSERT_ROUND = `INSERT INTO rounds (round, state, opened_at, deadline, strategy_json, cohort_json) VALUES ($1, 'open', $2, $3, $4, $5)`;
const EVENT = 'INSERT INTO events (at, round, forge_id, kind, detail_json) VALUES ($1, $2, $3, $4, $5)';
const GLOBAL_OF = `SELECT a.round, a.outcome_json FROM aggregates a
  WHERE a.agent = $1 AND a.updated AND a.round < $2
    AND a.round >= coalesce((SELECT max(since_round) FROM layouts l WHERE l.agent = $1 AND l.since_round <= $2), 0)
  ORDER BY a.round DESC LIMIT 1`;
const MAX_ROUND = 2_147_483_647;

/** Rows fetched per query when spooling an agent's updates (bounded memory, few round trips). */
const SPOOL_BATCH_BYTES = 4 * 1024 * 1024;

/** insertSubmission: the slot was taken by another upload meanwhile (the transaction rolls back). */
class SlotTaken extends Error {}

/** What the schema of a database is, against what this kourai knows. */
export type SchemaState = { version: number; known: number };

export class PgCouncilStorage implements CouncilStorage {
  private constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
  ) {}

  /**
   * Connects and checks the schema: a database that is not exactly at this kourai's version is
   * refused, naming the command that fixes it (`anySchema`: for `council migrate`, which checks
   * itself). A wrong URL or password is one EnvironmentError line.
   */
  static async open(
    url: string,
    opts: { anySchema?: boolean; max?: number; log?: (line: string) => void } = {},
  ): Promise<PgCouncilStorage> {
    let pool: pg.Pool;
    try {
      pool = new pg.Pool({
        connectionString: url,
        max: opts.max ?? 10,
        connectionTimeoutMillis: 10_000,
        idleTimeoutMillis: 30_000,
        application_name: 'kourai-council',
      });
    } catch (err) {
      throw new EnvironmentError(
        `council database URL ${redactUrl(url)} cannot be used: ${(err as Error).message}`,
        'give --database postgres://USER:PASSWORD@HOST:PORT/DATABASE',
      );
    }
    // An idle connection that breaks (the server restarted) must not crash the process.
    pool.on('error', (err) => opts.log?.(`council: database connection lost: ${err.message}`));
    const storage = new PgCouncilStorage(pool, url);
    try {
      await pool.query('SELECT 1');
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw new EnvironmentError(
        `cannot connect to the council database ${redactUrl(url)}: ${oneLine(err)}`,
        'check the URL, the password and that PostgreSQL is running (pg_isready)',
      );
    }
    try {
      const s = await storage.schema();
      if (opts.anySchema) {
        // checked by migrate()
      } else if (s.version > s.known) throw newerSchema(url, s);
      else if (s.version < s.known) {
        throw new EnvironmentError(
          `council database ${redactUrl(url)} has schema version ${s.version}, this kourai needs ${s.known}`,
          `run \`kourai council migrate --database ${redactUrl(url)}\` once (with every council process stopped if the database is in use)`,
        );
      }
    } catch (err) {
      await pool.end().catch(() => undefined);
      throw err;
    }
    return storage;
  }

  /** The schema version stored, and the newest this kourai knows. */
  async schema(): Promise<SchemaState> {
    const t = await this.pool.query<{ exists: boolean }>(
      "SELECT to_regclass('public.kourai_schema') IS NOT NULL AS exists",
    );
    if (!t.rows[0]?.exists) {
      const other = await this.pool.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM information_schema.tables WHERE table_schema = 'public'",
      );
      if ((other.rows[0]?.n ?? 0) > 0)
        throw new ConflictError(
          `council database ${redactUrl(this.url)} holds tables that are not a council's: refusing to use it`,
          'give the council a database of its own (createdb kourai_council)',
        );
      return { version: 0, known: PG_SCHEMA_VERSION };
    }
    const r = await this.pool.query<{ version: number }>('SELECT max(version)::int AS version FROM kourai_schema');
    return { version: r.rows[0]?.version ?? 0, known: PG_SCHEMA_VERSION };
  }

  /** Applies the migrations not applied yet, each in a transaction, under an advisory lock (one migrator at a time). */
  async migrate(): Promise<{ from: number; to: number }> {
    return this.tx(async (c) => {
      await c.query('SELECT pg_advisory_xact_lock(7470, 1)');
      await c.query('CREATE TABLE IF NOT EXISTS kourai_schema (version integer PRIMARY KEY, applied_at text NOT NULL)');
      const from =
        (await c.query<{ v: number | null }>('SELECT max(version)::int AS v FROM kourai_schema')).rows[0]?.v ?? 0;
      if (from > PG_SCHEMA_VERSION) throw newerSchema(this.url, { version: from, known: PG_SCHEMA_VERSION });
      for (const m of PG_MIGRATIONS) {
        if (m.version <= from) continue;
        await c.query(m.up);
        await c.query('INSERT INTO kourai_schema (version, applied_at) VALUES ($1, $2)', [
          m.version,
          new Date().toISOString(),
        ]);
      }
      return { from, to: PG_SCHEMA_VERSION };
    });
  }

  private async q<R extends pg.QueryResultRow>(
    text: string,
    values: unknown[] = [],
    c: Queryable = this.pool,
  ): Promise<pg.QueryResult<R>> {
    try {
      return await c.query<R>(text, values);
    } catch (err) {
      throw this.wrap(err);
    }
  }

  private wrap(err: unknown): unknown {
    if (unavailable(err)) return new StorageUnavailableError(`the council database is unavailable: ${oneLine(err)}`);
    return err;
  }

  /** Runs `fn` in a transaction on one connection. */
  private async tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    let c: pg.PoolClient;
    try {
      c = await this.pool.connect();
    } catch (err) {
      throw this.wrap(err);
    }
    let broken = false;
    try {
      await c.query('BEGIN');
      const out = await fn(c);
      await c.query('COMMIT');
      return out;
    } catch (err) {
      broken = unavailable(err);
      if (!broken) await c.query('ROLLBACK').catch(() => (broken = true));
      throw this.wrap(err);
    } finally {
      c.release(broken);
    }
  }

  // forges

  async addForge(name: string, createdAt: string, tokenHashFor: (id: number) => Buffer): Promise<ForgeRow> {
    try {
      return await this.tx(async (c) => {
        const row = (
          await c.query<ForgeDb>('INSERT INTO forges (name, token_hash, created_at) VALUES ($1, $2, $3) RETURNING *', [
            name,
            Buffer.alloc(32),
            createdAt,
          ])
        ).rows[0] as ForgeDb;
        const hash = tokenHashFor(row.id);
        await c.query('UPDATE forges SET token_hash = $1 WHERE id = $2', [hash, row.id]);
        await c.query(EVENT, [createdAt, null, row.id, 'forge_added', JSON.stringify({ forge: name })]);
        return forgeRow({ ...row, token_hash: hash });
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505')
        throw new ConflictError(`a forge named "${name}" already exists`, 'pick another name (forge names are unique)');
      throw err;
    }
  }

  async forgeById(id: number): Promise<ForgeRow | undefined> {
    const r = (await this.q<ForgeDb>('SELECT * FROM forges WHERE id = $1', [id])).rows[0];
    return r && forgeRow(r);
  }

  async forgeByName(name: string): Promise<ForgeRow | undefined> {
    const r = (await this.q<ForgeDb>('SELECT * FROM forges WHERE name = $1', [name])).rows[0];
    return r && forgeRow(r);
  }

  async listForges(): Promise<ForgeRow[]> {
    return (await this.q<ForgeDb>('SELECT * FROM forges ORDER BY id')).rows.map(forgeRow);
  }

  async forgeByTokenHash(hash: Buffer): Promise<ForgeRow | undefined> {
    const r = (await this.q<ForgeDb>('SELECT * FROM forges WHERE token_hash = $1', [hash])).rows[0];
    return r && forgeRow(r);
  }

  async setForgeToken(forgeId: number, tokenHash: Buffer, at: string): Promise<void> {
    await this.tx(async (c) => {
      await c.query('UPDATE forges SET token_hash = $1, revoked_at = NULL WHERE id = $2', [tokenHash, forgeId]);
      await c.query(EVENT, [at, null, forgeId, 'token_rotated', '{}']);
    });
  }

  async revokeForge(forgeId: number, at: string): Promise<void> {
    await this.tx(async (c) => {
      const r = await c.query('UPDATE forges SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL', [at, forgeId]);
      if (r.rowCount === 1) await c.query(EVENT, [at, null, forgeId, 'forge_revoked', '{}']);
    });
  }

  async forgeActivity(): Promise<Map<number, { submissions: number; lastAt: string | null }>> {
    const rows = (
      await this.q<{ forge_id: number; n: number; last: string | null }>(
        'SELECT forge_id, count(*)::int AS n, max(received_at) AS last FROM submissions GROUP BY forge_id',
      )
    ).rows;
    return new Map(rows.map((r) => [r.forge_id, { submissions: r.n, lastAt: r.last }]));
  }

  // rounds

  async latestRound(): Promise<RoundRow | undefined> {
    const r = (await this.q<RoundDb>(`SELECT ${ROUND_COLUMNS} FROM rounds ORDER BY round DESC LIMIT 1`)).rows[0];
    return r && roundRow(r);
  }

  async round(round: number): Promise<RoundRow | undefined> {
    const r = (await this.q<RoundDb>(`SELECT ${ROUND_COLUMNS} FROM rounds WHERE round = $1`, [round])).rows[0];
    return r && roundRow(r);
  }

  async listRounds(limit: number): Promise<RoundRow[]> {
    return (
      await this.q<RoundDb>(`SELECT ${ROUND_COLUMNS} FROM rounds ORDER BY round DESC LIMIT $1`, [limit])
    ).rows.map(roundRow);
  }

  async closingRounds(): Promise<RoundRow[]> {
    return (
      await this.q<RoundDb>(`SELECT ${ROUND_COLUMNS} FROM rounds WHERE state = 'closing' ORDER BY round`)
    ).rows.map(roundRow);
  }

  async openRound(r: NewRound): Promise<void> {
    // Several processes may open the same first round at once: one insert wins, the rest are no-ops.
    await this.q(`${INSERT_ROUND} ON CONFLICT (round) DO NOTHING`, [
      r.round,
      r.openedAt,
      r.deadline,
      r.strategyJson,
      r.cohort && JSON.stringify(r.cohort),
    ]);
  }

  async extendDeadline(round: number, deadline: string, at: string, cohort?: string[] | null): Promise<void> {
    await this.tx(async (c) => {
      const r = await c.query("UPDATE rounds SET deadline = $1 WHERE round = $2 AND state = 'open' AND deadline < $1", [
        deadline,
        round,
      ]);
      if (r.rowCount === 1 && cohort !== undefined)
        await c.query('UPDATE rounds SET cohort_json = $1 WHERE round = $2', [cohort && JSON.stringify(cohort), round]);
      if (r.rowCount === 1)
        await c.query(EVENT, [
          at,
          round,
          null,
          'round_extended',
          JSON.stringify({ deadline, reason: 'no submissions by the deadline' }),
        ]);
    });
  }

  async closeRound(round: number, at: string, reason: 'min_forges' | 'deadline'): Promise<boolean> {
    return this.tx(async (c) => {
      const changed =
        (
          await c.query(
            "UPDATE rounds SET state = 'closing', closed_at = $1, close_reason = $2 WHERE round = $3 AND state = 'open'",
            [at, reason, round],
          )
        ).rowCount === 1;
      if (changed) await c.query(EVENT, [at, round, null, 'round_closed', JSON.stringify({ reason })]);
      return changed;
    });
  }

  async claimRound(round: number, owner: string, at: string, leaseUntil: string): Promise<boolean> {
    // FOR UPDATE waits: the row is locked for a moment by more than claims (a closer that lost the
    // race holds it to the end of its transaction, a seal or upload checking the round, an insert
    // referring to it), and skipping a locked row would read as "claimed by another" and leave the
    // round unaggregated. Every holder is a short transaction; a rival claimer then sees the claim.
    return this.tx(async (c) => {
      const row = (
        await c.query<{ claimed_by: string | null; lease_until: string | null }>(
          "SELECT claimed_by, lease_until FROM rounds WHERE round = $1 AND state = 'closing' FOR UPDATE",
          [round],
        )
      ).rows[0];
      if (!row) return false;
      if (row.claimed_by !== null && row.claimed_by !== owner && (row.lease_until ?? '') >= at) return false;
      await c.query('UPDATE rounds SET claimed_by = $1, lease_until = $2 WHERE round = $3', [owner, leaseUntil, round]);
      if (row.claimed_by !== null && row.claimed_by !== owner)
        await c.query(EVENT, [
          at,
          round,
          null,
          'aggregation_taken_over',
          JSON.stringify({ from: row.claimed_by, to: owner, lease_ran_out: row.lease_until }),
        ]);
      return true;
    });
  }

  // layouts and submissions

  async agentLayout(agent: string, round = MAX_ROUND): Promise<Layout | undefined> {
    const r = (
      await this.q<{ layout_json: string }>(
        'SELECT layout_json FROM layouts WHERE agent = $1 AND since_round <= $2 ORDER BY since_round DESC LIMIT 1',
        [agent, round],
      )
    ).rows[0];
    if (!r || r.layout_json === 'null') return undefined;
    return JSON.parse(r.layout_json) as Layout;
  }

  async layoutHistory(agent: string): Promise<LayoutRecord[]> {
    const rows = (
      await this.q<{ agent: string; since_round: number; layout_json: string; set_at: string; source: string }>(
        'SELECT agent, since_round, layout_json, set_at, source FROM layouts WHERE agent = $1 ORDER BY since_round',
        [agent],
      )
    ).rows;
    return rows
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
    return this.tx(async (c) => {
      // Serialises with other adopters and with uploads of the agent (they read the layout under the same lock).
      await c.query('SELECT pg_advisory_xact_lock(7470, hashtext($1))', [agent]);
      const pending = (
        await c.query<{ id: number; round: number; forge_id: number }>(
          `SELECT s.id, s.round, s.forge_id FROM submissions s
           WHERE s.agent = $1 AND s.round >= $2 AND NOT EXISTS (SELECT 1 FROM aggregates a WHERE a.round = s.round AND a.agent = s.agent) ORDER BY s.id`,
          [agent, sinceRound],
        )
      ).rows;
      const ids = pending.map((r) => r.id);
      if (ids.length) {
        await c.query('DELETE FROM submission_chunks WHERE submission_id = ANY($1)', [ids]);
        await c.query('DELETE FROM submissions WHERE id = ANY($1)', [ids]);
      }
      const removed = pending.map((r) => ({ round: r.round, forgeId: r.forge_id }));
      await c.query(
        `INSERT INTO layouts (agent, since_round, layout_json, set_at, source) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (agent, since_round) DO UPDATE SET layout_json = excluded.layout_json, set_at = excluded.set_at, source = excluded.source`,
        [agent, sinceRound, JSON.stringify(layout), at, source],
      );
      await c.query(EVENT, [
        at,
        sinceRound,
        null,
        'layout_adopted',
        JSON.stringify({ agent, source, coords: layout?.size ?? null, removed }),
      ]);
      return { removed };
    });
  }

  async submission(round: number, forgeId: number, agent: string): Promise<SubmissionRow | undefined> {
    const r = (
      await this.q<SubmissionDb>('SELECT * FROM submissions WHERE round = $1 AND forge_id = $2 AND agent = $3', [
        round,
        forgeId,
        agent,
      ])
    ).rows[0];
    return r && submissionRow(r);
  }

  async insertSubmission(
    sub: NewSubmission,
  ): Promise<{ inserted: true; row: SubmissionRow } | { inserted: false; row: SubmissionRow }> {
    const existing = async (c: Queryable): Promise<SubmissionRow | undefined> => {
      const r = (
        await c.query<SubmissionDb>('SELECT * FROM submissions WHERE round = $1 AND forge_id = $2 AND agent = $3', [
          sub.round,
          sub.forgeId,
          sub.agent,
        ])
      ).rows[0];
      return r && submissionRow(r);
    };
    try {
      return await this.tx(async (c) => {
        // The chunks go in as the body arrives, under an id drawn now; the submission row that
        // owns them (the foreign key is checked at commit) is written once the update is whole.
        // Until then nothing is visible, and a failed, cut-off or refused upload rolls back.
        const id = (
          await c.query<{ id: number }>("SELECT nextval(pg_get_serial_sequence('submissions', 'id'))::int AS id")
        ).rows[0]?.id as number;
        const written = new Set<number>();
        for await (const chunk of sub.chunks) {
          await c.query('INSERT INTO submission_chunks (submission_id, chunk, data, sha256) VALUES ($1, $2, $3, $4)', [
            id,
            chunk.index,
            chunk.data,
            sha256(chunk.data),
          ]);
          written.add(chunk.index);
        }
        const fields = await sub.complete(async (index) => {
          if (!written.has(index)) throw new Error(`chunk ${index} of the update was never given`);
          const r = (
            await c.query<{ data: Buffer }>(
              'SELECT data FROM submission_chunks WHERE submission_id = $1 AND chunk = $2',
              [id, index],
            )
          ).rows[0];
          return r?.data as Buffer;
        });
        const count = chunkRanges(sub.layout).length;
        if (written.size !== count) throw new Error(`an update of ${count} chunks was given ${written.size}`);
        const prior = await existing(c);
        if (prior) throw new SlotTaken();
        // FOR SHARE: closing the round (an UPDATE of this row) waits for this upload, and vice versa.
        const round = (
          await c.query<{ state: string }>('SELECT state FROM rounds WHERE round = $1 FOR SHARE', [sub.round])
        ).rows[0];
        if (round?.state !== 'open') throw new RoundNotOpenError(sub.round);
        await c.query('SELECT pg_advisory_xact_lock_shared(7470, hashtext($1))', [sub.agent]);
        const stored = (
          await c.query<{ layout_json: string }>(
            'SELECT layout_json FROM layouts WHERE agent = $1 AND since_round <= $2 ORDER BY since_round DESC LIMIT 1',
            [sub.agent, sub.round],
          )
        ).rows[0];
        if (
          !stored ||
          stored.layout_json === 'null' ||
          !sameLayout(JSON.parse(stored.layout_json) as Layout, sub.layout)
        )
          throw new LayoutChangedError(sub.agent);
        const row = (
          await c.query<SubmissionDb>(
            `INSERT INTO submissions (id, round, forge_id, agent, digest, base_fingerprint, clip_norm, noise_multiplier, weight, norm, coords, received_at, receipt_json)
             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) ON CONFLICT (round, forge_id, agent) DO NOTHING RETURNING *`,
            [
              id,
              sub.round,
              sub.forgeId,
              sub.agent,
              fields.digest,
              fields.baseFingerprint,
              fields.clipNorm,
              fields.noiseMultiplier,
              fields.weight,
              fields.norm,
              fields.coords,
              fields.receivedAt,
              fields.receiptJson,
            ],
          )
        ).rows[0];
        // Another process inserted the same slot between our check and our insert.
        if (!row) throw new SlotTaken();
        return { inserted: true as const, row: submissionRow(row) };
      });
    } catch (err) {
      if (!(err instanceof SlotTaken)) throw err;
    }
    const row = await existing(this.pool);
    if (!row)
      throw new Error(
        `council database: the submission slot (${sub.round}, ${sub.forgeId}, ${sub.agent}) was taken and then vanished`,
      );
    return { inserted: false, row };
  }

  async submissionsFor(round: number, agent: string): Promise<SubmissionRow[]> {
    return (
      await this.q<SubmissionDb>('SELECT * FROM submissions WHERE round = $1 AND agent = $2 ORDER BY forge_id', [
        round,
        agent,
      ])
    ).rows.map(submissionRow);
  }

  async submittedAgents(round: number, forgeId: number): Promise<string[]> {
    return (
      await this.q<{ agent: string }>(
        'SELECT agent FROM submissions WHERE round = $1 AND forge_id = $2 ORDER BY agent',
        [round, forgeId],
      )
    ).rows.map((r) => r.agent);
  }

  async agentsWithSubmissions(round: number): Promise<string[]> {
    return (
      await this.q<{ agent: string }>('SELECT DISTINCT agent FROM submissions WHERE round = $1 ORDER BY agent', [round])
    ).rows.map((r) => r.agent);
  }

  async forgeCounts(round: number): Promise<{ submitted: number; sealed: number }> {
    const r = await this.q<{ submitted: number; sealed: number }>(
      `SELECT (SELECT count(DISTINCT forge_id)::int FROM submissions WHERE round = $1) AS submitted,
              (SELECT count(*)::int FROM seals s WHERE s.round = $1 AND EXISTS (SELECT 1 FROM submissions u WHERE u.round = s.round AND u.forge_id = s.forge_id)) AS sealed`,
      [round],
    );
    return r.rows[0] as { submitted: number; sealed: number };
  }

  async seal(round: number, forgeId: number, at: string): Promise<{ sealedAt: string }> {
    return this.tx(async (c) => {
      const prior = (
        await c.query<{ sealed_at: string }>('SELECT sealed_at FROM seals WHERE round = $1 AND forge_id = $2', [
          round,
          forgeId,
        ])
      ).rows[0];
      if (prior) return { sealedAt: prior.sealed_at };
      const r = (await c.query<{ state: string }>('SELECT state FROM rounds WHERE round = $1 FOR SHARE', [round]))
        .rows[0];
      if (r?.state !== 'open') throw new RoundNotOpenError(round);
      const inserted = (
        await c.query<{ sealed_at: string }>(
          'INSERT INTO seals (round, forge_id, sealed_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING sealed_at',
          [round, forgeId, at],
        )
      ).rows[0];
      if (inserted) return { sealedAt: inserted.sealed_at };
      const again = (
        await c.query<{ sealed_at: string }>('SELECT sealed_at FROM seals WHERE round = $1 AND forge_id = $2', [
          round,
          forgeId,
        ])
      ).rows[0];
      return { sealedAt: again?.sealed_at ?? at };
    });
  }

  async sealOf(round: number, forgeId: number): Promise<string | undefined> {
    return (
      await this.q<{ sealed_at: string }>('SELECT sealed_at FROM seals WHERE round = $1 AND forge_id = $2', [
        round,
        forgeId,
      ])
    ).rows[0]?.sealed_at;
  }

  async damagedSubmissions(submissions: readonly SubmissionRow[]): Promise<{ id: number; chunk: number }[]> {
    if (!submissions.length) return [];
    // The digests are checked by the database: no chunk crosses the wire for it.
    const rows = (
      await this.q<{ id: number; chunk: number }>(
        `SELECT submission_id AS id, min(chunk)::int AS chunk FROM submission_chunks
         WHERE submission_id = ANY($1) AND (sha256 IS NULL OR sha256(data) <> sha256) GROUP BY submission_id`,
        [submissions.map((s) => s.id)],
      )
    ).rows;
    const order = new Map(submissions.map((s, i) => [s.id, i]));
    return rows.sort((a, b) => (order.get(a.id) ?? 0) - (order.get(b.id) ?? 0));
  }

  async chunkReader(
    submissions: readonly SubmissionRow[],
    layout: Layout,
    agent: string,
    round: number,
  ): Promise<ChunkReader> {
    const ranges = chunkRanges(layout);
    const ids = submissions.map((s) => s.id);
    const size = layout.size;
    const dir = mkdtempSync(join(tmpdir(), 'kourai-council-spool-'));
    const file = join(dir, 'chunks.f32');
    const fd = openSync(file, 'w+', 0o600);
    const cleanup = (): void => {
      closeSync(fd);
      rmSync(dir, { recursive: true, force: true });
    };
    const global = (await this.q<{ round: number }>(GLOBAL_OF, [agent, round])).rows[0];
    try {
      // Batches of whole submissions per query (about SPOOL_BATCH_BYTES of rows at a time): one
      // round trip per batch, not one per chunk.
      const perQuery = Math.max(1, Math.floor(SPOOL_BATCH_BYTES / Math.max(1, size * 4)));
      const slotOf = new Map(ids.map((id, i) => [id, i]));
      for (let b = 0; b < ids.length; b += perQuery) {
        const batch = ids.slice(b, b + perQuery);
        const rows = (
          await this.q<{ submission_id: number; chunk: number; data: Buffer }>(
            'SELECT submission_id, chunk, data FROM submission_chunks WHERE submission_id = ANY($1::int[]) ORDER BY submission_id, chunk',
            [batch],
          )
        ).rows;
        const seen = new Map<number, number>();
        for (const r of rows) {
          const i = slotOf.get(r.submission_id) as number;
          const range = ranges[r.chunk];
          if (!range)
            throw new DamagedStateError(
              `council database: submission ${r.submission_id} has a chunk ${r.chunk} outside its layout`,
            );
          const [s, e] = range;
          if (r.data.length !== (e - s) * 4)
            throw new DamagedStateError(
              `council database: chunk ${r.chunk} of submission ${r.submission_id} has ${r.data.length} bytes, not ${(e - s) * 4}`,
            );
          writeSync(fd, r.data, 0, r.data.length, (i * size + s) * 4);
          seen.set(r.submission_id, (seen.get(r.submission_id) ?? 0) + 1);
        }
        for (const id of batch)
          if ((seen.get(id) ?? 0) !== ranges.length)
            throw new Error(
              `council database: submission ${id} has ${seen.get(id) ?? 0} of its ${ranges.length} chunks`,
            );
      }
      if (global) {
        const rows = (
          await this.q<{ chunk: number; data: Buffer; sha256: Buffer | null }>(
            'SELECT chunk, data, sha256 FROM aggregate_chunks WHERE round = $1 AND agent = $2 ORDER BY chunk',
            [global.round, agent],
          )
        ).rows;
        const byChunk = new Map(rows.map((r) => [r.chunk, r]));
        for (const [c, [s, e]] of ranges.entries()) {
          const r = byChunk.get(c);
          if (!r)
            throw new DamagedStateError(
              `council database: chunk ${c} of the ${agent} global from round ${global.round} is missing`,
            );
          if (!r.sha256 || !sha256(r.data).equals(r.sha256) || r.data.length !== (e - s) * 4)
            throw new DamagedStateError(
              `council database: chunk ${c} of the ${agent} global from round ${global.round} does not match its digest`,
            );
          writeSync(fd, r.data, 0, r.data.length, (ids.length * size + s) * 4);
        }
      }
    } catch (err) {
      cleanup();
      throw err;
    }
    const slot = (i: number, start: number, end: number): Float32Array => {
      const out = new Float32Array(end - start);
      const bytes = Buffer.from(out.buffer);
      readSync(fd, bytes, 0, bytes.length, (i * size + start) * 4);
      // Stored little-endian; swap on a big-endian host.
      if (!LITTLE_ENDIAN) bytes.swap32();
      return out;
    };
    let closed = false;
    return {
      n: ids.length,
      read: (start, end) => ids.map((_, i) => slot(i, start, end)) as Vec[],
      base: global ? (start, end) => slot(ids.length, start, end) as Vec : undefined,
      close: () => {
        if (closed) return;
        closed = true;
        cleanup();
      },
    };
  }

  // aggregates, globals, trust

  async aggregateOf(round: number, agent: string): Promise<AggregateRow | undefined> {
    const r = (
      await this.q<{ round: number; agent: string; updated: boolean; outcome_json: string; recorded_at: string }>(
        'SELECT * FROM aggregates WHERE round = $1 AND agent = $2',
        [round, agent],
      )
    ).rows[0];
    return (
      r && {
        round: r.round,
        agent: r.agent,
        updated: r.updated,
        outcomeJson: r.outcome_json,
        recordedAt: r.recorded_at,
      }
    );
  }

  async aggregatesOf(round: number): Promise<AggregateRow[]> {
    const rows = (
      await this.q<{ round: number; agent: string; updated: boolean; outcome_json: string; recorded_at: string }>(
        'SELECT * FROM aggregates WHERE round = $1 ORDER BY agent',
        [round],
      )
    ).rows;
    return rows.map((r) => ({
      round: r.round,
      agent: r.agent,
      updated: r.updated,
      outcomeJson: r.outcome_json,
      recordedAt: r.recorded_at,
    }));
  }

  async recordAggregate(row: AggregateRow, globalChunks: Buffer[] | null, scores: ScoreRow[]): Promise<void> {
    await this.tx(async (c) => {
      const ins = await c.query(
        'INSERT INTO aggregates (round, agent, updated, outcome_json, recorded_at) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING',
        [row.round, row.agent, row.updated, row.outcomeJson, row.recordedAt],
      );
      if (ins.rowCount === 0) return;
      for (const [i, data] of (globalChunks ?? []).entries())
        await c.query('INSERT INTO aggregate_chunks (round, agent, chunk, data, sha256) VALUES ($1, $2, $3, $4, $5)', [
          row.round,
          row.agent,
          i,
          data,
          sha256(data),
        ]);
      for (const s of scores)
        await c.query(
          'INSERT INTO scores (round, forge_id, agent, distance2, similarity, used) VALUES ($1, $2, $3, $4, $5, $6)',
          [s.round, s.forgeId, s.agent, s.distance2, s.similarity, s.used],
        );
    });
  }

  async globalOf(agent: string, beforeRound = MAX_ROUND): Promise<{ round: number; strategy: string } | undefined> {
    const r = (
      await this.q<{ round: number; outcome_json: string }>(GLOBAL_OF, [agent, Math.min(beforeRound, MAX_ROUND)])
    ).rows[0];
    return r && { round: r.round, strategy: (JSON.parse(r.outcome_json) as { strategy: string }).strategy };
  }

  async globalChunks(round: number, agent: string): Promise<Buffer[]> {
    const rows = (
      await this.q<{ chunk: number; data: Buffer; sha256: Buffer | null }>(
        'SELECT chunk, data, sha256 FROM aggregate_chunks WHERE round = $1 AND agent = $2 ORDER BY chunk',
        [round, agent],
      )
    ).rows;
    return rows.map((r) => {
      if (!r.sha256 || !sha256(r.data).equals(r.sha256))
        throw new DamagedStateError(
          `council database: chunk ${r.chunk} of the ${agent} global from round ${round} does not match its digest`,
        );
      return r.data;
    });
  }

  async scoresFor(round: number): Promise<ScoreRow[]> {
    const rows = (
      await this.q<{
        round: number;
        forge_id: number;
        agent: string;
        distance2: number;
        similarity: number;
        used: boolean;
      }>('SELECT * FROM scores WHERE round = $1 ORDER BY forge_id, agent', [round])
    ).rows;
    return rows.map((r) => ({
      round: r.round,
      forgeId: r.forge_id,
      agent: r.agent,
      distance2: r.distance2,
      similarity: r.similarity,
      used: r.used,
    }));
  }

  async finishRound(round: number, at: string, updates: TrustUpdate[], next: NewRound | null): Promise<boolean> {
    return this.tx(async (c) => {
      if (
        (
          await c.query(
            "UPDATE rounds SET state = 'aggregated', aggregated_at = $1, claimed_by = NULL, lease_until = NULL WHERE round = $2 AND state = 'closing'",
            [at, round],
          )
        ).rowCount === 0
      )
        return false;
      for (const u of updates) {
        await c.query('UPDATE forges SET trust = $1, rounds_scored = rounds_scored + 1 WHERE id = $2', [
          u.after,
          u.forgeId,
        ]);
        await c.query(
          'INSERT INTO trust_history (round, forge_id, similarity, trust_before, trust_after) VALUES ($1, $2, $3, $4, $5)',
          [round, u.forgeId, u.similarity, u.before, u.after],
        );
        if (
          u.exile &&
          (
            await c.query('UPDATE forges SET exiled_at = $1, exiled_round = $2 WHERE id = $3 AND exiled_at IS NULL', [
              at,
              round,
              u.forgeId,
            ])
          ).rowCount === 1
        ) {
          const f = (await c.query<{ name: string }>('SELECT name FROM forges WHERE id = $1', [u.forgeId])).rows[0];
          await c.query(EVENT, [
            at,
            round,
            u.forgeId,
            'stoa_falls',
            JSON.stringify({
              forge: f?.name,
              trust: u.after,
              similarity: u.similarity,
              ...(u.evidence?.length ? { evidence: u.evidence } : {}),
            }),
          ]);
        }
      }
      await c.query(EVENT, [at, round, null, 'round_aggregated', JSON.stringify({ forges_scored: updates.length })]);
      if (next)
        await c.query(INSERT_ROUND, [
          next.round,
          next.openedAt,
          next.deadline,
          next.strategyJson,
          next.cohort && JSON.stringify(next.cohort),
        ]);
      return true;
    });
  }

  async trustHistory(forgeId: number): Promise<{ round: number; similarity: number; trust: number }[]> {
    return (
      await this.q<{ round: number; similarity: number; trust: number }>(
        'SELECT round, similarity, trust_after AS trust FROM trust_history WHERE forge_id = $1 ORDER BY round',
        [forgeId],
      )
    ).rows;
  }

  // events

  async recordEvent(e: Omit<EventRow, 'id'>): Promise<void> {
    await this.q(EVENT, [e.at, e.round, e.forgeId, e.kind, e.detailJson]);
  }

  async events(limit: number): Promise<EventRow[]> {
    return (
      await this.q<EventRow>(
        'SELECT id, at, round, forge_id AS "forgeId", kind, detail_json AS "detailJson" FROM events ORDER BY id DESC LIMIT $1',
        [limit],
      )
    ).rows;
  }

  // settings and processes

  async settingOnce(key: string, value: Buffer): Promise<Buffer> {
    await this.q('INSERT INTO settings (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING', [key, value]);
    return (await this.q<{ value: Buffer }>('SELECT value FROM settings WHERE key = $1', [key])).rows[0]
      ?.value as Buffer;
  }

  async setting(key: string): Promise<Buffer | undefined> {
    return (await this.q<{ value: Buffer }>('SELECT value FROM settings WHERE key = $1', [key])).rows[0]?.value;
  }

  async heartbeat(p: ProcessRow): Promise<void> {
    await this.q(
      `INSERT INTO processes (id, host, pid, url, started_at, heartbeat_at, role, policy_json) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = excluded.heartbeat_at, role = excluded.role, url = excluded.url`,
      [p.id, p.host, p.pid, p.url, p.startedAt, p.heartbeatAt, p.role, p.policyJson],
    );
  }

  async processes(since: string): Promise<ProcessRow[]> {
    return (
      await this.q<ProcessRow>(
        'SELECT id, host, pid, url, started_at AS "startedAt", heartbeat_at AS "heartbeatAt", role, policy_json AS "policyJson" FROM processes WHERE heartbeat_at >= $1 ORDER BY heartbeat_at DESC, id',
        [since],
      )
    ).rows;
  }

  async removeProcess(id: string): Promise<void> {
    await this.q('DELETE FROM processes WHERE id = $1', [id]);
  }

  /** The database's size in bytes (pg_database_size). */
  async databaseBytes(): Promise<number> {
    return Number((await this.q<{ n: string }>('SELECT pg_database_size(current_database()) AS n')).rows[0]?.n ?? 0);
  }

  info(): StorageInfo {
    return { backend: 'postgres', location: redactUrl(this.url) };
  }

  async close(): Promise<void> {
    await this.pool.end().catch(() => undefined);
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

function oneLine(err: unknown): string {
  return (
    String((err as Error).message ?? err)
      .split('\n')[0]
      ?.trim() ?? String(err)
  );
}

function newerSchema(url: string, s: SchemaState): EnvironmentError {
  return new EnvironmentError(
    `council database ${redactUrl(url)} has schema version ${s.version}, newer than this kourai understands (${s.known})`,
    'upgrade kourai on every council process',
  );
}

/** A random id for this process's row in `processes`. */
export function processId(host: string, pid: number): string {
  return `${host}:${pid}:${randomBytes(4).toString('hex')}`;
}
