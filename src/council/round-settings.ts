import type { StrategyConfig } from '../aggregation/strategy.js';
import type { CouncilConfig, Range } from './config.js';

/**
 * The settings a round freezes when it opens (rounds.strategy_json): the aggregation rule, how
 * updates are weighed, and the privacy policy every update of the round is checked against. A
 * round is always run with the settings it opened with, even if the council restarts with a
 * different configuration meanwhile; its status publishes them.
 */
export interface PrivacyPolicy {
  /** Accepted clip norms S (a forge declares the S it clipped to; it must lie in this range). */
  clip_norm: Range;
  /** Accepted noise multipliers σ. */
  noise_multiplier: Range;
  /** t of the norm bound S(1 + σ(√d + t)). */
  tail_margin: number;
}

export type RoundSettings = StrategyConfig & { weights: 'uniform' | 'counts'; privacy: PrivacyPolicy };

export function privacyPolicyOf(c: CouncilConfig): PrivacyPolicy {
  return { clip_norm: { ...c.clip_norm }, noise_multiplier: { ...c.noise_multiplier }, tail_margin: c.tail_margin };
}

export function roundSettingsOf(c: CouncilConfig): RoundSettings {
  return {
    strategy: c.strategy,
    f: c.byzantine,
    ...(c.trim !== null ? { trim: c.trim } : {}),
    ...(c.multikrum_m !== null ? { m: c.multikrum_m } : {}),
    ...(c.selection !== null ? { selection: c.selection } : {}),
    loraFair: { lambda: c.lora_fair_lambda, lr: c.lora_fair_lr, steps: c.lora_fair_steps, solver: c.lora_fair_solver },
    weights: c.weights,
    privacy: privacyPolicyOf(c),
  };
}

/**
 * A round's frozen settings. Rounds opened before the council published a privacy policy get
 * `fallback` (the configured policy): such a round is checked against the policy in force now.
 */
export function parseRoundSettings(json: string, fallback: PrivacyPolicy): RoundSettings {
  const s = JSON.parse(json) as Omit<RoundSettings, 'privacy'> & { privacy?: PrivacyPolicy };
  return { ...s, privacy: s.privacy ?? fallback };
}

/** "(0, 1]" or "[0.5, 1]" or "8": how a range reads in messages. */
export function formatRange(r: Range, openAtZero = false): string {
  if (r.min === r.max) return String(r.max);
  return `${openAtZero && r.min === 0 ? '(' : '['}${r.min}, ${r.max}]`;
}
