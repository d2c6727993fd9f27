/**
 * The Sovereignty Moment (`kourai federate consent` in a terminal):
 *   consent-app.tsx         the scene wired to its keys, and the outcome it ends with
 *   consent-view.tsx        the scene drawn: a toggle per agent, then the summary
 *   show-consent.tsx        plays the scene on the command's terminal
 *   use-consent-state.ts    the scene's state and reducer
 *   use-consent.ts          the scene's input: keys to the reducer
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
