import { chunkRanges, requirement, selectionOf } from '../aggregation/strategy.js';
import {
  adapterDigest,
  PROTOCOL_VERSION,
  type Adapter,
  type Me,
  type RoundStatus,
  type Trust,
} from '../protocol/wire.js';
import { FEDERATING_AGENTS } from '../memoir/format/agents.js';
import { f32FromLE } from '../tensor/float-codec.js';
import { tensorToJson } from '../tensor/json.js';
import type { Layout } from '../tensor/layout.js';
import type { CouncilConfig } from './config.js';
import { publicInit, PUBLIC_INIT_SCHEME, PUBLIC_INIT_SEED } from '../protocol/public-init.js';
import { parseOutcome } from './outcome.js';
import { parseRoundSettings, privacyPolicyOf, type PrivacyPolicy } from './round-settings.js';
import type { AggregateRow, CouncilStorage, ForgeRow, RoundRow } from './storage.js';

/**
 * The council's JSON views, built in one place from storage: the protocol's round status,
 * trust and adapter documents (the HTTP routes), and the operator's `council rounds` and
 * `council trust` documents. A view reads; it never changes state.
 */

/** What every view of a round shares. */
export interface RoundSummary {
  round: number;
  state: RoundRow['state'];
  opened_at: string;
  deadline: string;
  closed_at: string | null;
  close_reason: RoundRow['closeReason'];
  aggregated_at: string | null;
  strategy: { strategy: string; byzantine: number; selection: string | null; min_updates: number; server_lr: number };
  privacy: PrivacyPolicy;
  forges_submitted: number;
  forges_sealed: number;
  /** Per aggregated (or skipped) agent: which forges sent updates and which were used. */
  agents: {
    agent: string;
    aggregated: boolean;
    skipped_reason: string | null;
    forges: string[];
    used: string[];
    /** Groups of identical updates, each counted once. */
    echoes: string[][];
  }[];
}

export async function roundSummary(
  storage: CouncilStorage,
  r: RoundRow,
  fallbackPolicy: PrivacyPolicy,
): Promise<RoundSummary> {
  const settings = parseRoundSettings(r.strategyJson, fallbackPolicy);
  const counts = await storage.forgeCounts(r.round);
  const aggs: AggregateRow[] = await storage.aggregatesOf(r.round);
  return {
    round: r.round,
    state: r.state,
    opened_at: r.openedAt,
    deadline: r.deadline,
    closed_at: r.closedAt,
    close_reason: r.closeReason,
    aggregated_at: r.aggregatedAt,
    strategy: {
      strategy: settings.strategy,
      byzantine: settings.f,
      selection: settings.strategy === 'lora-fair' ? selectionOf(settings) : null,
      min_updates: requirement(settings).min,
      server_lr: settings.server_lr,
    },
    privacy: settings.privacy,
    forges_submitted: counts.submitted,
    forges_sealed: counts.sealed,
    agents: aggs.map((a) => {
      const o = parseOutcome(a.outcomeJson);
      return {
        agent: a.agent,
        aggregated: a.updated,
        skipped_reason: o.skipped_reason,
        forges: o.forges,
        used: o.used,
        echoes: o.echoes,
      };
    }),
  };
}

/** A round's privacy policy as the protocol publishes it (protocol.ts, PrivacyPolicySchema). */
export function policyView(p: PrivacyPolicy): RoundStatus['privacy_policy'] {
  return {
    clip_norm: p.clip_norm.max,
    noise_multiplier: p.noise_multiplier.max,
    accepted: { clip_norm: { ...p.clip_norm }, noise_multiplier: { ...p.noise_multiplier } },
    tail_margin: p.tail_margin,
    ...(p.derivation ? { derivation: { ...p.derivation } } : {}),
  };
}

