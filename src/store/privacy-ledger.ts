import { createHash } from 'node:crypto';
import { IntegrityError } from '../errors.js';
import type { DB } from './db.js';

/**
 * The privacy ledger in the state database: one row per council delta that noise was drawn
 * for, appended and committed BEFORE the noise is drawn. Append-only (triggers), chained by
 * SHA-256 (an edited or removed row breaks the chain), never refunded.
 */

/** The mechanism settings of one release: everything the accountant needs. */
export interface ReleaseParams {
  round: string;
  agent: string;
  noiseMultiplier: number;
  clipNorm: number;
  sampleRate: number;
  delta: number;
}

export interface ReleaseRow extends ReleaseParams {
  id: number;
  /** The agent's cumulative ε after this release, at `delta` (recorded for reading; budgets are recomputed from the parameters). */
  epsilonAgent: number;
  /** The forge's cumulative ε after this release, at `delta`. */
  epsilonForge: number;
  createdAt: string;
  prevHash: string;
  hash: string;
}

export interface PayloadRow {
  releaseId: number;
  clippedNorm: number;
  releasedNorm: number;
  payload: string;
  createdAt: string;
}

export type ReleaseEvent = 'submitted' | 'failed' | 'acknowledged';

export interface EventRow {
  id: number;
  releaseId: number;
  event: ReleaseEvent;
  detail: string | null;
  at: string;
}

interface RawRelease {
  id: number;
  round: string;
  agent: string;
  noise_multiplier: number;
  clip_norm: number;
  sample_rate: number;
  delta: number;
  epsilon_agent: number;
  epsilon_forge: number;
  created_at: string;
  prev_hash: string;
  hash: string;
}

export const GENESIS_HASH = '0'.repeat(64);

/** The chained hash of a row: sha256(prev_hash, then the row's fields as JSON). */
export function releaseHash(prevHash: string, r: Omit<ReleaseRow, 'hash' | 'prevHash'>): string {
  const fields = [
    r.id,
    r.round,
    r.agent,
    r.noiseMultiplier,
    r.clipNorm,
    r.sampleRate,
    r.delta,
    r.epsilonAgent,
    r.epsilonForge,
    r.createdAt,
  ];
  return createHash('sha256').update(prevHash).update('\n').update(JSON.stringify(fields)).digest('hex');
}

function fromRaw(r: RawRelease): ReleaseRow {
  return {
    id: r.id,
    round: r.round,
    agent: r.agent,
    noiseMultiplier: r.noise_multiplier,
    clipNorm: r.clip_norm,
    sampleRate: r.sample_rate,
    delta: r.delta,
    epsilonAgent: r.epsilon_agent,
    epsilonForge: r.epsilon_forge,
    createdAt: r.created_at,
    prevHash: r.prev_hash,
    hash: r.hash,
  };
}

/** What the caller decides inside the append transaction, from every row already there. */
export type AppendCheck = (existing: readonly ReleaseRow[]) => { epsilonAgent: number; epsilonForge: number };

export class PrivacyLedger {
  readonly db: DB;
  private readonly stmts;

  constructor(db: DB) {
    this.db = db;
    this.stmts = {
      all: db.prepare<[], RawRelease>('SELECT * FROM releases ORDER BY id'),
      byAgentRound: db.prepare<[string, string], RawRelease>('SELECT * FROM releases WHERE agent = ? AND round = ?'),
      insert: db.prepare(
        `INSERT INTO releases (id, round, agent, noise_multiplier, clip_norm, sample_rate, delta, epsilon_agent, epsilon_forge, created_at, prev_hash, hash)
         VALUES (@id, @round, @agent, @noiseMultiplier, @clipNorm, @sampleRate, @delta, @epsilonAgent, @epsilonForge, @createdAt, @prevHash, @hash)`,
      ),
      insertPayload: db.prepare(
        'INSERT INTO release_payloads (release_id, clipped_norm, released_norm, payload, created_at) VALUES (?, ?, ?, ?, ?)',
      ),
      payload: db.prepare<
        [number],
        { release_id: number; clipped_norm: number; released_norm: number; payload: string; created_at: string }
      >('SELECT * FROM release_payloads WHERE release_id = ?'),
      // The envelope only (every field before the tensors, which come last): the tensors are most of the bytes.
      envelopes: db.prepare<[], { release_id: number; envelope: string | null }>(
        `SELECT release_id, substr(payload, 1, instr(payload, ',"tensors":') - 1) || '}' AS envelope FROM release_payloads ORDER BY release_id`,
      ),
      norms: db.prepare<[], { release_id: number; clipped_norm: number; released_norm: number }>(
        'SELECT release_id, clipped_norm, released_norm FROM release_payloads ORDER BY release_id',
      ),
      insertEvent: db.prepare('INSERT INTO release_events (release_id, event, detail, at) VALUES (?, ?, ?, ?)'),
      events: db.prepare<
        [],
        { id: number; release_id: number; event: ReleaseEvent; detail: string | null; at: string }
      >('SELECT * FROM release_events ORDER BY id'),
    };
  }

