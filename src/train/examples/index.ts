/**
 * Labelled examples from memoir entries:
 *   build.ts          memoir entry to labelled examples, one table of rules for every agent
 *   route-text.ts     what the routing head reads, and the specialists it chooses between
 *   stream-buffer.ts  the replay buffer, selected while streaming the index
 *   types.ts          labelled examples: what the trainer learns from
 *   views.ts          the data views: bond and council views of one agent
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
