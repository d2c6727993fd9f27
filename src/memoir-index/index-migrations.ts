import type { Migration } from '../store/db.js';

/**
 * The secondary indexes of `entries`, by name. A bulk load (index-build.ts) drops them and
 * builds them once at the end, which is several times faster than updating them row by row;
 * `entries_base_id` stays (it numbers identical Python lines while loading).
 */
export const BULK_INDEXES: Readonly<Record<string, string>> = {
  entries_file_line: 'CREATE INDEX entries_file_line ON entries(file_id, line)',
  entries_entry_id: 'CREATE INDEX entries_entry_id ON entries(entry_id)',
  entries_agent: 'CREATE INDEX entries_agent ON entries(agent, file_id, line)',
  entries_source: 'CREATE INDEX entries_source ON entries(source, file_id, line)',
  entries_type: 'CREATE INDEX entries_type ON entries(entry_type, file_id, line)',
  entries_scene: 'CREATE INDEX entries_scene ON entries(scene_id)',
  entries_recorded: 'CREATE INDEX entries_recorded ON entries(recorded_at)',
  entries_supersedes: 'CREATE INDEX entries_supersedes ON entries(supersedes) WHERE supersedes IS NOT NULL',
};

/**
 * Numbers identical Python lines of a file indexed in several runs; a bulk load that indexes
 * every file from byte 0 needs no lookups and drops it too.
 */
export const BASE_ID_INDEX: Readonly<Record<string, string>> = {
  entries_base_id: 'CREATE INDEX entries_base_id ON entries(file_id, base_id) WHERE base_id IS NOT NULL',
};

/**
 * The memoir index (`$KOURAI_HOME/cache/index.db`): a cache, rebuilt from the JSONL whenever a
 * file changes in a way other than an append. Nothing here is the source of truth.
 */
export const INDEX_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    up: `
      CREATE TABLE files (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL UNIQUE,
        dev TEXT NOT NULL,
        ino TEXT NOT NULL,
        indexed_bytes INTEGER NOT NULL DEFAULT 0,
        indexed_lines INTEGER NOT NULL DEFAULT 0,
        head_hash TEXT,
        tail_start INTEGER NOT NULL DEFAULT 0,
        tail_hash TEXT,
        player TEXT,
        project TEXT,
        session TEXT,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE chunks (
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        chunk INTEGER NOT NULL,
        hash TEXT NOT NULL,
        PRIMARY KEY (file_id, chunk)
      ) WITHOUT ROWID;
      CREATE TABLE entries (
        seq INTEGER PRIMARY KEY,
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        line INTEGER NOT NULL,
        offset INTEGER NOT NULL,
        length INTEGER NOT NULL,
        entry_id TEXT NOT NULL,
        base_id TEXT,
        scene_id TEXT NOT NULL,
        agent TEXT NOT NULL,
        source TEXT NOT NULL,
        entry_type TEXT NOT NULL,
        shareable INTEGER NOT NULL,
        split_reason TEXT NOT NULL,
        lenient INTEGER NOT NULL,
        recorded_at TEXT,
        affinity_delta REAL NOT NULL,
        response_kind TEXT,
        felt TEXT,
        has_preference INTEGER NOT NULL,
        supersedes TEXT
      );
      CREATE INDEX entries_file_line ON entries(file_id, line);
      CREATE INDEX entries_entry_id ON entries(entry_id);
      CREATE INDEX entries_base_id ON entries(file_id, base_id) WHERE base_id IS NOT NULL;
      CREATE INDEX entries_agent ON entries(agent, file_id, line);
      CREATE INDEX entries_source ON entries(source, file_id, line);
      CREATE INDEX entries_type ON entries(entry_type, file_id, line);
      CREATE INDEX entries_scene ON entries(scene_id);
      CREATE INDEX entries_recorded ON entries(recorded_at);
      CREATE INDEX entries_supersedes ON entries(supersedes) WHERE supersedes IS NOT NULL;
      CREATE VIRTUAL TABLE entries_fts USING fts5(text, content='', contentless_delete=1, tokenize='unicode61 remove_diacritics 2');
      CREATE TABLE problems (
        file_id INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        line INTEGER NOT NULL,
        offset INTEGER NOT NULL,
        length INTEGER NOT NULL,
        kind TEXT NOT NULL,
        message TEXT NOT NULL
      );
      CREATE INDEX problems_file ON problems(file_id, line);
      CREATE TABLE integrity_events (
        id INTEGER PRIMARY KEY,
        path TEXT NOT NULL,
        detected_at TEXT NOT NULL,
        what TEXT NOT NULL
      );
    `,
  },
  {
    // Chunk hashes now cover the partial last chunk (verify checks every indexed byte): the cache
    // is emptied and rebuilt from the memoirs on the next read.
    version: 2,
    up: `
      DELETE FROM chunks;
      DELETE FROM problems;
      INSERT INTO entries_fts(entries_fts) VALUES ('delete-all');
      DELETE FROM entries;
      UPDATE files SET indexed_bytes = 0, indexed_lines = 0, head_hash = NULL, tail_start = 0, tail_hash = NULL;
    `,
  },
  {
    // The full-text index is built lazily (fts-build.ts): per file, whether its rows are there.
    // Files indexed before this version have them all.
    version: 3,
    up: 'ALTER TABLE files ADD COLUMN fts_complete INTEGER NOT NULL DEFAULT 1;',
  },
  {
    // The reading rule takes lines it refused (pydantic's lax spellings, an extension value kourai
    // cannot read): each memoir where the schema refused a line is read again on the next update.
    // Memoirs without such a line keep their rows.
    version: 4,
    up: `
      CREATE TEMP TABLE reread AS SELECT DISTINCT file_id AS id FROM problems WHERE kind = 'schema';
      DELETE FROM entries_fts WHERE rowid IN (SELECT seq FROM entries WHERE file_id IN (SELECT id FROM reread));
      DELETE FROM entries WHERE file_id IN (SELECT id FROM reread);
      DELETE FROM chunks WHERE file_id IN (SELECT id FROM reread);
      DELETE FROM problems WHERE file_id IN (SELECT id FROM reread);
      UPDATE files SET indexed_bytes = 0, indexed_lines = 0, head_hash = NULL, tail_start = 0, tail_hash = NULL,
        fts_complete = 1 WHERE id IN (SELECT id FROM reread);
      DROP TABLE reread;
    `,
  },
];
