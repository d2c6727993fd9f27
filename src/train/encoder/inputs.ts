import { inputBlocks, type BaseSpec } from '../base-spec.js';
import type { Features } from '../features.js';
import { HashedEncoder } from './hashed-ngrams.js';
import { structureFeatures } from './structure.js';
import { wordFeatures } from './words.js';

/**
 * The base's input vector x for a text (and the prompt it answers, when the host gave one):
 * the hashed n-grams (L2-normalised), the standardised structure features, and, over an
 * embeddings base, the text's embedding (L2-normalised), then the words (L2-normalised on their
 * own). Sparse, indices ascending.
 */
export type InputEncoder = (text: string, prompt: string | null, embedding?: ArrayLike<number> | null) => Features;

export function inputEncoder(spec: BaseSpec): InputEncoder {
  const hashed = new HashedEncoder(spec.encoder.dim);
  const blocks = inputBlocks(spec);
  const semanticDim = spec.semantic?.dim ?? 0;
  return (text, prompt, embedding) => {
    const s = structureFeatures(text, prompt);
    if (semanticDim > 0 && (!embedding || embedding.length !== semanticDim))
      throw new RangeError(
        `the base takes ${semanticDim}-dimensional embeddings, got ${embedding ? embedding.length : 'none'}`,
      );
    let nnzS = 0;
    for (let k = 0; k < s.length; k++) if (s[k] !== 0) nnzS++;
    const words = wordFeatures(text, spec.words.dim);
    const nnzW = words.idx.length;
    const { idx, val } = hashed.encode(text, nnzS + semanticDim + nnzW);
    let o = idx.length - nnzS - semanticDim - nnzW;
    for (let k = 0; k < s.length; k++) {
      if (s[k] === 0) continue;
      idx[o] = blocks.structure + k;
      val[o++] = s[k] as number;
    }
    if (semanticDim > 0 && embedding) {
      let ss = 0;
      for (let j = 0; j < semanticDim; j++) ss += (embedding[j] as number) * (embedding[j] as number);
      const inv = ss > 0 ? 1 / Math.sqrt(ss) : 0;
      for (let j = 0; j < semanticDim; j++) {
        idx[o] = blocks.semantic + j;
        val[o++] = (embedding[j] as number) * inv;
      }
    }
    for (let k = 0; k < nnzW; k++) {
      idx[o] = blocks.words + (words.idx[k] as number);
      val[o++] = words.val[k] as number;
    }
    return { idx, val };
  };
}
