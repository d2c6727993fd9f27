/**
 * The Likert prompt (`kourai feedback`):
 *   feedback-view.tsx       the prompt: the proposal, then one question at a time
 *   screen.tsx              shows the prompt until it is answered, skipped or cancelled
 *   use-feedback-state.ts   the prompt's state and reducer: rating, kind, comment
 *   use-feedback.ts         the prompt's input: keys to the reducer, the outcome once
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
