/**
 * The Whisper Limit: privacy budget spent and left, per agent and for the forge, and the plan
 * for the next federation round (who speaks, who stays silent and why). Pure: it reads the
 * ledger's release parameters, the consent map and local entry counts, and decides.
 *
 * Accounting: every release is a Gaussian mechanism with q = 1 (the server sees who took part).
 *   - An agent's ε composes its own releases (unit: everything that agent says for the forge).
 *   - The forge's ε composes EVERY agent's releases (unit: the forge's whole contribution),
 *     because every agent's delta is computed from the forge's data.
 * Both are RDP sums converted to (ε, δ) at the configured δ.
 */
import { AGENTS, FEDERATING_AGENTS, isBondOnly, type Agent, type FederatingAgent } from '../memoir/format/agents.js';
import type { ConsentMap } from './consent.js';
import type { PrivacyConfig } from './privacy-config.js';
import { RdpAccountant } from './rdp-accountant.js';

/** The mechanism settings of a past release (a ledger row). */
export interface SpentRelease {
  agent: string;
  round: string;
  noiseMultiplier: number;
  sampleRate: number;
}

export type SilenceReason =
  'bond_only' | 'no_consent' | 'no_shareable_entries' | 'already_released' | 'agent_budget' | 'forge_budget';
export type Verdict = 'speaks' | SilenceReason;

export const VERDICT_TEXT: Readonly<Record<Verdict, string>> = {
  speaks: 'speaks: consent given, shareable entries, whisper capacity left',
  bond_only: 'silent: bond-only, never leaves the forge',
  no_consent: 'silent: no consent (kourai federate consent)',
  no_shareable_entries: 'silent: no shareable entries to learn from',
  already_released: 'silent: already spoke this round',
  agent_budget: "silent: the next round would exceed this agent's whisper capacity",
  forge_budget: "silent: the next round would exceed the forge's whisper capacity",
};

/** The same, in a few words, for one-line rows. */
export const VERDICT_SHORT: Readonly<Record<Verdict, string>> = {
  speaks: 'consent, entries and capacity',
  bond_only: 'bond-only',
  no_consent: 'no consent',
  no_shareable_entries: 'no shareable entries',
  already_released: 'spoke this round',
  agent_budget: 'its capacity would run out',
  forge_budget: "the forge's capacity would run out",
};

export type GaugeLevel = 'ok' | 'low' | 'critical' | 'exhausted';

/** Colour thresholds of the gauge: > 50 % left ok, > 20 % low, else critical; exhausted when nothing more fits. */
export function gaugeLevel(remainingFraction: number, canAffordNext: boolean): GaugeLevel {
  if (!canAffordNext || remainingFraction <= 0) return 'exhausted';
  if (remainingFraction > 0.5) return 'ok';
  if (remainingFraction > 0.2) return 'low';
  return 'critical';
}

export interface Capacity {
  epsilonBudget: number;
  epsilonSpent: number;
  /** 1 - spent/budget, clamped to [0, 1]. */
  remainingFraction: number;
  releases: number;
  level: GaugeLevel;
}

export interface AgentPlan {
  agent: Agent;
  verdict: Verdict;
  speaks: boolean;
  why: string;
  /** 'locked' for Cupid and Puck. */
  consent: boolean | 'locked';
  shareableEntries: number;
  clipNorm: number;
  noiseMultiplier: number;
  /** Null for bond-only agents (no council head). */
  capacity: Capacity | null;
  /** Increase of this agent's ε if it speaks next round. */
  nextRoundAgentCost: number | null;
  /** This agent's ε after the next round, if it speaks. */
  epsilonAfterNext: number | null;
  /** Increase of the forge's ε from this agent's release, given the agents ahead of it speak. */
  nextRoundForgeCost: number | null;
}

export interface RoundPlan {
  round: string | null;
  config: PrivacyConfig;
  forge: Capacity & { epsilonAfterRound: number; speakers: number };
  agents: AgentPlan[];
}

export interface BudgetState {
  forge: RdpAccountant;
  agents: Map<string, RdpAccountant>;
}

/** Composes every past release into per-agent and forge accountants. */
export function budgetState(releases: readonly SpentRelease[]): BudgetState {
  const forge = new RdpAccountant();
  const agents = new Map<string, RdpAccountant>();
  for (const r of releases) {
    forge.step(r.noiseMultiplier, r.sampleRate);
    let a = agents.get(r.agent);
    if (!a) {
      a = new RdpAccountant();
      agents.set(r.agent, a);
    }
    a.step(r.noiseMultiplier, r.sampleRate);
  }
  return { forge, agents };
}

function capacity(acc: RdpAccountant, budget: number, delta: number, canAffordNext: boolean): Capacity {
  const spent = acc.epsilon(delta).epsilon;
  const remainingFraction = Math.min(1, Math.max(0, 1 - spent / budget));
  return {
    epsilonBudget: budget,
    epsilonSpent: spent,
    remainingFraction,
    releases: acc.steps,
    level: gaugeLevel(remainingFraction, canAffordNext),
  };
}

/** A federation round always has q = 1: each agent's delta is released once and the server sees it. */
export const ROUND_SAMPLE_RATE = 1;

