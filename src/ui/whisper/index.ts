/**
 * The Whisper Limit gauge (`kourai whisper`):
 *   show-whisper.tsx        shows the gauge until the player closes it
 *   use-whisper-state.ts    the gauge's state: the selected agent and whether its details are open
 *   use-whisper.ts          the gauge's input: keys to the reducer
 *   whisper-app.tsx         the gauge wired to its keys
 *   whisper-view.tsx        the gauge drawn: capacity per agent, key hints
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
