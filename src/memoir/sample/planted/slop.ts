import { mulberry32 } from '../../../runtime/seeded-random.js';
import { nameSeed } from './profiles.js';
import { camel, pick, pseudoWord, type Rand, type Vocabulary } from './pseudo-words.js';
import { THINGS } from './render-text.js';

/**
 * Slop for Aidos to catch: passages that carry a slop sentence ("Let's delve into the rich
 * tapestry of it.") and clean passages of the same length that do not. Every player flags slop
 * (it is craft, not taste), but no player meets all of it:
 *   - slop sentences come in families (openers, hedged importance, "delve", "unlock", buzzwords,
 *     closers, cheerleading, "journey"), each a template whose slots are filled from word lists,
 *     so the pool is the cross product and every phrase shares its frame and slot words with its
 *     family (what a learner can generalise from);
 *   - a seeded rule holds out a quarter of every family's phrases for evaluation; forges only
 *     ever write the rest (`trainingSlop`);
 *   - each forge meets only a few families (`slopFamiliesOf`), so one forge cannot learn them all
 *     while a federation of forges can.
 * Evaluation passages (`slopProbe`) use only held-out phrases, and the held-out pseudo-word
 * vocabulary for everything around them: no test passage, and no test slop sentence, appears in any
 * forge's memoir. A clean passage's second sentence is drawn to the length of a slop sentence, so
 * length tells little.
 */

export interface SlopFamily {
  name: string;
  slots: readonly (readonly string[])[];
  render: (words: readonly string[]) => string;
}

const w = (ws: readonly string[], i: number): string => ws[i] as string;

export const SLOP_FAMILIES: readonly SlopFamily[] = [
  {
    name: 'opener',
    slots: [
      ['fast-paced', 'ever-evolving', 'ever-changing', 'rapidly shifting', 'hyper-connected', 'dynamic'],
      ['world', 'landscape', 'era', 'ecosystem', 'climate'],
    ],
    render: (x) => `In today's ${w(x, 0)} ${w(x, 1)}, this matters more than ever.`,
  },
  {
    name: 'importance',
    slots: [
      ['important', 'crucial', 'essential', 'vital', 'paramount'],
      ['note', 'remember', 'highlight', 'emphasize', 'recognize', 'underscore'],
    ],
    render: (x) => `It is ${w(x, 0)} to ${w(x, 1)} that every detail counts.`,
  },
  {
    name: 'delve',
    slots: [
      ['delve', 'dive', 'venture', 'embark'],
      ['rich', 'intricate', 'vibrant', 'multifaceted', 'nuanced'],
      ['tapestry', 'realm', 'labyrinth', 'symphony'],
    ],
    render: (x) => `Let's ${w(x, 0)} into the ${w(x, 1)} ${w(x, 2)} of it.`,
  },
  {
    name: 'unlock',
    slots: [
      ['unlock', 'unleash', 'harness', 'maximize', 'supercharge'],
      ['potential', 'power', 'promise', 'value', 'capabilities'],
    ],
    render: (x) => `This will ${w(x, 0)} the full ${w(x, 1)} of your code.`,
  },
  {
    name: 'buzzwords',
    slots: [
      ['seamless', 'robust', 'cutting-edge', 'game-changing', 'holistic', 'best-in-class'],
      ['scalable', 'innovative', 'transformative', 'future-proof', 'next-generation'],
    ],
    render: (x) => `It is now a ${w(x, 0)}, ${w(x, 1)} solution.`,
  },
  {
    name: 'closer',
    slots: [
      ['In conclusion', 'Ultimately', 'In summary', 'All in all', 'At the end of the day'],
      ['testament', 'game-changer', 'cornerstone', 'powerhouse', 'beacon'],
    ],
    render: (x) => `${w(x, 0)}, this change is a true ${w(x, 1)}.`,
  },
  {
    name: 'cheerleading',
    slots: [
      ['Great question', 'Absolutely', 'Certainly', 'Of course', 'What a fantastic idea'],
      ['explanation', 'overview', 'breakdown', 'walkthrough', 'deep dive'],
    ],
    render: (x) => `${w(x, 0)}! I hope this ${w(x, 1)} helps.`,
  },
  {
    name: 'journey',
    slots: [
      ['transformative', 'seamless', 'exciting', 'remarkable', 'empowering'],
      ['journey', 'adventure', 'odyssey', 'voyage', 'experience'],
    ],
    render: (x) => `Embark on a ${w(x, 0)} ${w(x, 1)} with this release.`,
  },
];

export interface SlopPhrase {
  family: number;
  text: string;
}

/** Every phrase of a family: the cross product of its slots, in a fixed order. */
function familyPhrases(f: SlopFamily): string[] {
  let combos: string[][] = [[]];
  for (const slot of f.slots) combos = combos.flatMap((c) => slot.map((x) => [...c, x]));
  return combos.map((c) => f.render(c));
}

/** The fraction of each family's phrases held out for evaluation. */
export const HELD_OUT_SHARE = 0.25;

/**
 * The seeded split of the pool: within each family, phrases ordered by a hash of (seed, phrase);
 * the first quarter is held out, the rest is what forges may write. Every family has both parts.
 */
