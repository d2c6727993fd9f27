import { BaseModel } from '../../src/train/base-model.js';
import { builtinBaseSpec, type BaseSpec } from '../../src/train/base-spec.js';
import { HashedEncoder } from '../../src/train/encoder/hashed-ngrams.js';
import type { Features } from '../../src/train/features.js';

/** A small base (same generator and layers, fewer features and units) for fast exact checks. */
export function smallSpec(dim = 64, hidden = 8): BaseSpec {
  const b = builtinBaseSpec();
  return { ...b, encoder: { kind: 'hashed-ngrams', version: 1, dim }, hidden };
}

export function smallBase(dim = 64, hidden = 8): { base: BaseModel; encode: (t: string) => Features } {
  const base = new BaseModel(smallSpec(dim, hidden));
  const enc = new HashedEncoder(dim);
  return { base, encode: (t) => enc.encode(t) };
}
