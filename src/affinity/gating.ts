import { tierMin, tierOf, tierRank, type TierName } from './affinity.js';
import { affinity as fmtAffinity } from '../format.js';

/**
 * Whether `kourai feedback` may ask the player to rate an agent's proposal. Kourai does not nag:
 *
 * 1. Affinity: the player's affinity with the agent must have reached `minTier`
 *    (default `familiar`, 0.15: about eight good interactions).
 * 2. Cooldown: at least `cooldown` entries of that agent (default 5) since its last feedback (an
 *    entry carrying a `likert` rating) or since the player last skipped a prompt for it.
 *    Each consecutive skip doubles the cooldown (5, 10, 20, 40, capped at `maxCooldown` = 80);
 *    an answered prompt resets the back-off.
 *
 * A forge that never rated an agent and never skipped passes the cooldown. `--force` bypasses both.
 */
export interface GatingPolicy {
  minTier: TierName;
  cooldown: number;
  maxCooldown: number;
}

export const DEFAULT_POLICY: GatingPolicy = { minTier: 'familiar', cooldown: 5, maxCooldown: 80 };

export interface FeedbackHistory {
  affinity: number;
  /**
   * Entries of the agent since its last feedback or skip, counted up to the required cooldown;
   * null when there was neither (the cooldown does not apply).
   */
  entriesSince: number | null;
  /** What stopped the count: the last feedback, the last skip, or nothing found. */
  since: 'feedback' | 'skip' | null;
  /** Consecutive skips since the last answered prompt. */
  skips: number;
}

export type GateReason = 'forced' | 'ready' | 'affinity_below_tier' | 'cooldown';

export interface GateDecision {
  ask: boolean;
  reason: GateReason;
  message: string;
  affinity: number;
  tier: TierName;
  min_tier: TierName;
  min_affinity: number;
  cooldown: number;
  entries_since: number | null;
  skips: number;
}

/** The cooldown after `skips` consecutive skips: doubled per skip, capped. */
export function requiredCooldown(policy: GatingPolicy, skips: number): number {
  return Math.min(policy.maxCooldown, policy.cooldown * 2 ** Math.max(0, Math.min(skips, 30)));
}

export function decideGate(agent: string, policy: GatingPolicy, h: FeedbackHistory, force = false): GateDecision {
  const tier = tierOf(h.affinity);
  const cooldown = requiredCooldown(policy, h.skips);
  const base = {
    affinity: h.affinity,
    tier,
    min_tier: policy.minTier,
    min_affinity: tierMin(policy.minTier),
    cooldown,
    entries_since: h.entriesSince,
    skips: h.skips,
  };
  const aff = `${fmtAffinity(h.affinity)} (${tier})`;
  if (force)
    return { ask: true, reason: 'forced', message: `asking (forced); affinity with ${agent} is ${aff}`, ...base };
  if (tierRank(tier) < tierRank(policy.minTier)) {
    return {
      ask: false,
      reason: 'affinity_below_tier',
      message: `not asking: affinity with ${agent} is ${aff}; feedback opens at ${policy.minTier} (${fmtAffinity(tierMin(policy.minTier))})`,
      ...base,
    };
  }
  if (h.entriesSince !== null && h.entriesSince < cooldown) {
    const what = h.since === 'skip' ? 'the player skipped a prompt for it' : 'its last feedback';
    const backoff = h.skips > 0 ? ` (backed off after ${h.skips} skip${h.skips === 1 ? '' : 's'})` : '';
    return {
      ask: false,
      reason: 'cooldown',
      message: `not asking: ${h.entriesSince} ${agent} entr${h.entriesSince === 1 ? 'y' : 'ies'} since ${what}; the cooldown is ${cooldown}${backoff}`,
      ...base,
    };
  }
  return { ask: true, reason: 'ready', message: `asking: affinity with ${agent} is ${aff}`, ...base };
}
