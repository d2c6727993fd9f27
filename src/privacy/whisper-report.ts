/**
 * The Whisper Limit as data: what `kourai whisper --json` prints and what the gauge (Ink or
 * plain text) shows. Built from the round plan and the ledger; everything here stays local.
 */
import type { Agent } from '../memoir/format/agents.js';
import type { GaugeLevel, RoundPlan, Verdict } from './budget.js';
import type { ConfigOrigin, PrivacyConfig } from './privacy-config.js';

export interface Contribution {
  round: string;
  /** ||clip(Δ)|| / S: how much of its clip norm the agent used (1 = clipped). Null if noise was never drawn. */
  clipped_fraction: number | null;
  /** Norm of what was released (signal + noise). */
  released_norm: number | null;
  at: string;
}

export interface WhisperAgent {
  agent: Agent;
  speaks: boolean;
  verdict: Verdict;
  why: string;
  consent: boolean | 'locked';
  shareable_entries: number;
  clip_norm: number;
  noise_multiplier: number;
  epsilon_budget: number | null;
  epsilon_spent: number | null;
  remaining_fraction: number | null;
  level: GaugeLevel | null;
  releases: number;
  next_round_epsilon_cost: number | null;
  next_round_forge_cost: number | null;
  epsilon_after_next: number | null;
  contributions: Contribution[];
}

export interface WhisperReport {
  round: string | null;
  config: {
    forge_epsilon: number;
    agent_epsilon: number;
    delta: number;
    noise_multiplier: number;
    clip_norm: number;
    origin: Record<string, ConfigOrigin>;
    file: string | null;
  };
  forge: {
    epsilon_budget: number;
    epsilon_spent: number;
    remaining_fraction: number;
    releases: number;
    level: GaugeLevel;
    epsilon_after_next_round: number;
    speakers_next_round: number;
  };
  agents: WhisperAgent[];
  /**
   * The S and σ the next-round figures are priced at: the council's last published policy when
   * the forge has joined one and knows it (a council round charges at it), else this forge's own.
   */
  priced_at: PricedAt;
  notes: string[];
}

export interface PricedAt {
  source: 'council' | 'forge';
  noise_multiplier: number;
  clip_norm: number;
  /** The council round whose status published it, and when this forge saw it (council only). */
  council_round: number | null;
  seen_at: string | null;
}

export function buildWhisperReport(p: {
  plan: RoundPlan;
  origin: Record<keyof PrivacyConfig, ConfigOrigin>;
  file: string | null;
  releases: readonly { id: number; agent: string; round: string; clipNorm: number; createdAt: string }[];
  norms: ReadonlyMap<number, { clippedNorm: number; releasedNorm: number }>;
  notes?: string[];
  /** The forge's own settings, when the plan was priced at a council's policy (default: the plan's). */
  forgeConfig?: PrivacyConfig;
  pricedAt?: PricedAt;
}): WhisperReport {
  const { plan } = p;
  const c = p.forgeConfig ?? plan.config;
  return {
    round: plan.round,
    config: {
      forge_epsilon: c.forgeEpsilon,
      agent_epsilon: c.agentEpsilon,
      delta: c.delta,
      noise_multiplier: c.noiseMultiplier,
      clip_norm: c.clipNorm,
      origin: {
        forge_epsilon: p.origin.forgeEpsilon,
        agent_epsilon: p.origin.agentEpsilon,
        delta: p.origin.delta,
        noise_multiplier: p.origin.noiseMultiplier,
        clip_norm: p.origin.clipNorm,
      },
      file: p.file,
    },
    forge: {
      epsilon_budget: plan.forge.epsilonBudget,
      epsilon_spent: plan.forge.epsilonSpent,
      remaining_fraction: plan.forge.remainingFraction,
      releases: plan.forge.releases,
      level: plan.forge.level,
      epsilon_after_next_round: plan.forge.epsilonAfterRound,
      speakers_next_round: plan.forge.speakers,
    },
    agents: plan.agents.map((a) => ({
      agent: a.agent,
      speaks: a.speaks,
      verdict: a.verdict,
      why: a.why,
      consent: a.consent,
      shareable_entries: a.shareableEntries,
      clip_norm: a.clipNorm,
      noise_multiplier: a.noiseMultiplier,
      epsilon_budget: a.capacity?.epsilonBudget ?? null,
      epsilon_spent: a.capacity?.epsilonSpent ?? null,
      remaining_fraction: a.capacity?.remainingFraction ?? null,
      level: a.capacity?.level ?? null,
      releases: a.capacity?.releases ?? 0,
      next_round_epsilon_cost: a.nextRoundAgentCost,
      next_round_forge_cost: a.nextRoundForgeCost,
      epsilon_after_next: a.epsilonAfterNext,
      contributions: p.releases
        .filter((r) => r.agent === a.agent)
        .map((r) => {
          const n = p.norms.get(r.id);
          return {
            round: r.round,
            clipped_fraction: n ? n.clippedNorm / r.clipNorm : null,
            released_norm: n?.releasedNorm ?? null,
            at: r.createdAt,
          };
        }),
    })),
    priced_at: p.pricedAt ?? {
      source: 'forge',
      noise_multiplier: plan.config.noiseMultiplier,
      clip_norm: plan.config.clipNorm,
      council_round: null,
      seen_at: null,
    },
    notes: p.notes ?? [],
  };
}

/** A text bar of `width` cells for a fraction in [0, 1]. */
export function bar(fraction: number, width: number): string {
  const f = Math.min(1, Math.max(0, fraction));
  const full = Math.round(f * width);
  return '█'.repeat(full) + '░'.repeat(width - full);
}

export function percent(fraction: number): string {
  return `${Math.round(Math.min(1, Math.max(0, fraction)) * 100)}%`;
}
