/**
 * Affinity: the player's relationship with each agent:
 *   affinity.ts  how far it has grown: the sum of affinity deltas, tiers, trend
 *   gating.ts    whether `kourai feedback` may ask the player to rate a proposal
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
