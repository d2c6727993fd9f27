import type { DB } from './db.js';

/**
 * The adapter registry in the state database (migration 3): every adapter version written, with
 * what it was trained on and how well it did, and which version of each (agent, kind) is current.
 */
export type AdapterKind = 'bond' | 'council';

export interface AdapterRow {
  agent: string;
  kind: AdapterKind;
  version: number;
  /** The version directory, relative to KOURAI_HOME. */
  path: string;
  baseFingerprint: string;
  rank: number;
  alpha: number;
  /** The version that was current when this one was written (null: none). */
  parentVersion: number | null;
  fileSha256: string;
  /** `trained` (kourai train), `federation` (a council adapter from a round), `imported`. */
  origin: string;
  metrics: unknown;
  dataWindow: unknown;
  createdAt: string;
  prunedAt: string | null;
  current: boolean;
}

interface Raw {
  agent: string;
  kind: AdapterKind;
  version: number;
  path: string;
  base_fingerprint: string;
  rank: number;
  alpha: number;
  parent_version: number | null;
  file_sha256: string;
  origin: string;
  metrics: string;
  data_window: string;
  created_at: string;
  pruned_at: string | null;
  current: number;
}

const SELECT = `SELECT a.*, (c.version IS NOT NULL) AS current FROM adapters a LEFT JOIN adapter_current c ON c.agent = a.agent AND c.kind = a.kind AND c.version = a.version`;

function row(r: Raw): AdapterRow {
  return {
    agent: r.agent,
    kind: r.kind,
    version: r.version,
    path: r.path,
    baseFingerprint: r.base_fingerprint,
    rank: r.rank,
    alpha: r.alpha,
    parentVersion: r.parent_version,
    fileSha256: r.file_sha256,
    origin: r.origin,
    metrics: JSON.parse(r.metrics) as unknown,
    dataWindow: JSON.parse(r.data_window) as unknown,
    createdAt: r.created_at,
    prunedAt: r.pruned_at,
    current: r.current === 1,
  };
}

export type NewAdapter = Omit<AdapterRow, 'current' | 'prunedAt'>;

export class AdapterRegistry {
  constructor(private readonly db: DB) {}

  list(filter: { agent?: readonly string[]; kind?: AdapterKind } = {}): AdapterRow[] {
    const where: string[] = [];
    const args: unknown[] = [];
    if (filter.agent?.length) {
      where.push(`a.agent IN (${filter.agent.map(() => '?').join(', ')})`);
      args.push(...filter.agent);
    }
    if (filter.kind) {
      where.push('a.kind = ?');
      args.push(filter.kind);
    }
    const sql = `${SELECT}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY a.agent, a.kind, a.version`;
    return (this.db.prepare(sql).all(...args) as Raw[]).map(row);
  }

  get(agent: string, kind: AdapterKind, version: number): AdapterRow | null {
    const r = this.db
      .prepare(`${SELECT} WHERE a.agent = ? AND a.kind = ? AND a.version = ?`)
      .get(agent, kind, version) as Raw | undefined;
    return r ? row(r) : null;
  }

  current(agent: string, kind: AdapterKind): AdapterRow | null {
    const r = this.db
      .prepare(
        `${SELECT} JOIN adapter_current cc ON cc.agent = a.agent AND cc.kind = a.kind AND cc.version = a.version WHERE a.agent = ? AND a.kind = ?`,
      )
      .get(agent, kind) as Raw | undefined;
    return r ? row(r) : null;
  }

  /** The highest version ever registered (pruned included), 0 for none. */
  maxVersion(agent: string, kind: AdapterKind): number {
    return (
      this.db
        .prepare('SELECT COALESCE(MAX(version), 0) AS v FROM adapters WHERE agent = ? AND kind = ?')
        .get(agent, kind) as { v: number }
    ).v;
  }

  /** Registers a version and makes it current, in one transaction. */
  add(a: NewAdapter): void {
    this.db.transaction(() => {
      this.db
        .prepare(
          `INSERT INTO adapters (agent, kind, version, path, base_fingerprint, rank, alpha, parent_version, file_sha256, origin, metrics, data_window, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          a.agent,
          a.kind,
          a.version,
          a.path,
          a.baseFingerprint,
          a.rank,
          a.alpha,
          a.parentVersion,
          a.fileSha256,
          a.origin,
          JSON.stringify(a.metrics),
          JSON.stringify(a.dataWindow),
          a.createdAt,
        );
      this.setCurrent(a.agent, a.kind, a.version, a.createdAt);
    })();
  }

  setCurrent(agent: string, kind: AdapterKind, version: number, at: string): void {
    this.db
      .prepare(
        'INSERT INTO adapter_current (agent, kind, version, changed_at) VALUES (?, ?, ?, ?) ON CONFLICT (agent, kind) DO UPDATE SET version = excluded.version, changed_at = excluded.changed_at',
      )
      .run(agent, kind, version, at);
  }

  markPruned(agent: string, kind: AdapterKind, version: number, at: string): void {
    this.db
      .prepare('UPDATE adapters SET pruned_at = ? WHERE agent = ? AND kind = ? AND version = ?')
      .run(at, agent, kind, version);
  }
}
