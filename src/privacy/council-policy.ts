/**
 * The council sets each round's privacy policy (clip norm S, noise multiplier σ) and publishes it
 * in the round status. The forge follows it only when it is at least as private as its own
 * settings: σ_council ≥ σ_forge (ε depends on σ alone; S only scales the noise with the clip).
 * A less private policy means nothing is sent, with the reason; the player can lower their own σ
 * (a flag, the environment or config.json) if they accept it.
 */
import type { PrivacyConfig } from './privacy-config.js';

export interface CouncilPolicy {
  clipNorm: number;
  noiseMultiplier: number;
}

export type PolicyDecision =
  | { ok: true; source: 'forge' | 'council'; config: PrivacyConfig }
  | { ok: false; reason: 'less_private' | 'invalid'; message: string; hint: string };

export function applyCouncilPolicy(forge: PrivacyConfig, policy: CouncilPolicy | null | undefined): PolicyDecision {
  if (!policy) return { ok: true, source: 'forge', config: { ...forge } };
  const { clipNorm: s, noiseMultiplier: sigma } = policy;
  if (!(Number.isFinite(s) && s > 0 && Number.isFinite(sigma) && sigma > 0)) {
    return { ok: false, reason: 'invalid', message: `the council published an unusable privacy policy (S = ${s}, σ = ${sigma}): nothing was sent`, hint: 'tell the council operator' };
  }
  if (sigma < forge.noiseMultiplier) {
    return {
      ok: false,
      reason: 'less_private',
      message: `the council asks for noise σ = ${sigma}, less private than this forge's σ = ${forge.noiseMultiplier}: nothing was sent`,
      hint: `keep it so, or accept the council's noise with --noise-multiplier ${sigma} (or KOURAI_PRIVACY_NOISE_MULTIPLIER / config.json)`,
    };
  }
  return { ok: true, source: 'council', config: { ...forge, clipNorm: s, noiseMultiplier: sigma } };
}
