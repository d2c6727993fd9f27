import type { Agent } from '../../format/agents.js';
import { pick, pseudoWord, type Rand, type Vocabulary } from './pseudo-words.js';
import { THINGS } from './render-text.js';

/**
 * Task types of the sample forge, the specialist Hephaestus routes each to, and the player's
 * task descriptions (private `task_description` entries): short texts from varied templates so
 * a routing head can learn which words ask for which specialist ("write tests for the parser"
 * asks for Dokimasia) while the nouns (pseudo-words, shared English nouns) predict nothing.
 */

export const TASK_TYPES = ['plan', 'code', 'test', 'style_review', 'commit', 'slop_review', 'fact_check'] as const;
export type TaskType = (typeof TASK_TYPES)[number];
/** The pipeline's tasks (Metis → Techne → Dokimasia → Kallos → Mneme), drawn by pickTask. */
export const PIPELINE_TASK_TYPES = [
  'plan',
  'code',
  'test',
  'style_review',
  'commit',
] as const satisfies readonly TaskType[];
/** Reading tasks, for Aidos (slop) and Aletheia (claims and sources): synth.ts draws them from a stream of their own. */
export const READING_TASK_TYPES = ['slop_review', 'fact_check'] as const satisfies readonly TaskType[];

export const SPECIALIST: Readonly<Record<TaskType, Agent>> = {
  plan: 'metis',
  code: 'techne',
  test: 'dokimasia',
  style_review: 'kallos',
  commit: 'mneme',
  slop_review: 'aidos',
  fact_check: 'aletheia',
};

/** How often each task type comes up (code-heavy, as forges are). */
const TASK_WEIGHTS: readonly (readonly [TaskType, number])[] = [
  ['code', 0.3],
  ['test', 0.2],
  ['commit', 0.2],
  ['plan', 0.15],
  ['style_review', 0.15],
];

export function pickTask(rand: Rand): TaskType {
  let r = rand();
  for (const [t, w] of TASK_WEIGHTS) {
    if (r < w) return t;
    r -= w;
  }
  return 'code';
}

const TEMPLATES: Readonly<Record<TaskType, readonly ((n: string, t: string) => string)[]>> = {
  plan: [
    (n, t) => `plan the ${n} ${t} migration`,
    (n, t) => `outline how to split the ${n} ${t}`,
    (n, t) => `sketch the steps to move the ${n} ${t} to a new schema`,
    (n, t) => `decide the order of work for the ${n} ${t}`,
  ],
  code: [
    (n, t) => `implement the ${n} ${t}`,
    (n, t) => `refactor the ${n} ${t} so it streams`,
    (n, t) => `fix the off-by-one in the ${n} ${t}`,
    (n, t) => `add a retry to the ${n} ${t}`,
    (n, t) => `make the ${n} ${t} faster`,
  ],
  test: [
    (n, t) => `write tests for the ${n} ${t}`,
    (n, t) => `add a regression test for the ${n} ${t}`,
    (n, t) => `cover the ${n} ${t} with property tests`,
    (n, t) => `check with a test that the ${n} ${t} handles empty input`,
  ],
  style_review: [
    (n, t) => `review the naming in the ${n} ${t}`,
    (n, t) => `tidy the style of the ${n} ${t}`,
    (n, t) => `check the ${n} ${t} for readability`,
    (n, t) => `review the comments in the ${n} ${t}`,
  ],
  commit: [
    (n, t) => `write the commit message for the ${n} ${t} change`,
    (n, t) => `summarise the ${n} ${t} work as a commit`,
    (n, t) => `commit the ${n} ${t} fix with a good message`,
  ],
  slop_review: [
    (n, t) => `does the ${n} ${t} description read like slop`,
    (n, t) => `flag the filler in the ${n} ${t} notes`,
    (n, t) => `check the ${n} ${t} docs for generic boilerplate`,
    (n, t) => `is the ${n} ${t} summary machine-written fluff`,
  ],
  fact_check: [
    (n, t) => `check the sources cited in the ${n} ${t} notes`,
    (n, t) => `verify the claims in the ${n} ${t} docs`,
    (n, t) => `is the reference in the ${n} ${t} comment real`,
    (n, t) => `fact-check the ${n} ${t} benchmark figures`,
  ],
};

export function taskDescription(rand: Rand, task: TaskType, vocab: Vocabulary): string {
  return pick(rand, TEMPLATES[task])(pseudoWord(rand, vocab), pick(rand, THINGS));
}
