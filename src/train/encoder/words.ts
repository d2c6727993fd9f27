import { fmix32 } from '../counter-random.js';
import type { Features } from '../features.js';
import { hashString } from './hashed-ngrams.js';

/**
 * The word block of the base's inputs (base spec `words`, version 1): which words a text uses, as
 * written (lower-cased), where the hashed n-gram block keeps only a closed keyword list and turns
 * every other word into its shape. Words are runs of letters, digits, `_` and `'`; each distinct
 * word sets one hashed bucket to ±1 (binary: a word said twice says no more), then the block is
 * L2-normalised on its own, so a long text does not drown the n-grams or the n-grams the words.
 * Only the adapters' paths read it: the frozen projection has no columns for it.
 */
const F_WORD = 0x4b1d0c75;
const WORD = /[\p{L}\p{N}_']+/gu;

/** The block's entries, indices in [0, dim) ascending. */
export function wordFeatures(text: string, dim: number): Features {
  const seen = new Set<string>();
  const bucket = new Map<number, number>();
  for (const m of text.toLowerCase().matchAll(WORD)) {
    const w = m[0].replace(/^'+|'+$/g, '');
    if (w === '' || seen.has(w)) continue;
    seen.add(w);
    const h = fmix32(hashString(w, F_WORD));
    const j = h & (dim - 1);
    bucket.set(j, (bucket.get(j) ?? 0) + (h >>> 31 ? -1 : 1));
  }
  const keys = [...bucket.keys()].filter((j) => bucket.get(j) !== 0).sort((a, b) => a - b);
  const idx = Int32Array.from(keys);
  const val = new Float64Array(keys.length);
  let s = 0;
  keys.forEach((j, k) => {
    const v = bucket.get(j) as number;
    val[k] = v;
    s += v * v;
  });
  const inv = s > 0 ? 1 / Math.sqrt(s) : 0;
  for (let k = 0; k < val.length; k++) val[k] = (val[k] as number) * inv;
  return { idx, val };
}
