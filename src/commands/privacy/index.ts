/**
 * `kourai privacy …`: differential privacy by hand:
 *   commands.ts  the group's declarations
 *   epsilon.ts   `privacy epsilon`: ε after some steps of the Gaussian mechanism
 *   sigma.ts     `privacy sigma`: the smallest σ that keeps ε within a target
 *   ledger.ts    `privacy ledger`: every recorded release, with cumulative ε
 *   release.ts   `privacy release`: one agent's council delta clipped and noised, budget spent first
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
