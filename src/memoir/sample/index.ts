/**
 * The sample forge (`memoir synth`): seeded sessions in which players hold planted preferences.
 *   synth.ts           sessions of entries
 *   root.ts            a council's root memoir: the shared craft and no personal taste, by a published seed
 *   planted/           the preferences (catalogue.ts), players (profiles.ts), tasks, rendering
 *                      in a style, and held-out pairs on words synth never uses (held-out.ts);
 *                      slop passages for Aidos with a held-out part (slop.ts: off unless asked for)
 *
 * Nothing is re-exported here: importers name the file they need, so a command loads only that.
 */
export {};
