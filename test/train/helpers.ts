import { BaseModel } from '../../src/train/base-model.js';
import { builtinBaseSpec, type BaseSpec } from '../../src/train/base-spec.js';
import { inputEncoder } from '../../src/train/encoder/inputs.js';
import type { Features } from '../../src/train/features.js';

/** A small base (same generator and layers, fewer features and units) for fast exact checks. */
export function smallSpec(dim = 64, hidden = 8): BaseSpec {
  const b = builtinBaseSpec();
  return { ...b, encoder: { kind: 'hashed-ngrams', version: 1, dim }, words: { ...b.words, dim }, hidden };
}

export function smallBase(
  dim = 64,
  hidden = 8,
): { base: BaseModel; encode: (t: string, prompt?: string | null) => Features } {
  const spec = smallSpec(dim, hidden);
  const base = new BaseModel(spec);
  const enc = inputEncoder(spec);
  return { base, encode: (t, prompt = null) => enc(t, prompt) };
}
