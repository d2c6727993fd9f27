/**
 * `kourai memoir …`: the Forge Memoirs:
 *   commands.ts         the group's declarations
 *   shared.ts           opening the index for a memoir command (memoirs resolved, index brought up to date)
 *   append.ts           `memoir append`: entries from an argument, a file or stdin, validated before writing
 *   inspect.ts          `memoir inspect`: entries listed, filtered (fast option check)
 *   inspect-options.ts  `memoir inspect`'s options, the schema of record
 *   show.ts             `memoir show`: one entry by id
 *   history.ts          an entry's revision chain, for `memoir show --history`
 *   lookup.ts           the one indexed entry an id or prefix names
 *   stats.ts            `memoir stats`: counts per agent, source and split; affinity totals
 *   verify.ts           `memoir verify`: schema, splits and integrity checks (fast option check)
 *   verify-options.ts   `memoir verify`'s options, the schema of record
 *   repair.ts           `memoir repair`: torn fragments quarantined
 *   index-cmd.ts        `memoir index`: the SQLite index brought up to date (fast option check)
 *   index-options.ts    `memoir index`'s options, the schema of record
 *   players.ts          `memoir players`: the player metrics of real forges
 *   synth.ts            `memoir synth`: the sample forge written
 *   replay.ts           `memoir replay`: the memoir played as a story
 *   supersede.ts        `memoir supersede`: a revision that replaces an entry
 *   search.ts           `memoir search`: full-text search, ranked
 *   episodes.ts         `memoir episodes`: one episode per scene or session, with its lessons
 *   buffer.ts           `memoir buffer`: a bounded replay buffer chosen for training
 *   export.ts           `memoir export`: preference pairs for training elsewhere
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
