/**
 * The state database (`$KOURAI_HOME/kourai.db`): facts that exist nowhere else, so never deleted.
 *   db.ts                 opening SQLite files: WAL, busy timeout, numbered migrations (the index uses it too)
 *   state-db.ts           opening the state database; state-migrations.ts its schema
 *   privacy-ledger.ts     privacy spent, hash-chained
 *   consent-store.ts      consent decisions
 *   adapter-registry.ts   every adapter version written, and which is current
 *   feedback-prompts.ts   what the feedback prompt remembers (skips)
 *   embedding-cache.ts    embeddings from an endpoint, cached by text
 * The memoir index is src/memoir-index/.
 *
 * Nothing is re-exported here: importers name the file they need, so a command loads only that.
 */
export {};
