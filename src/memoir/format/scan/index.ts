/**
 * The fast path of reading memoir lines:
 *   canonical-line.ts  a validating scanner over the bytes of one canonical line
 *   recorded-at.ts     the `recorded_at` rule as a plain regular expression
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
