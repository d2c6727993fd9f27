/**
 * The sample forge's planted preferences and the texts that carry them:
 *   catalogue.ts      the planted preferences: what bond and council adapters should learn
 *   held-out.ts       fresh evaluation pairs from the held-out vocabulary
 *   profiles.ts       player profiles: which personal preferences a sample player holds
 *   pseudo-words.ts   seeded pseudo-words from two vocabularies that never share a word
 *   render-code.ts    code and test samples rendered in any style
 *   render-review.ts  what reviewers say: style edits, slop calls, disagreements
 *   render-text.ts    commit messages, plans and corrections in any style
 *   samples.ts        sample kinds: who writes each and which axes it shows
 *   slop.ts           slop passages for Aidos to catch, and clean ones
 *   style.ts          a rendering style: a pole and a variant per axis
 *   tasks.ts          task types, their specialists and the player's task descriptions
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
