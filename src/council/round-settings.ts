import { requirement, type StrategyConfig } from '../aggregation/strategy.js';
import { cohortFaultBound, FAULT_BOUND_DELTA, smallestCohort } from '../protocol/cohort.js';
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

/**
 * f of a round's rule. Without a cohort every forge takes part and f is the configured Byzantine
 * count. With `cohort` K, `byzantine` counts the Byzantine forges of the whole federation and f is
 * the most of them one cohort of K drawn from the `eligible` forges holds, except with probability
 * FAULT_BOUND_DELTA per round (src/protocol/cohort.ts, the bound the simulation uses): their mean
 * share K·b/N is exceeded in about half the rounds. Unknown eligible count: the configured count.
 */
export function roundFault(c: CouncilConfig, eligible?: number): number {
  if (c.cohort === null || eligible === undefined) return c.byzantine;
  const population = Math.max(0, eligible);
  return cohortFaultBound({ population, byzantine: Math.min(c.byzantine, population), cohort: c.cohort });
}

/**
 * Why a cohort cannot hold its round's f (one line naming the rule, f and the smallest cohort that
 * would), or null. Only when the cohort samples (more eligible forges than K): otherwise every
 * forge takes part and min_forges is what is checked.
 */
export function cohortShortfall(c: CouncilConfig, eligible: number): string | null {
  if (c.cohort === null || eligible <= c.cohort) return null;
  const settings = roundSettingsOf(c, eligible);
  const req = requirement(settings);
  if (c.cohort >= req.min) return null;
  const b = Math.min(c.byzantine, eligible);
  const k = smallestCohort({ population: eligible, byzantine: b }, (f) => requirement({ ...settings, f }).min);
  return (
    `cohort ${c.cohort} is too small: ${req.rule}, and f = ${settings.f} is the most of the ${b} Byzantine forges among ` +
    `${eligible} one cohort of ${c.cohort} holds except with probability ${FAULT_BOUND_DELTA} per round; ` +
    (k === null ? `no cohort of ${eligible} forges holds it` : `the smallest cohort that holds it is ${k}`)
  );
}

/** The settings a round opens with; `eligible`: the forges that may take part (it sets f under a cohort). */
export function roundSettingsOf(c: CouncilConfig, eligible?: number): RoundSettings {
  return {
    strategy: c.strategy,
    f: roundFault(c, eligible),
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
