import type { DB } from './db.js';

/**
 * What the feedback prompt remembers outside the memoir (`feedback_prompts` in the state
 * database, append-only): skips, and answers that end a run of skips.
 */
export interface SkipRecord {
  /** Skips since the last answer. */
  count: number;
  /** The agent's newest entry when the player last skipped (null when it had none). */
  anchor: string | null;
  lastSkipAt: string;
}

export class FeedbackPrompts {
  private readonly stmts;

  constructor(db: DB) {
    this.stmts = {
      skips: db.prepare<[string, string, string, string], { n: number; last: number | null }>(
        `SELECT count(*) AS n, max(id) AS last FROM feedback_prompts
         WHERE scope = ? AND agent = ? AND outcome = 'skipped'
           AND id > coalesce((SELECT max(id) FROM feedback_prompts WHERE scope = ? AND agent = ? AND outcome = 'answered'), 0)`,
      ),
      row: db.prepare<[number], { anchor_entry_id: string | null; at: string }>(
        'SELECT anchor_entry_id, at FROM feedback_prompts WHERE id = ?',
      ),
      insert: db.prepare(
        'INSERT INTO feedback_prompts (scope, agent, outcome, anchor_entry_id, at) VALUES (?, ?, ?, ?, ?)',
      ),
    };
  }

  /** The current run of skips for an agent in a forge, or undefined when there is none. */
  skips(scope: string, agent: string): SkipRecord | undefined {
    const r = this.stmts.skips.get(scope, agent, scope, agent);
    if (!r || r.n === 0 || r.last === null) return undefined;
    const last = this.stmts.row.get(r.last);
    return { count: r.n, anchor: last?.anchor_entry_id ?? null, lastSkipAt: last?.at ?? '' };
  }

  recordSkip(scope: string, agent: string, anchor: string | null, at: Date): SkipRecord {
    this.stmts.insert.run(scope, agent, 'skipped', anchor, at.toISOString());
    return this.skips(scope, agent) as SkipRecord;
  }

  /** An answered prompt ends the back-off. */
  recordAnswer(scope: string, agent: string, entryId: string, at: Date): void {
    this.stmts.insert.run(scope, agent, 'answered', entryId, at.toISOString());
  }
}
