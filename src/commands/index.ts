/**
 * The commands: declarations, options and the top-level commands; one folder per command group:
 *   spec.ts             the command registry's vocabulary: commands declared as plain data
 *   spec-schema.ts      a command's zod schema derived from its declaration
 *   types.ts            a command: options schema, `run`, text renderer, output modes
 *   top-level.ts        the declarations of the commands outside any group
 *   options.ts          validation shared by more than one command group
 *   option-errors.ts    plain one-line messages for bad flag values
 *   fast-flags.ts       flag values checked without zod, for the fast side of lazy options
 *   filter.ts           the entry filter flags and the index filter they mean (no zod)
 *   affinity.ts         `kourai affinity`: per-agent affinity, tier and trend
 *   completion.ts       `kourai completion`: a shell completion script
 *   doctor.ts           `kourai doctor`: environment, paths and index health, with fixes
 *   feedback.ts         `kourai feedback`: the Likert prompt for an agent's proposal
 *   route.ts            `kourai route`: which specialist should take a task
 *   score.ts            `kourai score`: rank candidate texts as an agent's adapters prefer them
 *   score-options.ts    `score`'s options, the schema of record (loaded only when needed)
 *   whisper.ts          `kourai whisper`: the Whisper Limit
 *   adapters/           `kourai adapters …`: adapter versions
 *   council/            `kourai council …`: the council server, its forges, rounds and trust
 *   federate/           `kourai federate …`: joining, consent, rounds, status, simulation
 *   memoir/             `kourai memoir …`: write, inspect, verify and repair memoirs
 *   privacy/            `kourai privacy …`: the accountant, the ledger, releases
 *   train/              `kourai train …`: local training
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
