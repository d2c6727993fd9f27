import { hashString } from './encoder/hashed-ngrams.js';

/**
 * Validation by scene: a scene's examples are all in training or all in validation, never
 * straddling, so the validation metric measures turns the adapter has not seen. Which scenes
 * validate depends on the seed and the scene id only (not on the order examples come in).
 * At least one scene validates and one trains whenever there are two scenes.
 */
export function validationScenes(scenes: Iterable<string>, fraction: number, seed: number): Set<string> {
  const all = [...new Set(scenes)];
  const draw = all.map((s) => ({ s, u: hashString(s, seed >>> 0) / 4294967296 }));
  const val = new Set(draw.filter((d) => d.u < fraction).map((d) => d.s));
  if (all.length >= 2) {
    const byU = [...draw].sort((a, b) => a.u - b.u || (a.s < b.s ? -1 : 1));
    if (val.size === 0) val.add((byU[0] as { s: string }).s);
    if (val.size === all.length) val.delete((byU[byU.length - 1] as { s: string }).s);
  }
  return val;
}
