import { FEDERATING_AGENTS, type FederatingAgent } from '../memoir/format/agents.js';
import type { DB } from './db.js';

/**
 * Consent decisions (the Sovereignty Moment) in the state database: append-only, each with its
 * time. An agent's current stance is the latest decision that names it; an agent never named
 * has not consented.
 */
export interface AgentConsent {
  agent: FederatingAgent;
  allowed: boolean;
  /** When the current stance was decided; null if never. */
  decidedAt: string | null;
  decisionId: number | null;
}

export interface ConsentDecision {
  id: number;
  decidedAt: string;
  via: 'scene' | 'flags';
  agents: { agent: string; allowed: boolean }[];
}

export class ConsentStore {
  private readonly db: DB;
  private readonly stmts;

  constructor(db: DB) {
    this.db = db;
    this.stmts = {
      current: db.prepare<[], { agent: string; allowed: number; decision_id: number; decided_at: string }>(
        `SELECT c.agent, c.allowed, c.decision_id, d.decided_at FROM consent c JOIN consent_decisions d ON d.id = c.decision_id
         WHERE c.decision_id = (SELECT max(c2.decision_id) FROM consent c2 WHERE c2.agent = c.agent)`,
      ),
      insertDecision: db.prepare('INSERT INTO consent_decisions (decided_at, via) VALUES (?, ?)'),
      insertConsent: db.prepare('INSERT INTO consent (decision_id, agent, allowed) VALUES (?, ?, ?)'),
      decisions: db.prepare<[], { id: number; decided_at: string; via: 'scene' | 'flags' }>(
        'SELECT * FROM consent_decisions ORDER BY id',
      ),
      rows: db.prepare<[], { decision_id: number; agent: string; allowed: number }>(
        'SELECT * FROM consent ORDER BY decision_id, agent',
      ),
    };
  }

  /** The current stance of every federating agent, in the canonical agent order. */
  current(): AgentConsent[] {
    const byAgent = new Map(this.stmts.current.all().map((r) => [r.agent, r]));
    return FEDERATING_AGENTS.map((agent) => {
      const r = byAgent.get(agent);
      return { agent, allowed: r?.allowed === 1, decidedAt: r?.decided_at ?? null, decisionId: r?.decision_id ?? null };
    });
  }

  /** Records one decision for the named agents (one transaction); returns its id. */
  record(stances: readonly { agent: FederatingAgent; allowed: boolean }[], via: 'scene' | 'flags', at: Date): number {
    return this.db
      .transaction(() => {
        const id = Number(this.stmts.insertDecision.run(at.toISOString(), via).lastInsertRowid);
        for (const s of stances) this.stmts.insertConsent.run(id, s.agent, s.allowed ? 1 : 0);
        return id;
      })
      .immediate();
  }

  history(): ConsentDecision[] {
    const rows = this.stmts.rows.all();
    return this.stmts.decisions.all().map((d) => ({
      id: d.id,
      decidedAt: d.decided_at,
      via: d.via,
      agents: rows.filter((r) => r.decision_id === d.id).map((r) => ({ agent: r.agent, allowed: r.allowed === 1 })),
    }));
  }
}
