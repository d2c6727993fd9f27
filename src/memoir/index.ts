/**
 * The Forge Memoir: the JSONL file that is the forge's source of truth. One folder per job, each
 * importing only the ones listed after it:
 *   derive/   views computed from entries: revision chains, episodes, the replay buffer,
 *             load-bearing entries, player metrics, corrections, council events and fields, TRL export
 *   verify/   `memoir verify`: one pass over a file (on several threads), every flaw by line
 *   file/     the file itself: reading, appending under the lock, the journal, repair, discovery
 *   format/   one line: the schema, the split rule, entry ids, parsing, encoding as pydantic does
 *   sample/   the sample forge (`memoir synth`) and its planted preferences; uses format/ only
 * The SQLite index of memoirs is src/memoir-index/; affinity (src/affinity/) sits beside derive/.
 *
 * Nothing is re-exported here: importers name the file they need, so a command loads only that.
 */
export {};
