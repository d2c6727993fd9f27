/**
 * Public human-preference datasets -> memoir lines, exactly as a Python host writes them
 * (python-line.ts). Each converter refuses a file that is not what it expects with a one-line
 * InvalidDataError (exit 5) naming the file (and line).
 *
 *   hh-rlhf.ts           Anthropic hh-rlhf: a person chose one of two assistant answers
 *   code-refinement.ts   CodeXGLUE code refinement: a developer revised a buggy Java method
 *   local.ts             where the bench and tests find them: $KOURAI_DATASETS
 */
export { convertHhRlhf, type Converted } from './hh-rlhf.js';
export { convertCodeRefinement } from './code-refinement.js';
export { pyLine, type PyEntry } from './python-line.js';
