/**
 * `memoir verify`: every flaw of a memoir, by line, in one pass.
 *   verify.ts          the report: merges the ranges in file order, checks ids and revision chains
 *   verify-scan.ts     the per-line half: a byte range to compact chunks
 *   verify-blocks.ts   the blocks threads claim in turn
 *   verify-threads.ts  starting and feeding the worker threads
 *   verify-worker.ts   a worker thread
 *   id-set.ts          a compact set of entry ids (duplicates), also used by the index
 *   fingerprint.ts     what the last verify saw (block CRCs, in the cache): a later edit is reported
 *
 * Nothing is re-exported here: importers name the file they need, so a command loads only that.
 */
export {};
