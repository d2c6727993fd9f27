/**
 * Views derived from memoir entries (pure, or reading through file/).
 *   revisions.ts       revision chains: which entry a read resolves to
 *   supersede.ts       building a correction of an entry
 *   episodes.ts        episodes: a proposal and what the player did with it
 *   load-bearing.ts    entries a bounded buffer may never drop
 *   replay-buffer.ts   which entries a trainer replays when it cannot replay all
 *   council-fields.ts  what of a shareable entry may reach a council batch
 *   council-event.ts   the memoir's record of a federation round
 *   player-metrics.ts  the design's player metrics
 *   export-trl-dpo.ts  TRL's DPO format for `memoir export`
 *
 * Nothing is re-exported here: importers name the file they need, so a command loads only that.
 */
export {};
