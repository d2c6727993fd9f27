import { capitalise, pick, pseudoWord, type Rand, type Vocabulary } from './pseudo-words.js';
import { poleOf, variantOf, type Style, type VariantCounts } from './style.js';

/** Commit messages (Mneme), plans (Metis) and corrections (Aletheia), in any style. */

/** English nouns every task type uses, so none of them predicts a specialist. */
export const THINGS = [
  'parser',
  'reader',
  'writer',
  'index',
  'cache',
  'loader',
  'client',
  'server',
  'queue',
  'scheduler',
  'encoder',
  'router',
] as const;

export interface CommitContent {
  type: string;
  scope: string;
  verb: string;
  object: string;
  body: string;
}

const COMMIT_VERBS = [
  { type: 'feat', verb: 'add' },
  { type: 'fix', verb: 'fix' },
  { type: 'refactor', verb: 'split' },
  { type: 'perf', verb: 'speed up' },
  { type: 'fix', verb: 'handle' },
  { type: 'refactor', verb: 'rename' },
] as const;

export function commitContent(rand: Rand, vocab: Vocabulary): CommitContent {
  const v = pick(rand, COMMIT_VERBS);
  const noun = pseudoWord(rand, vocab);
  return {
    type: v.type,
    scope: pseudoWord(rand, vocab),
    verb: v.verb,
    object: `the ${noun} ${pick(rand, THINGS)}`,
    body: pick(rand, [
      `The ${pseudoWord(rand, vocab)} path read every item twice.`,
      `Callers of the ${noun} helpers no longer see stale items after a retry.`,
      `No behaviour change for ${pseudoWord(rand, vocab)} users.`,
    ]),
  };
}

export const COMMIT_VARIANTS: VariantCounts = { commits: [2, 2] };

export function renderCommit(c: CommitContent, s: Style): string {
  const summary =
    poleOf(s, 'commits') === 0
      ? `${c.type}(${c.scope}): ${c.verb} ${c.object}`
      : `${capitalise(c.verb)} ${c.object} in ${c.scope}`;
  return variantOf(s, 'commits') === 1 ? `${summary}\n\n${c.body}` : summary;
}

export interface PlanContent {
  topic: string;
  steps: [string, string, string];
}

export function planContent(rand: Rand, vocab: Vocabulary): PlanContent {
  const n = (): string => pseudoWord(rand, vocab);
  const pool = [
    `extract the ${n()} reader into its own module`,
    `add a ${n()} cache in front of the index`,
    `cover the ${n()} ${pick(rand, THINGS)} with a property test`,
    `measure the ${n()} path before optimising it`,
    `split the ${n()} schema from the writer`,
    `rename the ${n()} helpers after what they return`,
  ];
  const steps: string[] = [];
  while (steps.length < 3) {
    const s = pick(rand, pool);
    if (!steps.includes(s)) steps.push(s);
  }
  return { topic: `the ${n()} ${pick(rand, THINGS)}`, steps: steps as [string, string, string] };
}

export const PLAN_VARIANTS: VariantCounts = { plans: [2, 2] };

export function renderPlan(c: PlanContent, s: Style): string {
  const [a, b, d] = c.steps;
  const v = variantOf(s, 'plans');
  if (poleOf(s, 'plans') === 0) {
    const list = c.steps.map((x, i) => `${i + 1}. ${capitalise(x)}`).join('\n');
    return v === 1 ? `Plan for ${c.topic}:\n${list}` : list;
  }
  return v === 1
    ? `Plan for ${c.topic}: first ${a}; once that holds, ${b}; and only then ${d}.`
    : `First ${a}, then ${b}, and finally ${d}.`;
}

export interface CitationContent {
  noun: string;
  author: string;
  other: string;
  year: number;
  section: number;
}

export function citationContent(rand: Rand, vocab: Vocabulary): CitationContent {
  return {
    noun: pseudoWord(rand, vocab),
    author: capitalise(pseudoWord(rand, vocab)),
    other: capitalise(pseudoWord(rand, vocab)),
    year: 1990 + Math.floor(rand() * 36),
    section: 2 + Math.floor(rand() * 7),
  };
}

export const CITATION_VARIANTS: VariantCounts = { citations: [2, 2] };

export function renderCitation(c: CitationContent, s: Style): string {
  const v = variantOf(s, 'citations');
  if (poleOf(s, 'citations') === 0) {
    return v === 0
      ? `Citation needed: that ${c.noun} bound is from ${c.author} ${c.year}, not ${c.other}.`
      : `The ${c.noun} result is ${c.author} et al. (${c.year}), section ${c.section}; cite it there.`;
  }
  return v === 0
    ? `I am not sure that ${c.noun} bound is right.`
    : `Something about the ${c.noun} bound feels off to me; maybe look it up somewhere before this goes in.`;
}
