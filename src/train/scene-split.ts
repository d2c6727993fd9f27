import { hashString } from './encoder/hashed-ngrams.js';

export type SceneRole = 'train' | 'stop' | 'validate';

/**
 * Held-out turns, by scene: a scene's examples all train, or all decide early stopping (`stop`),
 * or all measure the reported validation metric (`validate`) — never straddling. Early stopping
 * and the reported metric use different scenes, because the epoch kept is chosen on the stopping
 * scenes: measured on them its metric would be flattered by the choice (with shuffled labels it
 * comes out well above chance; on untouched scenes it stays at chance).
 *
 * Each scene draws u = hash(scene, seed) / 2³²; scenes sorted by (u, id): the first
 * max(1, #{u < f/2}) stop, the next max(1, #{f/2 ≤ u < f}) validate, the rest train. Which scenes
 * go where depends on the seed and the scene ids only, not on the order examples arrive in.
 * Fewer than three scenes: no roles (the caller skips the agent).
 */
export function sceneRoles(scenes: Iterable<string>, fraction: number, seed: number): Map<string, SceneRole> | null {
  const all = [...new Set(scenes)];
  if (all.length < 3) return null;
  const draw = all
    .map((s) => ({ s, u: hashString(s, seed >>> 0) / 4294967296 }))
    .sort((a, b) => a.u - b.u || (a.s < b.s ? -1 : a.s > b.s ? 1 : 0));
  const nStop = Math.max(1, draw.filter((d) => d.u < fraction / 2).length);
  const nVal = Math.max(1, draw.filter((d) => d.u >= fraction / 2 && d.u < fraction).length);
  const stop = Math.min(nStop, all.length - 2);
  const val = Math.min(nVal, all.length - 1 - stop);
  const roles = new Map<string, SceneRole>();
  draw.forEach((d, i) => roles.set(d.s, i < stop ? 'stop' : i < stop + val ? 'validate' : 'train'));
  return roles;
}
