import type { Agent } from '../../format/agents.js';

/**
 * The planted preferences of the sample forge: what bond adapters (one player's taste) and the
 * council (the craft every player shares) should learn. Each preference is one pole of an axis
 * of form: early returns vs a single exit, annotations on every signature vs none, and so on.
 * A player holds at most one pole per personal axis; every player holds the craft poles.
 *
 * Preferences are patterns of form, not sentences: a proposal's identifiers and nouns come from
 * seeded pseudo-words, so a learner can only generalise to fresh words (`heldOutPairs`) by
 * learning the form.
 */

export const AXES = ['guard', 'types', 'names', 'comments', 'commits', 'plans', 'leftovers', 'citations'] as const;
export type Axis = (typeof AXES)[number];

export const PERSONAL_PREFERENCES = [
  'early-returns',
  'single-exit',
  'typed-signatures',
  'untyped-signatures',
  'descriptive-names',
  'short-names',
  'why-comments',
  'what-comments',
  'conventional-commits',
  'plain-commits',
  'numbered-steps',
  'prose-plans',
] as const;
export type PersonalPreference = (typeof PERSONAL_PREFERENCES)[number];

/** Craft: held by every player, so it is what the council should learn across forges. */
export const CRAFT_PREFERENCES = ['no-leftovers', 'cited-corrections'] as const;
export type CraftPreference = (typeof CRAFT_PREFERENCES)[number];

export type PreferenceId = PersonalPreference | CraftPreference;
/** The dispreferred craft poles: no player holds them. */
export type CraftOpposite = 'leftovers' | 'vague-corrections';
export type Pole = PreferenceId | CraftOpposite;

export interface AxisInfo {
  axis: Axis;
  /** Pole 0 and pole 1. For craft axes pole 0 is the craft every player holds. */
  poles: readonly [Pole, Pole];
  craft: boolean;
  /** The agents whose outputs show this axis (the first is where held-out pairs come from). */
  agents: readonly Agent[];
}

export const AXIS_INFO: Readonly<Record<Axis, AxisInfo>> = {
  guard: { axis: 'guard', poles: ['early-returns', 'single-exit'], craft: false, agents: ['techne'] },
  types: { axis: 'types', poles: ['typed-signatures', 'untyped-signatures'], craft: false, agents: ['techne'] },
  names: { axis: 'names', poles: ['descriptive-names', 'short-names'], craft: false, agents: ['techne'] },
  comments: { axis: 'comments', poles: ['why-comments', 'what-comments'], craft: false, agents: ['techne'] },
  commits: { axis: 'commits', poles: ['conventional-commits', 'plain-commits'], craft: false, agents: ['mneme'] },
  plans: { axis: 'plans', poles: ['numbered-steps', 'prose-plans'], craft: false, agents: ['metis'] },
  leftovers: { axis: 'leftovers', poles: ['no-leftovers', 'leftovers'], craft: true, agents: ['techne', 'dokimasia'] },
  citations: {
    axis: 'citations',
    poles: ['cited-corrections', 'vague-corrections'],
    craft: true,
    agents: ['aletheia'],
  },
};

/** What each preference means, for people (README, `synth --json`, error messages). */
export const PREFERENCE_TEXT: Readonly<Record<Pole, string>> = {
  'early-returns': 'guard clauses that return early; the happy path is not nested',
  'single-exit': 'one return at the end: conditions wrap the work, the result is collected',
  'typed-signatures': 'a type annotation on every parameter and every return type',
  'untyped-signatures': 'no annotations on signatures (inference, or types in a doc comment)',
  'descriptive-names': 'locals and parameters named for what they hold',
  'short-names': 'single-letter names in short scopes (a legend comment at most)',
  'why-comments': 'comments that say why (because, so, otherwise)',
  'what-comments': 'comments that narrate what the next line does',
  'conventional-commits': 'commit summaries as type(scope): imperative summary',
  'plain-commits': 'commit summaries as a plain sentence, no type prefix',
  'numbered-steps': 'plans as numbered steps, one per line',
  'prose-plans': 'plans as a short paragraph (first, then, finally)',
  'no-leftovers': 'craft: no debug prints, debugger statements, commented-out code or focused tests left in',
  leftovers: 'debug prints, debugger statements, commented-out code or it.only left in',
  'cited-corrections': 'craft: a correction names its source (author, year)',
  'vague-corrections': 'a correction that names no source',
};

export function isPersonalPreference(s: string): s is PersonalPreference {
  return (PERSONAL_PREFERENCES as readonly string[]).includes(s);
}

export function isPreferenceId(s: string): s is PreferenceId {
  return isPersonalPreference(s) || (CRAFT_PREFERENCES as readonly string[]).includes(s);
}

/** The axis a pole belongs to and its index (0 or 1) on it. */
export function axisOf(pole: Pole): { axis: Axis; index: 0 | 1 } {
  for (const a of AXES) {
    const i = AXIS_INFO[a].poles.indexOf(pole);
    if (i === 0 || i === 1) return { axis: a, index: i };
  }
  throw new RangeError(`unknown preference "${pole}"`);
}
