import { requirement, type StrategyConfig } from '../aggregation/strategy.js';
import { councilSigma } from '../privacy/council-sigma.js';
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
  /** Where σ came from, when the council derives it from a target ε (council-sigma.ts); absent: configured. */
  derivation?: SigmaDerivation;
}

/** Why the council publishes the σ it does (the round status carries it). */
export interface SigmaDerivation {
  target_epsilon: number;
  rounds: number;
  delta: number;
  sample_rate: number;
  agent_epsilon: number;
  /** σ that keeps the observer's ε at the target. */
  observer_sigma: number;
  /** σ at which one release costs a forge's own ledger at most release_cap. */
  floor_sigma: number;
  release_cap: number;
  /** ε one release costs a forge's own ledger at the published σ. */
  release_epsilon: number;
  binding: 'observer' | 'floor';
}

/** `server_lr`: the new global is the previous one plus server_lr × the aggregate update. */
export type RoundSettings = StrategyConfig & {
  weights: 'uniform' | 'counts';
  privacy: PrivacyPolicy;
  server_lr: number;
};

/**
 * The privacy policy of the council's configuration. With a target ε the council derives σ
 * (council-sigma.ts) and accepts exactly it, or shares of it down to σ/√noise_shares under
 * distributed noise; otherwise it accepts the configured range.
 */
export function privacyPolicyOf(c: CouncilConfig): PrivacyPolicy {
  const base = { clip_norm: { ...c.clip_norm }, tail_margin: c.tail_margin };
  if (c.epsilon === null) return { ...base, noise_multiplier: { ...c.noise_multiplier } };
  const sampleRate = c.sample_rate ?? 1;
  const d = councilSigma({
    epsilon: c.epsilon,
    rounds: c.epsilon_rounds,
    delta: c.delta,
    sampleRate,
    agentEpsilon: c.agent_epsilon,
  });
  return {
    ...base,
    noise_multiplier: { min: c.noise_shares === null ? d.sigma : d.sigma / Math.sqrt(c.noise_shares), max: d.sigma },
    derivation: {
      target_epsilon: c.epsilon,
      rounds: c.epsilon_rounds,
      delta: c.delta,
      sample_rate: sampleRate,
      agent_epsilon: c.agent_epsilon,
      observer_sigma: d.observer,
      floor_sigma: d.affordable,
      release_cap: d.releaseCap,
      release_epsilon: d.releaseEpsilon,
      binding: d.binding,
    },
  };
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
    server_lr: c.server_lr,
  };
}

/**
 * A round's frozen settings. Rounds opened before the council published a privacy policy get
 * `fallback` (the configured policy): such a round is checked against the policy in force now.
 * Rounds opened before the council had a server step took a step of 1.
 */
export function parseRoundSettings(json: string, fallback: PrivacyPolicy): RoundSettings {
  const s = JSON.parse(json) as Omit<RoundSettings, 'privacy' | 'server_lr'> & {
    privacy?: PrivacyPolicy;
    server_lr?: number;
  };
  return { ...s, privacy: s.privacy ?? fallback, server_lr: s.server_lr ?? 1 };
}

/** "(0, 1]" or "[0.5, 1]" or "8": how a range reads in messages. */
export function formatRange(r: Range, openAtZero = false): string {
  if (r.min === r.max) return String(r.max);
  return `${openAtZero && r.min === 0 ? '(' : '['}${r.min}, ${r.max}]`;
}
