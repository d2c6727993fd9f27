/**
 * The Council of Sisters and the Stoa Falls (`kourai federate scene`):
 *   council-scene-view.tsx      the scene drawn, one line at a time
 *   show-council-scene.tsx      plays the scenes until stepped through, skipped or cancelled
 *   use-council-scene-state.ts  the screen's state and reducer
 *   use-council-scene.ts        the screen's input: keys to the reducer, the outcome once
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
