import { join } from 'node:path';
import { openDb, type DB, type Migration } from './db.js';

/**
 * Prompt state that is not part of the story: how many times in a row the player skipped the
 * feedback prompt for an agent, and the agent's newest entry when they last did (the cooldown
 * counts from there). Lives at `$KOURAI_HOME/state/feedback.db`; deleting it only resets the
 * back-off. Answers themselves are memoir entries, never stored here.
 */
export const FEEDBACK_STATE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    up: `
      CREATE TABLE skips (
        scope TEXT NOT NULL,
        agent TEXT NOT NULL,
        count INTEGER NOT NULL,
        anchor_entry_id TEXT,
        last_skip_at TEXT NOT NULL,
        PRIMARY KEY (scope, agent)
      ) WITHOUT ROWID;
    `,
  },
];

export function feedbackStatePath(home: string): string {
  return join(home, 'state', 'feedback.db');
}

export interface SkipRecord {
  count: number;
  anchor: string | null;
  lastSkipAt: string;
}

export class FeedbackState {
  private readonly db: DB;
  private readonly stmts;

  constructor(path: string) {
    this.db = openDb(path, FEEDBACK_STATE_MIGRATIONS);
    this.stmts = {
      get: this.db.prepare<[string, string], { count: number; anchor_entry_id: string | null; last_skip_at: string }>(
        'SELECT count, anchor_entry_id, last_skip_at FROM skips WHERE scope = ? AND agent = ?',
      ),
      skip: this.db.prepare(
        `INSERT INTO skips (scope, agent, count, anchor_entry_id, last_skip_at) VALUES (?, ?, 1, ?, ?)
         ON CONFLICT (scope, agent) DO UPDATE SET count = count + 1, anchor_entry_id = excluded.anchor_entry_id, last_skip_at = excluded.last_skip_at`,
      ),
      clear: this.db.prepare('DELETE FROM skips WHERE scope = ? AND agent = ?'),
    };
  }

  get(scope: string, agent: string): SkipRecord | undefined {
    const r = this.stmts.get.get(scope, agent);
    return r ? { count: r.count, anchor: r.anchor_entry_id, lastSkipAt: r.last_skip_at } : undefined;
  }

  recordSkip(scope: string, agent: string, anchor: string | null, at: Date): SkipRecord {
    this.stmts.skip.run(scope, agent, anchor, at.toISOString());
    return this.get(scope, agent) as SkipRecord;
  }

  /** An answered prompt ends the back-off. */
  clear(scope: string, agent: string): void {
    this.stmts.clear.run(scope, agent);
  }

  close(): void {
    this.db.close();
  }
}