/**
 * Decides, for the next round, who speaks. An agent speaks when it is a federating agent, has
 * consent, has shareable entries, has not spoken this round, and one more release keeps both
 * its own ε and the forge's ε within budget. When the forge's capacity cannot cover every
 * agent, agents that have spoken least go first (ties in the canonical agent order).
 */
export function planRound(input: {
  releases: readonly SpentRelease[];
  consent: ConsentMap;
  shareable: Readonly<Partial<Record<Agent, number>>>;
  config: PrivacyConfig;
  round?: string | null;
}): RoundPlan {
  const { config } = input;
  const q = ROUND_SAMPLE_RATE;
  const sigma = config.noiseMultiplier;
  const state = budgetState(input.releases);
  const forgeRound = state.forge.clone();
  const spokeThisRound = new Set(
    input.round ? input.releases.filter((r) => r.round === input.round).map((r) => r.agent) : [],
  );
  const accOf = (a: string): RdpAccountant => state.agents.get(a) ?? new RdpAccountant();

  const order = [...FEDERATING_AGENTS].sort(
    (a, b) => accOf(a).steps - accOf(b).steps || FEDERATING_AGENTS.indexOf(a) - FEDERATING_AGENTS.indexOf(b),
  );
  const plans = new Map<Agent, AgentPlan>();
  for (const agent of order) {
    const acc = accOf(agent);
    const spent = acc.epsilon(config.delta).epsilon;
    const after = acc.epsilonWith(sigma, q, config.delta).epsilon;
    const agentFits = after <= config.agentEpsilon;
    const forgeBefore = forgeRound.epsilon(config.delta).epsilon;
    const forgeAfter = forgeRound.epsilonWith(sigma, q, config.delta).epsilon;
    const forgeFits = forgeAfter <= config.forgeEpsilon;
    const shareableEntries = input.shareable[agent] ?? 0;
    let verdict: Verdict;
    if (!input.consent[agent]) verdict = 'no_consent';
    else if (shareableEntries <= 0) verdict = 'no_shareable_entries';
    else if (spokeThisRound.has(agent)) verdict = 'already_released';
    else if (!agentFits) verdict = 'agent_budget';
    else if (!forgeFits) verdict = 'forge_budget';
    else verdict = 'speaks';
    if (verdict === 'speaks') forgeRound.step(sigma, q);
    plans.set(agent, {
      agent,
      verdict,
      speaks: verdict === 'speaks',
      why: VERDICT_TEXT[verdict],
      consent: input.consent[agent],
      shareableEntries,
      clipNorm: config.clipNorm,
      noiseMultiplier: sigma,
      capacity: capacity(acc, config.agentEpsilon, config.delta, agentFits),
      nextRoundAgentCost: after - spent,
      epsilonAfterNext: after,
      nextRoundForgeCost: forgeAfter - forgeBefore,
    });
  }
  for (const agent of AGENTS) {
    if (!isBondOnly(agent)) continue;
    plans.set(agent, {
      agent,
      verdict: 'bond_only',
      speaks: false,
      why: VERDICT_TEXT.bond_only,
      consent: 'locked',
      shareableEntries: input.shareable[agent] ?? 0,
      clipNorm: config.clipNorm,
      noiseMultiplier: sigma,
      capacity: null,
      nextRoundAgentCost: null,
      epsilonAfterNext: null,
      nextRoundForgeCost: null,
    });
  }
  const forgeCanAfford = state.forge.epsilonWith(sigma, q, config.delta).epsilon <= config.forgeEpsilon;
  const speakers = [...plans.values()].filter((p) => p.speaks).length;
  return {
    round: input.round ?? null,
    config: { ...config },
    forge: {
      ...capacity(state.forge, config.forgeEpsilon, config.delta, forgeCanAfford),
      epsilonAfterRound: forgeRound.epsilon(config.delta).epsilon,
      speakers,
    },
    agents: AGENTS.map((a) => plans.get(a) as AgentPlan),
  };
}

/**
 * The hard check made inside the ledger transaction before a release is written: throws a
 * reason when one more release by `agent` would exceed its budget or the forge's, else returns
 * both cumulative ε values after it.
 */
export function checkRelease(
  releases: readonly SpentRelease[],
  agent: FederatingAgent,
  config: PrivacyConfig,
):
  | { ok: true; epsilonAgent: number; epsilonForge: number }
  | { ok: false; reason: 'agent_budget' | 'forge_budget'; epsilonAgent: number; epsilonForge: number } {
  const state = budgetState(releases);
  const agentAcc = state.agents.get(agent) ?? new RdpAccountant();
  const epsilonAgent = agentAcc.epsilonWith(config.noiseMultiplier, ROUND_SAMPLE_RATE, config.delta).epsilon;
  const epsilonForge = state.forge.epsilonWith(config.noiseMultiplier, ROUND_SAMPLE_RATE, config.delta).epsilon;
  if (epsilonAgent > config.agentEpsilon) return { ok: false, reason: 'agent_budget', epsilonAgent, epsilonForge };
  if (epsilonForge > config.forgeEpsilon) return { ok: false, reason: 'forge_budget', epsilonAgent, epsilonForge };
  return { ok: true, epsilonAgent, epsilonForge };
}