/** GET /v1/rounds/:round — the round as one forge sees it. */
export async function roundStatusView(
  storage: CouncilStorage,
  config: CouncilConfig,
  r: RoundRow,
  forge: ForgeRow,
): Promise<RoundStatus> {
  const s = await roundSummary(storage, r, privacyPolicyOf(config));
  const globals: Record<string, number> = {};
  const agents: string[] = [];
  for (const agent of FEDERATING_AGENTS) {
    if (!(await storage.agentLayout(agent, r.round))) continue;
    agents.push(agent);
    // Before any aggregate (in the layout in force), the agent's global is the public initialisation: round 0.
    globals[agent] = (await storage.globalOf(agent, r.round))?.round ?? 0;
  }
  const me = (await storage.forgeById(forge.id)) ?? forge;
  const submitted = await storage.submittedAgents(r.round, forge.id);
  return {
    round: s.round,
    state: s.state,
    opened_at: s.opened_at,
    deadline: s.deadline,
    closed_at: s.closed_at,
    close_reason: s.close_reason,
    aggregated_at: s.aggregated_at,
    strategy: s.strategy,
    min_forges: config.min_forges,
    forges_submitted: s.forges_submitted,
    forges_sealed: s.forges_sealed,
    agents,
    privacy_policy: policyView(s.privacy),
    accepted_base_fingerprints: [...config.base_fingerprints],
    globals,
    public_init: { scheme: PUBLIC_INIT_SCHEME, seed: PUBLIC_INIT_SEED },
    you: {
      forge: me.name,
      submitted,
      round_keys: await heldRoundKeys(storage, r.round, forge.id, submitted),
      sealed: (await storage.sealOf(r.round, forge.id)) !== undefined,
      trust: me.trust,
      exiled: me.exiledAt !== null,
    },
    outcomes: s.agents.map((a) => ({
      agent: a.agent,
      updates: a.forges.length,
      aggregated: a.aggregated,
      skipped_reason: a.skipped_reason,
      used: a.used.length,
      yours_used: a.forges.includes(forge.name) ? a.used.includes(forge.name) : null,
    })),
    exiles: (await storage.listForges())
      .filter((f) => f.exiledRound === r.round)
      .map((f) => ({ forge: f.name, round: r.round })),
    cohort: r.cohort && {
      size: r.cohort.length,
      forges: [...r.cohort],
      you: r.cohort.includes(me.name),
      next_check: r.deadline,
    },
  };
}

/** One row of `kourai council rounds --json`. */
export interface RoundListEntry {
  round: number;
  state: string;
  opened_at: string;
  deadline: string;
  closed_at: string | null;
  close_reason: string | null;
  aggregated_at: string | null;
  strategy: string;
  byzantine: number;
  forges_submitted: number;
  forges_sealed: number;
  agents: {
    agent: string;
    updates: number;
    aggregated: boolean;
    used: number;
    skipped_reason: string | null;
    /** Groups of identical updates (forge names) the robust rule counted once. */
    echoes: string[][];
  }[];
}

export async function roundListView(
  storage: CouncilStorage,
  limit: number,
  fallbackPolicy: PrivacyPolicy,
): Promise<RoundListEntry[]> {
  const out: RoundListEntry[] = [];
  for (const r of await storage.listRounds(limit)) {
    const s = await roundSummary(storage, r, fallbackPolicy);
    out.push({
      round: s.round,
      state: s.state,
      opened_at: s.opened_at,
      deadline: s.deadline,
      closed_at: s.closed_at,
      close_reason: s.close_reason,
      aggregated_at: s.aggregated_at,
      strategy: s.strategy.strategy,
      byzantine: s.strategy.byzantine,
      forges_submitted: s.forges_submitted,
      forges_sealed: s.forges_sealed,
      agents: s.agents.map((a) => ({
        agent: a.agent,
        updates: a.forges.length,
        aggregated: a.aggregated,
        used: a.used.length,
        skipped_reason: a.skipped_reason,
        echoes: a.echoes,
      })),
    });
  }
  return out;
}

export function meView(forge: ForgeRow): Me {
  return {
    forge: forge.name,
    created_at: forge.createdAt,
    trust: forge.trust,
    exiled: forge.exiledAt !== null,
    protocol: PROTOCOL_VERSION,
  };
}

export interface TrustSettingsView {
  trust_threshold: number;
  trust_warmup: number;
}

/** GET /v1/trust — one forge's own trust. */
export async function trustView(storage: CouncilStorage, config: TrustSettingsView, forge: ForgeRow): Promise<Trust> {
  const f = (await storage.forgeById(forge.id)) ?? forge;
  return {
    forge: f.name,
    trust: f.trust,
    rounds_scored: f.roundsScored,
    exiled: f.exiledAt !== null,
    exiled_round: f.exiledRound,
    threshold: config.trust_threshold,
    warmup: config.trust_warmup,
    history: await storage.trustHistory(f.id),
  };
}