  /** Every release in order, after checking the chain (IntegrityError when it is broken). */
  releases(): ReleaseRow[] {
    const rows = this.stmts.all.all().map(fromRaw);
    verifyChain(rows);
    return rows;
  }

  find(agent: string, round: string): ReleaseRow | undefined {
    const r = this.stmts.byAgentRound.get(agent, round);
    return r ? fromRaw(r) : undefined;
  }

  /**
   * Appends one release row in an IMMEDIATE transaction: concurrent writers (other processes)
   * wait, so `check` always sees every row committed before this one and budget cannot be
   * double-spent. `check` throws to refuse (nothing is written). Committed durably on return.
   */
  append(params: ReleaseParams, check: AppendCheck, now: Date): ReleaseRow {
    const tx = this.db.transaction((): ReleaseRow => {
      const existing = this.releases();
      const { epsilonAgent, epsilonForge } = check(existing);
      const last = existing[existing.length - 1];
      const prevHash = last?.hash ?? GENESIS_HASH;
      const base = { ...params, id: (last?.id ?? 0) + 1, epsilonAgent, epsilonForge, createdAt: now.toISOString() };
      const row: ReleaseRow = { ...base, prevHash, hash: releaseHash(prevHash, base) };
      this.stmts.insert.run(row);
      return row;
    });
    return tx.immediate();
  }

  attachPayload(p: PayloadRow): void {
    this.stmts.insertPayload.run(p.releaseId, p.clippedNorm, p.releasedNorm, p.payload, p.createdAt);
  }

  payload(releaseId: number): PayloadRow | undefined {
    const r = this.stmts.payload.get(releaseId);
    return r
      ? {
          releaseId: r.release_id,
          clippedNorm: r.clipped_norm,
          releasedNorm: r.released_norm,
          payload: r.payload,
          createdAt: r.created_at,
        }
      : undefined;
  }

  /**
   * What each drawn release declared (format, round, agent, base, mechanism), by release id: the
   * stored document without its tensors, as JSON text ('}' alone when it has no tensors key).
   */
  envelopes(): Map<number, string> {
    return new Map(this.stmts.envelopes.all().map((r) => [r.release_id, r.envelope ?? '}']));
  }

  /** Local-only magnitudes of every drawn release, by release id. */
  norms(): Map<number, { clippedNorm: number; releasedNorm: number }> {
    return new Map(
      this.stmts.norms.all().map((r) => [r.release_id, { clippedNorm: r.clipped_norm, releasedNorm: r.released_norm }]),
    );
  }

  recordEvent(releaseId: number, event: ReleaseEvent, detail: string | null, at: Date): void {
    this.stmts.insertEvent.run(releaseId, event, detail, at.toISOString());
  }

  events(): EventRow[] {
    return this.stmts.events
      .all()
      .map((e) => ({ id: e.id, releaseId: e.release_id, event: e.event, detail: e.detail, at: e.at }));
  }
}

/** Throws IntegrityError at the first row whose chain link or hash does not match. */
export function verifyChain(rows: readonly ReleaseRow[]): void {
  let prev = GENESIS_HASH;
  let prevId = 0;
  for (const r of rows) {
    if (r.id !== prevId + 1) {
      throw new IntegrityError(
        `privacy ledger is corrupt: release ${prevId + 1} is missing (next is ${r.id}); spent budget may have been removed`,
        LEDGER_HINT,
      );
    }
    if (r.prevHash !== prev)
      throw new IntegrityError(
        `privacy ledger is corrupt: release ${r.id} does not follow release ${prevId}`,
        LEDGER_HINT,
      );
    const { hash: _h, prevHash: _p, ...base } = r;
    if (releaseHash(prev, base) !== r.hash)
      throw new IntegrityError(
        `privacy ledger is corrupt: release ${r.id} was changed after it was written`,
        LEDGER_HINT,
      );
    prev = r.hash;
    prevId = r.id;
  }
}

const LEDGER_HINT =
  'nothing was released. Restore $KOURAI_HOME/kourai.db from a backup; do not edit the ledger by hand';