export function slopSplit(seed: number): { training: SlopPhrase[]; heldOut: SlopPhrase[] } {
  const training: SlopPhrase[] = [];
  const heldOut: SlopPhrase[] = [];
  SLOP_FAMILIES.forEach((f, family) => {
    const ranked = familyPhrases(f)
      .map((text) => ({ text, h: nameSeed(`slop-split/${seed}/${text}`) }))
      .sort((a, b) => a.h - b.h || (a.text < b.text ? -1 : 1));
    const cut = Math.ceil(ranked.length * HELD_OUT_SHARE);
    ranked.forEach((p, i) => (i < cut ? heldOut : training).push({ family, text: p.text }));
  });
  return { training, heldOut };
}

/** Families a forge's player ever meets. */
export const FAMILIES_PER_FORGE = 2;

/** The slop families forge `k` of a seed meets: `FAMILIES_PER_FORGE` distinct ones, by a seeded rule. */
export function slopFamiliesOf(seed: number, k: number): number[] {
  const rand = mulberry32(nameSeed(`slop-forge/${seed}/${k}`));
  const idx = SLOP_FAMILIES.map((_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [idx[i], idx[j]] = [idx[j] as number, idx[i] as number];
  }
  return idx.slice(0, FAMILIES_PER_FORGE).sort((a, b) => a - b);
}

/** What a forge's sample memoir holds of slop: the training phrases of its families, and how many slop reviews a session has. */
export interface SlopShard {
  phrases: readonly string[];
  perSession: number;
}

export function slopShard(seed: number, k: number, perSession: number): SlopShard {
  const fams = new Set(slopFamiliesOf(seed, k));
  return {
    phrases: slopSplit(seed)
      .training.filter((p) => fams.has(p.family))
      .map((p) => p.text),
    perSession,
  };
}

const CONTENT: readonly ((fn: string, n: string, t: string, x: string) => string)[] = [
  (fn, n, t, x) => `\`${fn}\` reads each ${n} ${t} and keeps the ${x} order.`,
  (_fn, n, t, x) => `The ${n} ${t} now skips empty ${x} rows.`,
  (fn, n) => `We moved the ${n} check into \`${fn}\`.`,
  (fn, n) => `\`${fn}\` returns early when the ${n} list is empty.`,
  (_fn, n, _t, x) => `The ${n} cache is cleared after each ${x} run.`,
  (_fn, n, t, x) => `Errors from the ${n} ${t} now name the ${x} file.`,
  (fn, n, t) => `The ${t} calls \`${fn}\` once per ${n} batch.`,
  (_fn, n, t, x) => `A ${n} ${t} with no ${x} entry is left as it was.`,
];

function contentSentence(rand: Rand, vocab: Vocabulary, not = -1): { text: string; template: number } {
  let template = Math.floor(rand() * CONTENT.length);
  if (template === not) template = (template + 1) % CONTENT.length;
  const n = pseudoWord(rand, vocab);
  const fn = camel([pick(rand, ['load', 'merge', 'rank', 'collect', 'parse']), n, pseudoWord(rand, vocab)]);
  const make = CONTENT[template] as (typeof CONTENT)[number];
  return { text: make(fn, n, pick(rand, THINGS), pseudoWord(rand, vocab)), template };
}

/**
 * A passage: a content sentence and a second sentence, in either order. With `slop`, the second
 * sentence is that slop phrase; without, another content sentence, the closest in length to
 * `lengthLike` of a few drawn (so a passage's length says little about whether it is slop).
 */
export function slopPassage(rand: Rand, vocab: Vocabulary, slop: string | null, lengthLike: string): string {
  const first = contentSentence(rand, vocab);
  let second = slop;
  if (second === null) {
    let best = '';
    for (let i = 0; i < 6; i++) {
      const c = contentSentence(rand, vocab, first.template).text;
      if (best === '' || Math.abs(c.length - lengthLike.length) < Math.abs(best.length - lengthLike.length)) best = c;
    }
    second = best;
  }
  return rand() < 0.5 ? `${first.text} ${second}` : `${second} ${first.text}`;
}

/** What Aidos says when a passage is put to her: the text her adapter is scored on. */
export function slopCall(passage: string): string {
  return `Slop check: ${passage}`;
}

/** One review of a forge: a passage from its shard (slop about half the time) and whether it is slop. */
export function slopReview(rand: Rand, shard: SlopShard): { text: string; slop: boolean } {
  const slop = rand() < 0.5;
  const phrase = pick(rand, shard.phrases);
  return { text: slopCall(slopPassage(rand, 'train', slop ? phrase : null, phrase)), slop };
}

/**
 * Held-out evaluation: n of Aidos's calls (half slop, families in turn) made only of held-out
 * phrases and held-out pseudo-words. Same seed, same probe.
 */
export function slopProbe(seed: number, n: number): { text: string; slop: boolean }[] {
  const { heldOut } = slopSplit(seed);
  const byFamily = SLOP_FAMILIES.map((_, f) => heldOut.filter((p) => p.family === f).map((p) => p.text));
  const rand = mulberry32(nameSeed(`slop-probe/${seed}`));
  const out: { text: string; slop: boolean }[] = [];
  for (let i = 0; i < n; i++) {
    // pairs of one slop and one clean passage, the slop families in turn
    const slop = i % 2 === 0;
    const phrase = pick(rand, byFamily[Math.floor(i / 2) % byFamily.length] as string[]);
    out.push({ text: slopCall(slopPassage(rand, 'heldOut', slop ? phrase : null, phrase)), slop });
  }
  return out;
}
