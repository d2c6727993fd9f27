import { UsageError } from '../errors.js';
import { FEDERATING_AGENTS, isAgent, isBondOnly, type FederatingAgent } from '../memoir/format/agents.js';
import { sameLayout, type Layout } from '../tensor/layout.js';
import type { CouncilConfig } from './config.js';
import { configuredLayouts } from './layouts.js';
import type { CouncilStorage } from './storage.js';

/**
 * The operator's view of layouts (`kourai council layout show|reset`): the configured layout of
 * each agent against the one council.db has in force, and adopting the configured one.
 */
export type LayoutStatus = 'agrees' | 'differs' | 'not configured' | 'not adopted yet' | 'none';

export interface LayoutTensors {
  coords: number;
  tensors: { name: string; shape: number[] }[];
}

export interface AgentLayoutReport {
  agent: FederatingAgent;
  status: LayoutStatus;
  configured: LayoutTensors | null;
  in_force: (LayoutTensors & { since_round: number; set_at: string; source: string }) | null;
}

const tensorsOf = (l: Layout): LayoutTensors => ({
  coords: l.size,
  tensors: l.tensors.map((t) => ({ name: t.name, shape: [...t.shape] })),
});

export async function layoutReport(
  storage: CouncilStorage,
  config: Pick<CouncilConfig, 'layouts'>,
  only?: FederatingAgent,
): Promise<AgentLayoutReport[]> {
  const configured = configuredLayouts(config.layouts);
  const out: AgentLayoutReport[] = [];
  for (const agent of FEDERATING_AGENTS) {
    if (only && agent !== only) continue;
    const want = configured.get(agent) ?? null;
    const record = (await storage.layoutHistory(agent)).at(-1);
    const have = (await storage.agentLayout(agent)) ?? null;
    const status: LayoutStatus =
      want && have
        ? sameLayout(want, have)
          ? 'agrees'
          : 'differs'
        : want
          ? 'not adopted yet'
          : have
            ? 'not configured'
            : 'none';
    out.push({
      agent,
      status,
      configured: want && tensorsOf(want),
      in_force:
        have && record
          ? { ...tensorsOf(have), since_round: record.sinceRound, set_at: record.setAt, source: record.source }
          : null,
    });
  }
  return out;
}

export function federatingAgent(name: string): FederatingAgent {
  const a = name.toLowerCase();
  if (!isAgent(a)) throw new UsageError(`unknown agent "${name}" (agents: ${FEDERATING_AGENTS.join(', ')})`);
  if (isBondOnly(a)) throw new UsageError(`${a} is bond-only: the council has no layout for it`);
  return a as FederatingAgent;
}

export interface LayoutResetOutcome {
  agent: FederatingAgent;
  /** The first round the adopted layout applies to (the open round, or the next one). */
  since_round: number;
  /** The layout now in force (null: the agent is no longer accepted). */
  layout: LayoutTensors | null;
  /** Updates of rounds not yet aggregated, in the old layout, that were dropped. */
  removed: { round: number; forge: string }[];
  /** Globals no longer served as the agent's current adapter (they are in the old layout). */
  retired_global_round: number | null;
}

/**
 * Makes the configured layout (or none, when the configuration has none for the agent) the
 * agent's layout from the open round on. The agent's updates in rounds not yet aggregated are
 * dropped (they are in the old layout), and its previous globals stop being the starting point:
 * forges start the agent afresh, from the public initialisation of the new layout (round 0). Works while a council is serving (it reads layouts per request).
 */
export async function resetLayout(
  storage: CouncilStorage,
  config: Pick<CouncilConfig, 'layouts'>,
  agent: FederatingAgent,
  now: Date,
): Promise<LayoutResetOutcome> {
  const want = configuredLayouts(config.layouts).get(agent) ?? null;
  const have = (await storage.agentLayout(agent)) ?? null;
  if (want && have && sameLayout(want, have))
    throw new UsageError(`${agent}: the layout in council.db already is the configured one; nothing to reset`);
  if (!want && !have)
    throw new UsageError(`${agent}: no layout is configured and none is in council.db; nothing to reset`);
  const latest = await storage.latestRound();
  const since = !latest ? 1 : latest.state === 'open' ? latest.round : latest.round + 1;
  const retired = have ? ((await storage.globalOf(agent))?.round ?? null) : null;
  const names = new Map((await storage.listForges()).map((f) => [f.id, f.name]));
  const { removed } = await storage.adoptLayout(
    agent,
    want,
    since,
    now.toISOString(),
    want ? 'reset by the operator to the configured layout' : 'reset by the operator: no layout configured',
  );
  return {
    agent,
    since_round: since,
    layout: want && tensorsOf(want),
    removed: removed.map((r) => ({ round: r.round, forge: names.get(r.forgeId) ?? `#${r.forgeId}` })),
    retired_global_round: retired,
  };
}
