/**
 * The wire council and forge both speak (neither side imports the other):
 *   wire.ts          the protocol's documents (zod), its version and limits
 *   cohort.ts        each round's cohort (exactly K, or Poisson at rate K/N), and the cohort
 *                    bound: the f a robust rule must tolerate, a hypergeometric tail
 *   norm-bound.ts    the largest norm a clipped, noised update may have
 *   public-init.ts   every agent's round-0 global: seeded, public, derived by anyone
 *   round-key.ts     `<council key>#<round>`: ledger rows, noise derivation, release documents
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