/** Every forge's trust and the exiles (`kourai council trust`). */
export interface TrustListView {
  forges: {
    forge: string;
    id: number;
    trust: number;
    rounds_scored: number;
    last_similarity: number | null;
    exiled: boolean;
    exiled_round: number | null;
    created_at: string;
  }[];
  /** Exiles, newest first (the Stoa Falls). */
  stoa_falls: { at: string; round: number | null; forge: string; trust: number; evidence: string[] }[];
}

export async function trustListView(storage: CouncilStorage): Promise<TrustListView> {
  const forges: TrustListView['forges'] = [];
  for (const f of await storage.listForges()) {
    const history = await storage.trustHistory(f.id);
    forges.push({
      forge: f.name,
      id: f.id,
      trust: f.trust,
      rounds_scored: f.roundsScored,
      last_similarity: history.at(-1)?.similarity ?? null,
      exiled: f.exiledAt !== null,
      exiled_round: f.exiledRound,
      created_at: f.createdAt,
    });
  }
  const stoa_falls = (await storage.events(10_000))
    .filter((e) => e.kind === 'stoa_falls')
    .map((e) => {
      const d = JSON.parse(e.detailJson) as { forge: string; trust: number; evidence?: string[] };
      return { at: e.at, round: e.round, forge: d.forge, trust: d.trust, evidence: d.evidence ?? [] };
    });
  return { forges, stoa_falls };
}

/** An adapter document: the global an aggregation produced, decoded from its stored chunks (digests checked). */
export async function adapterView(
  storage: CouncilStorage,
  agent: string,
  round: number,
  strategy: string,
): Promise<Adapter> {
  const layout = await storage.agentLayout(agent, round);
  if (!layout) throw new Error(`council.db: no layout stored for ${agent}`);
  const chunks = await storage.globalChunks(round, agent);
  const flat = new Float32Array(layout.size);
  chunkRanges(layout).forEach(([s], i) => flat.set(f32FromLE(chunks[i] as Buffer), s));
  const tensors = layout.tensors.map((t) => ({
    name: t.name,
    shape: t.shape,
    data: flat.subarray(t.offset, t.offset + t.size),
  }));
  return { agent, round, strategy, digest: adapterDigest(tensors), tensors: tensors.map(tensorToJson) };
}

/** Round 0: the agent's public initialisation in `layout`, published like any version. */
export function publicInitView(agent: string, layout: Layout): Adapter {
  const tensors = publicInit(layout, agent);
  return {
    agent,
    round: 0,
    strategy: 'public-init',
    digest: adapterDigest(tensors),
    tensors: tensors.map(tensorToJson),
  };
}

/** One row of `kourai council forge list`. */
export interface ForgeListEntry {
  id: number;
  forge: string;
  status: 'active' | 'revoked' | 'exiled';
  created_at: string;
  revoked_at: string | null;
  exiled_round: number | null;
  trust: number;
  /** Accepted updates, all rounds. */
  updates: number;
  last_update: string | null;
}

export async function forgeListView(storage: CouncilStorage): Promise<ForgeListEntry[]> {
  const activity = await storage.forgeActivity();
  return (await storage.listForges()).map((f) => ({
    id: f.id,
    forge: f.name,
    status: f.revokedAt ? 'revoked' : f.exiledAt ? 'exiled' : 'active',
    created_at: f.createdAt,
    revoked_at: f.revokedAt,
    exiled_round: f.exiledRound,
    trust: f.trust,
    updates: activity.get(f.id)?.submissions ?? 0,
    last_update: activity.get(f.id)?.lastAt ?? null,
  }));
}

/** Per submitted agent, the round key of the release the council holds for the forge (from its receipt). */
async function heldRoundKeys(
  storage: CouncilStorage,
  round: number,
  forgeId: number,
  agents: readonly string[],
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const agent of agents) {
    const row = await storage.submission(round, forgeId, agent);
    const key = row ? (JSON.parse(row.receiptJson) as { round_key?: unknown }).round_key : undefined;
    if (typeof key === 'string') out[agent] = key;
  }
  return out;
}
