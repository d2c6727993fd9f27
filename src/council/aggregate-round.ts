import type { GramPool } from '../aggregation/gram-pool.js';
import { aggregateUpdates, chunkRanges, requirement, type AggregateOutcome } from '../aggregation/strategy.js';
import { AggregationError } from '../aggregation/vec.js';
import { FEDERATING_AGENTS } from '../memoir/agents.js';
import { toLE } from '../tensor/float-codec.js';
import type { AgentOutcome } from './outcome.js';
import { parseRoundSettings, type RoundSettings } from './round-settings.js';
import type { AggregateRow, CouncilStorage, ScoreRow } from './storage.js';
import { similarities } from './trust.js';

/**
 * Aggregating a closed round: a function of what storage holds and the strategy the round froze,
 * nothing else — the server, the simulator and a worker thread all run this same code.
 *
 * Each agent is computed (read-only: `computeAgentAggregate`) and then recorded in one storage
 * call, so a crash between agents resumes with the agents not yet recorded, and an agent is
 * never aggregated twice.
 */
export interface AgentAggregate {
  row: AggregateRow;
  /** The new global adapter (float32 LE chunks), or null when the agent was skipped. */
  globalChunks: Buffer[] | null;
  scores: ScoreRow[];
  /** Lines for the operator's log. */
  log: string[];
}

export interface AggregateDeps {
  storage: CouncilStorage;
  now: () => Date;
  pool?: GramPool | null;
  /** The similarity tolerance τ of trust scores (see trust.ts). */
  trustTolerance: number;
}

/** Computes one agent's aggregate for a closed round; reads storage, writes nothing. */
export async function computeAgentAggregate(deps: AggregateDeps, round: number, agent: string, settings: RoundSettings): Promise<AgentAggregate> {
  const { storage } = deps;
  const subs = await storage.submissionsFor(round, agent);
  const forges = new Map((await storage.listForges()).map((f) => [f.id, f.name]));
  const names = subs.map((s) => forges.get(s.forgeId) ?? `#${s.forgeId}`);
  const layout = await storage.agentLayout(agent);
  if (!layout) throw new Error(`council.db: no layout stored for ${agent}, which has updates in round ${round}`);
  const row = { round, agent, recordedAt: deps.now().toISOString() };
  const base: AgentOutcome = { strategy: settings.strategy, byzantine: settings.f, forges: names, used: [], non_finite: [], skipped_reason: null, details: {} };
  const skipped = (reason: string): AgentAggregate => ({
    row: { ...row, updated: false, outcomeJson: JSON.stringify({ ...base, skipped_reason: reason }) },
    globalChunks: null,
    scores: [],
    log: [`council: round ${round}: ${agent} skipped: ${reason} (its global is unchanged)`],
  });
  const req = requirement(settings);
  if (subs.length < req.min) return skipped(`${req.rule}; got ${subs.length}`);
  const reader = await storage.chunkReader(subs, layout, agent, round);
  let outcome: AggregateOutcome;
  let globalChunks: Buffer[];
  const t0 = performance.now();
  try {
    const weights = settings.weights === 'counts' && subs.every((s) => s.weight !== null) ? subs.map((s) => s.weight as number) : undefined;
    outcome = aggregateUpdates({ n: reader.n, layout, read: (start, end) => reader.read(start, end), weights, base: reader.base }, settings, { pool: deps.pool ?? null });
    // The new global = previous global + aggregate update, stored as float32 chunks.
    globalChunks = chunkRanges(layout).map(([s, e]) => {
      const b = reader.base?.(s, e);
      const g = new Float32Array(e - s);
      for (let k = 0; k < g.length; k++) g[k] = (outcome.aggregate[s + k] as number) + (b ? (b[k] as number) : 0);
      return toLE(g);
    });
  } catch (err) {
    if (err instanceof AggregationError) return skipped(err.message);
    throw err;
  } finally {
    reader.close();
  }
  const sims = similarities(outcome.distanceToAggregate, deps.trustTolerance);
  const used = new Set(outcome.used);
  const scores: ScoreRow[] = subs.map((s, i) => ({ round, forgeId: s.forgeId, agent, distance2: outcome.distanceToAggregate[i] as number, similarity: sims[i] as number, used: used.has(i) }));
  const details: Record<string, unknown> = {};
  for (const key of ['selection', 'neighbours', 'm', 'theta', 'beta', 'trim', 'layers', 'unpaired'] as const) if (outcome[key] !== undefined) details[key] = outcome[key];
  if (outcome.scores) details.scores = Object.fromEntries(names.map((n, i) => [n, Number.isFinite(outcome.scores?.[i]) ? outcome.scores?.[i] : null]));
  details.similarity = Object.fromEntries(names.map((n, i) => [n, sims[i]]));
  const json: AgentOutcome = { ...base, used: outcome.used.map((i) => names[i] as string), non_finite: outcome.nonFinite.map((i) => names[i] as string), details };
  return {
    row: { ...row, updated: true, outcomeJson: JSON.stringify(json) },
    globalChunks,
    scores,
    log: [`council: round ${round}: ${agent} aggregated by ${settings.strategy} from ${outcome.used.length}/${subs.length} updates in ${(performance.now() - t0).toFixed(0)} ms`],
  };
}

/** Computes one agent of a round: in this thread, or (the server) in a worker thread. */
export type AgentAggregator = (round: number, agent: string, settings: RoundSettings) => Promise<AgentAggregate>;

/**
 * Aggregates every agent of a closed round that is not recorded yet, recording each as it is
 * done. Returns false when the round is not closing (already aggregated, or still open).
 */
export async function aggregateClosedRound(storage: CouncilStorage, round: number, compute: AgentAggregator, log: (line: string) => void, between?: () => Promise<void>): Promise<boolean> {
  const r = await storage.round(round);
  if (r?.state !== 'closing') return false;
  const settings = parseRoundSettings(r.strategyJson);
  const agents = await storage.agentsWithSubmissions(round);
  for (const agent of FEDERATING_AGENTS.filter((a) => agents.includes(a))) {
    if (await storage.aggregateOf(round, agent)) continue;
    const result = await compute(round, agent, settings);
    for (const line of result.log) log(line);
    await storage.recordAggregate(result.row, result.globalChunks, result.scores);
    await between?.();
  }
  return true;
}
