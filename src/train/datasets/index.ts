/**
 * Public human-preference datasets -> memoir lines, exactly as a Python host writes them
 * (python-line.ts). Each converter refuses a file that is not what it expects with a one-line
 * InvalidDataError (exit 5) naming the file (and line).
 *
 *   hh-rlhf.ts           Anthropic hh-rlhf: a person chose one of two assistant answers
 *   code-refinement.ts   CodeXGLUE code refinement: a developer revised a buggy Java method
 *   python-line.ts       a memoir line as the Python host writes it
 *   seeded-order.ts      a fixed coin per pair: which answer is listed first
 *   held-out.ts          held-out pairwise accuracy by k-fold over conversations, beside the trivial rules
 *   local.ts             where the bench and tests find them: $KOURAI_DATASETS
 */
export { convertHhRlhf, type Converted } from './hh-rlhf.js';
export { convertCodeRefinement } from './code-refinement.js';
export { pyLine, type PyEntry } from './python-line.js';
