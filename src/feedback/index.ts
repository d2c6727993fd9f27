/**
 * Feedback: the Likert prompt's data, settings and writes:
 *   config.ts   the feedback gate's settings (defaults < file < environment < flags)
 *   entry.ts    the feedback entry: what one answered prompt writes to the memoir
 *   history.ts  what the gate needs about an agent, read from the index
 *   write.ts    writes one answered prompt, validated, in one append
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
