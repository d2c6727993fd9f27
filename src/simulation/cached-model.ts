import { BaseModel } from '../train/base-model.js';
import type { BaseSpec } from '../train/base-spec.js';
import { inputEncoder } from '../train/encoder/inputs.js';
import type { Features } from '../train/features.js';

/**
 * The frozen base and encoder as a simulation uses them: a forge's texts recur in every round and
 * every cell, so each text is encoded once (one Features object per text) and its frozen
 * projection W0·x + b0 computed once, keyed by that object. Both caches are bounded (cleared when
 * full): a thousand forges' texts would otherwise stay in memory for the whole run.
 */
const MAX_TEXTS = 60_000;

export class CachedBase extends BaseModel {
  private readonly z0 = new WeakMap<Features, Float64Array>();

  override project(x: Features, out: Float64Array): void {
    const hit = this.z0.get(x);
    if (hit) {
      out.set(hit);
      return;
    }
    super.project(x, out);
    this.z0.set(x, Float64Array.from(out));
  }
}

export function cachedEncoder(spec: BaseSpec): (text: string) => Features {
  const enc = inputEncoder(spec);
  let cache = new Map<string, Features>();
  return (t) => {
    let f = cache.get(t);
    if (!f) {
      if (cache.size >= MAX_TEXTS) cache = new Map();
      f = enc(t, null);
      cache.set(t, f);
    }
    return f;
  };
}
