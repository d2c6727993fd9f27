/**
 * The council sets each round's privacy policy (clip norm S, noise multiplier σ) and publishes it
 * in the round status; a forge that federates clips and noises exactly as published — an update
 * with any other S or σ would be refused (422 privacy_policy_violation). What protects the player
 * is the Whisper Limit (the ε budgets), not σ: each release is charged at the council's σ, and an
 * agent whose budget cannot afford one more release at that σ stays silent (budget.ts). A policy
 * no budget can afford (σ = 0: no noise) or that makes no sense is refused outright, with the
 * reason. Before any of that, the player's privacy floor (privacy-floor.ts) binds: a policy asking
 * for less noise, a costlier release or an absurd S than the player's settings allow is refused.
 * The forge's own σ and S apply where no council decides: `kourai privacy release` by hand.
 */
import { epsilonFor } from './rdp-accountant.js';
import type { PrivacyConfig } from './privacy-config.js';
import { ROUND_SAMPLE_RATE } from './budget.js';
import { floorViolation, privacyFloor } from './privacy-floor.js';

export interface CouncilPolicy {
  clipNorm: number;
  noiseMultiplier: number;
}

export type PolicyDecision =
  | { ok: true; source: 'forge' | 'council'; config: PrivacyConfig }
  | { ok: false; reason: 'unaffordable' | 'invalid' | 'floor'; message: string; hint: string };

export function applyCouncilPolicy(forge: PrivacyConfig, policy: CouncilPolicy | null | undefined): PolicyDecision {
  if (!policy) return { ok: true, source: 'forge', config: { ...forge } };
  const { clipNorm: s, noiseMultiplier: sigma } = policy;
  if (!(Number.isFinite(s) && s > 0 && Number.isFinite(sigma) && sigma >= 0)) {
    return {
      ok: false,
      reason: 'invalid',
      message: `the council published an unusable privacy policy (S = ${s}, σ = ${sigma}): nothing was sent`,
      hint: 'tell the council operator',
    };
  }
  // The player's floor binds first: whatever the council asks, nothing weaker is followed.
  const below = floorViolation(privacyFloor(forge), policy);
  if (below) {
    return {
      ok: false,
      reason: 'floor',
      message: `${below}: nothing was trained, sent or spent`,
      hint: "the floor follows this forge's privacy settings (noise_multiplier, agent_epsilon, clip_norm in config.json); ask the council operator for a policy inside it",
    };
  }
  const perRound = sigma > 0 ? roundCost(sigma, forge.delta) : Infinity;
  if (!(perRound <= Math.min(forge.agentEpsilon, forge.forgeEpsilon))) {
    return {
      ok: false,
      reason: 'unaffordable',
      message: `the council asks for noise σ = ${sigma}: one release costs ε ${Number.isFinite(perRound) ? perRound.toFixed(3) : '∞'} at δ = ${forge.delta.toExponential()}, more than the Whisper Limit allows (ε ${Math.min(forge.agentEpsilon, forge.forgeEpsilon)}): nothing was sent`,
      hint: 'kourai whisper shows the budgets; ask the council operator for a larger σ',
    };
  }
  return { ok: true, source: 'council', config: { ...forge, clipNorm: s, noiseMultiplier: sigma } };
}

/** ε of a single release at σ (q = 1), from a fresh budget. */
export function roundCost(sigma: number, delta: number): number {
  return epsilonFor({ noiseMultiplier: sigma, sampleRate: ROUND_SAMPLE_RATE, steps: 1, delta }).epsilon;
}
