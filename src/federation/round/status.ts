/**
 * `kourai federate status` as data: the council this forge joined, what the council says now
 * (round, trust, exile), consent, whisper capacity per agent, the last rounds from the memoir, a
 * round left unfinished, and whether the ledger still matches its anchors.
 */
import { AGENTS, isBondOnly, type Agent } from '../../memoir/format/agents.js';
import type { CouncilEvent } from '../../memoir/derive/council-event.js';
import { budgetState, gaugeLevel, ROUND_SAMPLE_RATE, type GaugeLevel } from '../../privacy/budget.js';
import { checkLedger, type Anchors } from '../../privacy/ledger-anchor.js';
import { floorViolation, privacyFloor, type PrivacyFloor } from '../../privacy/privacy-floor.js';
import type { PrivacyConfig } from '../../privacy/privacy-config.js';
import { RdpAccountant } from '../../privacy/rdp-accountant.js';
import type { ReleaseRow } from '../../store/privacy-ledger.js';
import type { PrivacyPolicy, RoundStatus, Trust } from '../../protocol/wire.js';
import { councilEvents } from './events-memoir.js';
import { councilAnchors, spentRounds } from './ledger-anchors.js';
import type { Membership } from './membership.js';
import { parseRoundKey } from './round-key.js';
import type { CouncilTransport } from './transport.js';

export interface AgentCapacity {
  agent: Agent;
  consent: boolean | 'locked';
  releases: number | null;
  epsilon_spent: number | null;
  epsilon_budget: number | null;
  remaining_fraction: number | null;
  /** Whether one more release (at the forge's σ) fits this agent's budget and the forge's. */
  can_speak_next: boolean;
  level: GaugeLevel | null;
}

export interface RoundSummaryLine {
  round: number;
  recorded_at: string | null;
  spoke: string[];
  silent: { agent: string; reason: string }[];
  came_back: string[];
  trust_after: number;
  exiled: boolean;
}

export interface FederationStatus {
  joined: boolean;
  council: {
    url: string;
    forge: string;
    council_key: string;
    joined_at: string;
    base_fingerprint: string;
    events_memoir: string;
  } | null;
  /** Null when not joined (nothing was asked); false with `error` when the council could not be asked. */
  reachable: boolean | null;
  error: string | null;
  current_round: {
    round: number;
    state: string;
    deadline: string;
    forges_sealed: number;
    min_forges: number;
    privacy_policy: PrivacyPolicy | null;
    submitted: string[];
    sealed: boolean;
  } | null;
  trust: {
    trust: number;
    exiled: boolean;
    exiled_round: number | null;
    rounds_scored: number | null;
    threshold: number | null;
    source: 'council' | 'memoir';
  } | null;
  agents: AgentCapacity[];
  forge: { releases: number; epsilon_spent: number; epsilon_budget: number; remaining_fraction: number; delta: number };
  /** The σ `can_speak_next` is judged at: the council's published policy when it was asked, else this forge's own. */
  next_sigma: { noise_multiplier: number; source: 'council' | 'forge' };
  last_rounds: RoundSummaryLine[];
  /** A round this forge released updates for but never recorded in the memoir: `federate round` resumes it. */
  unfinished_round: { round: number; round_key: string; released: string[] } | null;
  ledger: { ok: boolean; problem: string | null };
  /** The player's privacy floor, and why the council's current policy is outside it (null: inside, or not asked). */
  floor: PrivacyFloor & { council_policy_outside: string | null };
}

/** The newest round of this council the ledger released updates for without a council_event recording it. */
export function unfinishedRound(
  rows: readonly ReleaseRow[],
  events: readonly CouncilEvent[],
  councilKey: string,
): { round: number; round_key: string; released: string[] } | null {
  const recorded = new Set(
    events.filter((e) => e.details.beat === 'council_of_sisters').map((e) => e.details.round_key),
  );
  let best: { round: number; round_key: string; released: string[] } | null = null;
  for (const r of rows) {
    const k = parseRoundKey(r.round);
    if (!k || k.councilKey !== councilKey || recorded.has(r.round)) continue;
    if (!best || k.round > best.round) best = { round: k.round, round_key: r.round, released: [] };
    if (best.round === k.round) best.released.push(r.agent);
  }
  return best;
}

function summaryLine(e: CouncilEvent): RoundSummaryLine {
  const d = e.details;
  return {
    round: d.round,
    recorded_at: e.recordedAt,
    spoke: d.spoke.map((s) => s.agent),
    silent: d.silent.map((s) => ({ agent: s.agent, reason: s.reason })),
    came_back: d.came_back.filter((c) => c.aggregated).map((c) => c.agent),
    trust_after: d.trust.after,
    exiled: d.trust.exiled,
  };
}

