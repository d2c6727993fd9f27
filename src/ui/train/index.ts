/**
 * The live training display (`kourai train bond`):
 *   show-train.tsx          the display on stderr, driven by the trainer's events (reads no input)
 *   train-view.tsx          the table drawn: a row per agent
 *   use-train-state.ts      the display's state: a row per agent, reduced from the events
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
