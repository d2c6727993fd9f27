/**
 * The replay screen (`kourai memoir replay` in a terminal):
 *   replay-view.tsx         the screen drawn: header, the scene's beats, the current beat, affinity
 *   screen.tsx              shows the screen until the player quits
 *   use-replay-state.ts     the screen's state and reducer, reading the story through StoryNav
 *   use-replay.ts           the screen's input and clock, and the full-text index build for a search
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
