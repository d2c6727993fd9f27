/**
 * The player's privacy floor: what a council's published policy may ask of this forge, at most.
 * The council sets each round's S and σ; the floor is set by the player's own settings, and a
 * policy outside it is refused before anything is trained, sent or spent:
 *
 *  - σ at least the player's own σ (`noise_multiplier`, default 8);
 *  - ε of one release at most RELEASE_SHARE (1/8) of an agent's lifetime ε (`agent_epsilon`):
 *    with the defaults (ε 8, δ 1e-5) one release may cost at most ε 1;
 *  - S within a factor CLIP_RANGE of the player's own S (default 1: S ∈ [0.001, 1000]): far
 *    outside it a release is all noise that float32 cannot hold (S = 1e38) or all zeros
 *    (S = 5e-324), and either would still be charged;
 *  - the noise σ·S at most MAX_NOISE_STD, so every released value stays a finite float32.
 */
import type { PrivacyConfig } from './privacy-config.js';
import { epsilonFor } from './rdp-accountant.js';

/** The share of an agent's lifetime ε one release may cost. */
export const RELEASE_SHARE = 1 / 8;
/** S may differ from the player's own S by at most this factor either way. */
export const CLIP_RANGE = 1000;
/** The largest noise standard deviation σ·S a release may carry. */
export const MAX_NOISE_STD = 1e6;

export interface PrivacyFloor {
  min_noise_multiplier: number;
  max_release_epsilon: number;
  clip_norm: { min: number; max: number };
  max_noise_std: number;
  delta: number;
}

export function privacyFloor(c: PrivacyConfig): PrivacyFloor {
  return {
    min_noise_multiplier: c.noiseMultiplier,
    max_release_epsilon: c.agentEpsilon * RELEASE_SHARE,
    clip_norm: { min: c.clipNorm / CLIP_RANGE, max: c.clipNorm * CLIP_RANGE },
    max_noise_std: MAX_NOISE_STD,
    delta: c.delta,
  };
}

/** ε of one release at σ (sample rate 1), from a fresh budget; Infinity for σ = 0. */
export function releaseEpsilon(sigma: number, delta: number): number {
  return sigma > 0 ? epsilonFor({ noiseMultiplier: sigma, sampleRate: 1, steps: 1, delta }).epsilon : Infinity;
}

const num = (x: number): string => String(Number(x.toPrecision(6)));

/** Why the council's policy is outside the floor (one line naming its value and the floor), or null. */
export function floorViolation(
  floor: PrivacyFloor,
  policy: { clipNorm: number; noiseMultiplier: number },
): string | null {
  const { clipNorm: s, noiseMultiplier: sigma } = policy;
  if (!(sigma >= floor.min_noise_multiplier))
    return `the council's σ = ${num(sigma)} is below this forge's privacy floor (σ ≥ ${num(floor.min_noise_multiplier)})`;
  const eps = releaseEpsilon(sigma, floor.delta);
  if (!(eps <= floor.max_release_epsilon))
    return `the council's σ = ${num(sigma)} costs ε ${Number.isFinite(eps) ? eps.toFixed(3) : '∞'} per release, above this forge's privacy floor (ε ≤ ${num(floor.max_release_epsilon)} per release at δ = ${floor.delta})`;
  if (!(s >= floor.clip_norm.min))
    return `the council's S = ${s} is below this forge's privacy floor (S ≥ ${num(floor.clip_norm.min)})`;
  if (!(s <= floor.clip_norm.max))
    return `the council's S = ${s} is above this forge's privacy floor (S ≤ ${num(floor.clip_norm.max)})`;
  if (!(sigma * s <= floor.max_noise_std))
    return `the council's σ·S = ${num(sigma * s)} is above this forge's privacy floor (noise σ·S ≤ ${num(floor.max_noise_std)})`;
  return null;
}
