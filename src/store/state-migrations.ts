import type { Migration } from './db.js';

/**
 * The state database (`$KOURAI_HOME/kourai.db`). Unlike the memoir index this is NOT a cache:
 * it holds facts that exist nowhere else (privacy spent, consent given). Never delete it.
 *
 * The privacy tables are append-only, enforced by triggers; rows of `releases` are chained by
 * SHA-256 so that an edit or a deleted row is detected (see src/store/privacy-ledger.ts).
 * Later issues add their state as new numbered migrations here.
 */
const appendOnly = (table: string): string => `
  CREATE TRIGGER ${table}_no_update BEFORE UPDATE ON ${table} BEGIN SELECT RAISE(ABORT, '${table} is append-only'); END;
  CREATE TRIGGER ${table}_no_delete BEFORE DELETE ON ${table} BEGIN SELECT RAISE(ABORT, '${table} is append-only'); END;
`;

export const STATE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    up: `
      -- One row per council delta that noise was (or was about to be) drawn for. Written and
      -- committed BEFORE the noise is drawn, so a crash can only over-count spent budget.
      CREATE TABLE releases (
        id INTEGER PRIMARY KEY,
        round TEXT NOT NULL,
        agent TEXT NOT NULL,
        noise_multiplier REAL NOT NULL CHECK (noise_multiplier > 0),
        clip_norm REAL NOT NULL CHECK (clip_norm > 0),
        sample_rate REAL NOT NULL CHECK (sample_rate > 0 AND sample_rate <= 1),
        delta REAL NOT NULL CHECK (delta > 0 AND delta < 1),
        epsilon_agent REAL NOT NULL,
        epsilon_forge REAL NOT NULL,
        created_at TEXT NOT NULL,
        prev_hash TEXT NOT NULL,
        hash TEXT NOT NULL UNIQUE,
        UNIQUE (agent, round)
      );
      ${appendOnly('releases')}

      -- What was actually drawn: the exact document that may leave (kept so a failed submission
      -- is retried with the SAME noise, never fresh noise) and local-only magnitudes.
      CREATE TABLE release_payloads (
        release_id INTEGER PRIMARY KEY REFERENCES releases(id),
        clipped_norm REAL NOT NULL,
        released_norm REAL NOT NULL,
        payload TEXT NOT NULL,
        created_at TEXT NOT NULL
      );
      ${appendOnly('release_payloads')}

      -- What happened to a release afterwards (the federation round records these).
      CREATE TABLE release_events (
        id INTEGER PRIMARY KEY,
        release_id INTEGER NOT NULL REFERENCES releases(id),
        event TEXT NOT NULL CHECK (event IN ('submitted', 'failed', 'acknowledged')),
        detail TEXT,
        at TEXT NOT NULL
      );
      CREATE INDEX release_events_release ON release_events(release_id);
      ${appendOnly('release_events')}

      -- The Sovereignty Moment: every decision, with its time. The current stance of an agent is
      -- its row in the latest decision that names it.
      CREATE TABLE consent_decisions (
        id INTEGER PRIMARY KEY,
        decided_at TEXT NOT NULL,
        via TEXT NOT NULL CHECK (via IN ('scene', 'flags'))
      );
      ${appendOnly('consent_decisions')}
      CREATE TABLE consent (
        decision_id INTEGER NOT NULL REFERENCES consent_decisions(id),
        agent TEXT NOT NULL,
        allowed INTEGER NOT NULL CHECK (allowed IN (0, 1)),
        PRIMARY KEY (decision_id, agent)
      ) WITHOUT ROWID;
      CREATE INDEX consent_agent ON consent(agent, decision_id);
      ${appendOnly('consent')}
    `,
  },
  {
    version: 2,
    up: `
      -- The feedback prompt (kourai feedback): what happened each time it was shown, per forge
      -- (scope) and agent. Answers themselves are memoir entries; what exists nowhere else is
      -- that the player skipped, and when. Consecutive skips (after the last answer) back the
      -- next prompt off; anchor_entry_id is the agent's newest entry at a skip (the cooldown
      -- counts from there) or the entry an answer wrote.
      CREATE TABLE feedback_prompts (
        id INTEGER PRIMARY KEY,
        scope TEXT NOT NULL,
        agent TEXT NOT NULL,
        outcome TEXT NOT NULL CHECK (outcome IN ('skipped', 'answered')),
        anchor_entry_id TEXT,
        at TEXT NOT NULL
      );
      CREATE INDEX feedback_prompts_scope_agent ON feedback_prompts(scope, agent, outcome, id);
      ${appendOnly('feedback_prompts')}
    `,
  },
  {
    version: 3,
    up: `
      -- The adapter registry (kourai train bond, kourai adapters): one row per adapter version
      -- written under $KOURAI_HOME/adapters/<agent>/<kind>/v<N>/ (PEFT layout). A version row is
      -- written after its directory is complete and renamed into place; its files are never
      -- rewritten (prune deletes them and marks the row). The current version of each (agent,
      -- kind) is its row in adapter_current; rollback moves it.
      CREATE TABLE adapters (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('bond', 'council')),
        version INTEGER NOT NULL CHECK (version >= 1),
        path TEXT NOT NULL,
        base_fingerprint TEXT NOT NULL,
        rank INTEGER NOT NULL CHECK (rank >= 1),
        alpha REAL NOT NULL,
        parent_version INTEGER,
        file_sha256 TEXT NOT NULL,
        origin TEXT NOT NULL,
        metrics TEXT NOT NULL,
        data_window TEXT NOT NULL,
        created_at TEXT NOT NULL,
        pruned_at TEXT,
        UNIQUE (agent, kind, version)
      );
      CREATE TABLE adapter_current (
        agent TEXT NOT NULL,
        kind TEXT NOT NULL,
        version INTEGER NOT NULL,
        changed_at TEXT NOT NULL,
        PRIMARY KEY (agent, kind),
        FOREIGN KEY (agent, kind, version) REFERENCES adapters (agent, kind, version)
      ) WITHOUT ROWID;
    `,
  },
];
