/**
 * The SQLite index of memoirs (`cache/index.db`): a cache, rebuilt from the memoirs at will.
 *   indexed.ts            openIndexed: the memoirs a command reads, their index brought up to date;
 *                         updateIndexed: the same update for a synchronous caller (the simulation)
 *   memoir-index.ts       MemoirIndex: open, update, filtered queries
 *   index-build.ts        reading what was appended since the last run (or everything again)
 *   index-rows.ts         rows of a file in batches that cross threads cheaply
 *   index-pipeline.ts     parsing in a worker thread (index-worker.ts) while the main thread inserts
 *   index-staging.ts      a first build in a private file, published whole
 *   index-file.ts         where the index lives; what to do when it cannot be used
 *   index-migrations.ts   its schema
 *   fts-build.ts          the full-text index, built on first use
 *   search.ts             ranked full-text search
 *   memoir-queries.ts     queries of the reporting commands
 *   story-queries.ts      story order for replay
 *   scene-queries.ts      the rows of given scenes
 *   revision-queries.ts   revision chains from the index
 *   replay-candidates.ts  the replay buffer from the index
 * The state database (ledger, consent, registry) is src/store/.
 *
 * Nothing is re-exported here: importers name the file they need, so a command loads only that.
 */
export {};