export async function federationStatus(p: {
  membership: Membership | null;
  transport: CouncilTransport | null;
  rows: readonly ReleaseRow[];
  /** What each drawn release declared (PrivacyLedger.envelopes), and the memoir's anchors: the ledger is checked against them. */
  envelopes: ReadonlyMap<number, string>;
  local: Anchors;
  consent: Readonly<Record<string, boolean>>;
  config: PrivacyConfig;
  lastRounds?: number;
}): Promise<FederationStatus> {
  const { config, rows, membership: m } = p;
  let round: RoundStatus | null = null;
  let trust: Trust | null = null;
  let error: string | null = null;
  const past: RoundStatus[] = [];
  if (m && p.transport) {
    try {
      round = await p.transport.currentRound();
      trust = await p.transport.trust();
      // Past rounds' policies and receipts: a round the council no longer answers for is one anchor fewer, not an error.
      for (const n of spentRounds(rows, m.council_key, round.round))
        past.push(
          ...(await p.transport.round(n).then(
            (r) => [r],
            () => [],
          )),
        );
    } catch (err) {
      error = (err as Error).message;
    }
  }
  // Who can speak next is judged at the σ the next round charges: the council's, when it was asked.
  const sigma = round?.privacy_policy ? round.privacy_policy.noise_multiplier : config.noiseMultiplier;
  const state = budgetState(rows);
  const forgeFits =
    sigma > 0 && state.forge.epsilonWith(sigma, ROUND_SAMPLE_RATE, config.delta).epsilon <= config.forgeEpsilon;
  const agents: AgentCapacity[] = AGENTS.map((agent) => {
    if (isBondOnly(agent))
      return {
        agent,
        consent: 'locked',
        releases: null,
        epsilon_spent: null,
        epsilon_budget: null,
        remaining_fraction: null,
        can_speak_next: false,
        level: null,
      };
    const acc = state.agents.get(agent) ?? new RdpAccountant();
    const spent = acc.epsilon(config.delta).epsilon;
    const fits = sigma > 0 && acc.epsilonWith(sigma, ROUND_SAMPLE_RATE, config.delta).epsilon <= config.agentEpsilon;
    const remaining = Math.min(1, Math.max(0, 1 - spent / config.agentEpsilon));
    const consent = p.consent[agent] === true;
    return {
      agent,
      consent,
      releases: acc.steps,
      epsilon_spent: spent,
      epsilon_budget: config.agentEpsilon,
      remaining_fraction: remaining,
      can_speak_next: consent && fits && forgeFits,
      level: gaugeLevel(remaining, fits && forgeFits),
    };
  });
  const forgeSpent = state.forge.epsilon(config.delta).epsilon;
  const forge = {
    releases: state.forge.steps,
    epsilon_spent: forgeSpent,
    epsilon_budget: config.forgeEpsilon,
    remaining_fraction: Math.min(1, Math.max(0, 1 - forgeSpent / config.forgeEpsilon)),
    delta: config.delta,
  };
  const next_sigma = {
    noise_multiplier: sigma,
    source: round?.privacy_policy ? ('council' as const) : ('forge' as const),
  };
  const published = round?.privacy_policy;
  const floor = {
    ...privacyFloor(config),
    council_policy_outside: published
      ? floorViolation(privacyFloor(config), {
          clipNorm: published.clip_norm,
          noiseMultiplier: published.noise_multiplier,
        })
      : null,
  };
  const base: FederationStatus = {
    joined: m !== null,
    council: null,
    reachable: null,
    error: null,
    current_round: null,
    trust: null,
    agents,
    forge,
    next_sigma,
    last_rounds: [],
    unfinished_round: null,
    ledger: { ok: true, problem: null },
    floor,
  };
  if (!m) {
    try {
      checkLedger(rows, p.envelopes, p.local);
    } catch (err) {
      base.ledger = { ok: false, problem: (err as Error).message };
    }
    return base;
  }

  const events = councilEvents(m.events_memoir, m.council_key);
  base.council = {
    url: m.url,
    forge: m.forge,
    council_key: m.council_key,
    joined_at: m.joined_at,
    base_fingerprint: m.base_fingerprint,
    events_memoir: m.events_memoir,
  };
  base.last_rounds = events
    .filter((e) => e.details.beat === 'council_of_sisters')
    .slice(-(p.lastRounds ?? 5))
    .reverse()
    .map(summaryLine);
  base.unfinished_round = unfinishedRound(rows, events, m.council_key);
  const last = events[events.length - 1];
  if (last)
    base.trust = {
      trust: last.details.trust.after,
      exiled: last.details.trust.exiled,
      exiled_round: last.details.trust.exiled_round,
      rounds_scored: null,
      threshold: null,
      source: 'memoir',
    };
  if (p.transport) {
    base.reachable = error === null;
    base.error = error;
  }
  if (round) {
    base.current_round = {
      round: round.round,
      state: round.state,
      deadline: round.deadline,
      forges_sealed: round.forges_sealed,
      min_forges: round.min_forges,
      privacy_policy: round.privacy_policy ?? null,
      submitted: round.you.submitted,
      sealed: round.you.sealed,
    };
  }
  if (trust)
    base.trust = {
      trust: trust.trust,
      exiled: trust.exiled,
      exiled_round: trust.exiled_round,
      rounds_scored: trust.rounds_scored,
      threshold: trust.threshold,
      source: 'council',
    };
  try {
    checkLedger(rows, p.envelopes, { ...p.local, ...councilAnchors(m.council_key, [round, ...past], trust) });
  } catch (err) {
    base.ledger = { ok: false, problem: (err as Error).message };
  }
  return base;
}
