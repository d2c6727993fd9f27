/**
 * The memoir as a story, for the replay screen and the text views:
 *   cursor.ts    a windowed cursor over the memoir index (memory flat whatever its size)
 *   describe.ts  short human phrases for beats
 *   records.ts   the NDJSON form of the replay
 *   story.ts     sessions, scenes and beats in story order
 *   walk.ts      the story as a stream of events for the non-interactive replay
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
