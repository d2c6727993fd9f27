import type { Axis } from './catalogue.js';
import { camel, pick, pseudoWord, type Rand, type Vocabulary } from './pseudo-words.js';

/**
 * What reviewers say: Kallos's style edits (toward either pole of an axis), Aidos's slop calls
 * (always toward pole 0 of the axes she polices) and the positions of a Kallos–Aidos
 * disagreement. Whether the player takes them depends on the player's profile.
 */

export interface ReviewContent {
  fn: string;
  helper: string;
  short: string;
  long: string;
  noun: string;
  scope: string;
}

export function reviewContent(rand: Rand, vocab: Vocabulary): ReviewContent {
  const noun = pseudoWord(rand, vocab);
  return {
    fn: camel([pick(rand, ['load', 'merge', 'rank', 'collect']), noun, pseudoWord(rand, vocab)]),
    helper: camel([pick(rand, ['sort', 'index', 'order']), pseudoWord(rand, vocab)]),
    short: pick(rand, ['xs', 'n', 'r', 'k']),
    long: camel([noun, pick(rand, ['items', 'count', 'list'])]),
    noun,
    scope: pseudoWord(rand, vocab),
  };
}

/** Axes Kallos edits, and the text of an edit toward each pole. */
export const KALLOS_AXES = [
  'guard',
  'types',
  'names',
  'comments',
  'commits',
  'plans',
  'leftovers',
] as const satisfies readonly Axis[];
export type KallosAxis = (typeof KALLOS_AXES)[number];

export function kallosEdit(c: ReviewContent, axis: KallosAxis, toward: 0 | 1): string {
  const texts: Record<KallosAxis, readonly [string, string]> = {
    guard: [
      `Turn the nested ifs in \`${c.fn}\` into early returns.`,
      `Give \`${c.fn}\` a single exit: collect into \`result\` and return once.`,
    ],
    types: [
      `Annotate every parameter and the return type of \`${c.fn}\`.`,
      `Drop the annotations on \`${c.fn}\`; inference already knows them.`,
    ],
    names: [
      `Rename \`${c.short}\` to \`${c.long}\` in \`${c.fn}\`.`,
      `Shorten \`${c.long}\` to \`${c.short}\`; the scope is three lines.`,
    ],
    comments: [
      `Replace the comment above \`${c.helper}\` with why it is called there.`,
      `Add a comment saying what each step of \`${c.fn}\` does.`,
    ],
    commits: [
      `Prefix the commit summary with its type and scope, e.g. \`fix(${c.scope}):\`.`,
      'Write the commit summary as a plain sentence, without a type prefix.',
    ],
    plans: [
      `Number the steps of the ${c.noun} plan, one per line.`,
      `Write the ${c.noun} plan as one short paragraph.`,
    ],
    leftovers: [
      `Remove the leftover \`console.log\` from \`${c.fn}\`.`,
      `Keep the \`console.log\` in \`${c.fn}\` for now; it helps debugging.`,
    ],
  };
  return texts[axis][toward];
}

/** Axes Aidos polices; her call always asks for pole 0. */
export const AIDOS_AXES = ['guard', 'names', 'comments', 'leftovers'] as const satisfies readonly Axis[];
export type AidosAxis = (typeof AIDOS_AXES)[number];

export function aidosFlag(c: ReviewContent, axis: AidosAxis): string {
  const texts: Record<AidosAxis, string> = {
    guard: `The happy path of \`${c.fn}\` is buried under nested conditions. Flatten it.`,
    names: `\`${c.fn}\` is all single letters. Nobody will read that twice.`,
    comments: `That comment restates \`${c.helper}\`. Slop. Cut it or say why.`,
    leftovers: `A leftover debug line in \`${c.fn}\`. Cut it before anyone sees it.`,
  };
  return texts[axis];
}

/** A Kallos–Aidos disagreement about one axis: Aidos argues for pole 0, Kallos for pole 1. */
export const DISAGREEMENT_AXES = ['comments', 'names'] as const satisfies readonly Axis[];
export type DisagreementAxis = (typeof DISAGREEMENT_AXES)[number];

export function disagreementPositions(c: ReviewContent, axis: DisagreementAxis): { aidos: string; kallos: string } {
  if (axis === 'comments') {
    return {
      aidos: `Aidos: cut the comment above \`${c.helper}\`; it restates the code.`,
      kallos: `Kallos: keep the comment above \`${c.helper}\`; it helps a newcomer.`,
    };
  }
  return {
    aidos: `Aidos: \`${c.short}\` says nothing; call it \`${c.long}\`.`,
    kallos: `Kallos: keep \`${c.short}\`; a short name is idiomatic in a three-line scope.`,
  };
}
