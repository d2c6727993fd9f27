/**
 * Seeded pseudo-words for the sample forge's identifiers and nouns, from two vocabularies that
 * can never share a word:
 *   - `train`: what synthesised memoirs use;
 *   - `heldOut`: used only by `heldOutPairs`, so a quality test measures whether a learner picked
 *     up a preference as a pattern of form, on words it never saw.
 * A word is 2–3 consonant-vowel syllables. The vocabularies draw their consonants from disjoint
 * sets, and a CV string splits into syllables one way only, so no held-out word (nor any of its
 * syllables) can appear in a training word.
 */

export type Vocabulary = 'train' | 'heldOut';

const VOWELS = ['a', 'e', 'i', 'o', 'u'] as const;
export const CONSONANTS: Readonly<Record<Vocabulary, readonly string[]>> = {
  train: ['b', 'd', 'g', 'k', 'l', 'm', 'n', 'p', 'r', 's', 't'],
  heldOut: ['j', 'v', 'w', 'x', 'z'],
};

export type Rand = () => number;

export function pick<T>(rand: Rand, xs: readonly T[]): T {
  return xs[Math.floor(rand() * xs.length)] as T;
}

/** Integer in [lo, hi]. */
export function between(rand: Rand, lo: number, hi: number): number {
  return lo + Math.floor(rand() * (hi - lo + 1));
}

/** One lower-case pseudo-word (2–3 syllables) from the vocabulary. */
export function pseudoWord(rand: Rand, vocab: Vocabulary): string {
  const n = rand() < 0.7 ? 2 : 3;
  let w = '';
  for (let i = 0; i < n; i++) w += pick(rand, CONSONANTS[vocab]) + pick(rand, VOWELS);
  return w;
}

export function capitalise(w: string): string {
  return w.charAt(0).toUpperCase() + w.slice(1);
}

/** camelCase of words: `kaboRimu`. */
export function camel(words: readonly string[]): string {
  return words.map((w, i) => (i === 0 ? w : capitalise(w))).join('');
}

/** PascalCase of words: `KaboRimu`. */
export function pascal(words: readonly string[]): string {
  return words.map(capitalise).join('');
}

/** Whether a lower-case word is a pseudo-word made only of this vocabulary's syllables. */
export function isVocabularyWord(word: string, vocab: Vocabulary): boolean {
  if (word.length < 4 || word.length % 2 !== 0) return false;
  const cs = new Set(CONSONANTS[vocab]);
  for (let i = 0; i < word.length; i += 2) {
    if (!cs.has(word.charAt(i)) || !(VOWELS as readonly string[]).includes(word.charAt(i + 1))) return false;
  }
  return true;
}
