import type { GramPool } from '../aggregation/gram-pool.js';
import { refusalOf } from '../aggregation/guard.js';
import {
  aggregateUpdates,
  chunkRanges,
  requirement,
  streamDistances,
  type AggregateOutcome,
} from '../aggregation/strategy.js';
import type { DistanceMatrix } from '../aggregation/pairwise-distances.js';
import { emptyStats, type UpdateStats } from '../aggregation/echo.js';
import { AggregationError } from '../aggregation/vec.js';
import { FEDERATING_AGENTS } from '../memoir/format/agents.js';
import { f32FromLE, toLE } from '../tensor/float-codec.js';
import type { AgentOutcome } from './outcome.js';
import { parseRoundSettings, type PrivacyPolicy, type RoundSettings } from './round-settings.js';
import { DamagedStateError, type AggregateRow, type CouncilStorage, type ScoreRow } from './storage.js';
import { publicInitFlat } from './public-init.js';
import type { RootSet } from './root-set.js';
import { similarities, structureEvidence, support } from './trust.js';

/**
 * Aggregating a closed round: a function of what storage holds and the settings the round froze,
 * nothing else — the server (in a worker thread), the simulator and the tests run this same code.
 *
 * Each agent is computed (read-only: `computeAgentAggregate`) and then recorded in one storage
 * call, so a crash between agents resumes with the agents not yet recorded, and an agent is
 * never aggregated twice. Before an agent is aggregated its stored updates are checked against
 * their digests (a damaged one is left out and reported); after, the result is checked against
 * what its inputs allow (aggregation/guard.ts) and, as float32, for finiteness: a refused
 * aggregate is recorded as a failed agent — loudly — and never stored or served.
 */
export interface AgentAggregate {
  row: AggregateRow;
  /** The new global adapter (float32 LE chunks), or null when the agent produced none. */
  globalChunks: Buffer[] | null;
  scores: ScoreRow[];
  /** Lines for the operator's log. */
  log: string[];
  /** Set when the aggregate was computed but refused (never stored). */
  refused?: string;
  /** Forges whose stored updates were damaged (left out). */
  damaged?: string[];
}

export interface AggregateDeps {
  storage: CouncilStorage;
  now: () => Date;
  pool?: GramPool | null;
  /** The similarity tolerance τ of trust scores (see trust.ts). */
  trustTolerance: number;
  /** The operator's root set (root-set.ts); absent: updates are not judged by it. */
  root?: RootSet | null;
}

/** Computes one agent's aggregate for a closed round; reads storage, writes nothing. */
export async function computeAgentAggregate(
  deps: AggregateDeps,
  round: number,
  agent: string,
  settings: RoundSettings,
): Promise<AgentAggregate> {
  const { storage } = deps;
  const all = await storage.submissionsFor(round, agent);
  const forgeNames = new Map((await storage.listForges()).map((f) => [f.id, f.name]));
  const nameOf = (forgeId: number): string => forgeNames.get(forgeId) ?? `#${forgeId}`;
  const damagedIds = new Set((await storage.damagedSubmissions(all)).map((d) => d.id));
  const subs = all.filter((s) => !damagedIds.has(s.id));
  const damaged = all.filter((s) => damagedIds.has(s.id)).map((s) => nameOf(s.forgeId));
  const names = subs.map((s) => nameOf(s.forgeId));
  const log = damaged.map(
    (f) =>
      `council: round ${round}: ${agent}: the stored update of forge "${f}" does not match its digest (council.db damaged?): left out`,
  );
  const layout = await storage.agentLayout(agent, round);
  if (!layout) throw new Error(`council.db: no layout for ${agent} in round ${round}, which has updates for it`);
  const row = { round, agent, recordedAt: deps.now().toISOString() };
  const base: AgentOutcome = {
    strategy: settings.strategy,
    byzantine: settings.f,
    forges: names,
    used: [],
    echoes: [],
    non_finite: [],
    damaged,
    skipped_reason: null,
    details: {},
  };
  const failed = (reason: string, refused: boolean): AgentAggregate => ({
    row: { ...row, updated: false, outcomeJson: JSON.stringify({ ...base, skipped_reason: reason }) },
    globalChunks: null,
    scores: [],
    log: [
      ...log,
      refused
        ? `council: round ${round}: ${agent}: AGGREGATE REFUSED — ${reason}; nothing stored, its global is unchanged (check the updates and the privacy policy)`
        : `council: round ${round}: ${agent} skipped: ${reason} (its global is unchanged)`,
    ],
    ...(refused ? { refused: reason } : {}),
    damaged,
  });
  const req = requirement(settings);
  if (subs.length < req.min)
    return failed(
      `${req.rule}; got ${subs.length}${damaged.length ? ` (${damaged.length} damaged left out)` : ''}`,
      false,
    );
  let outcome: AggregateOutcome;
  let pairwise: DistanceMatrix;
  let stats: UpdateStats;
  let globalChunks: Buffer[];
  // The root set needs each update and the global it applies to as whole vectors.
  const judged = deps.root && deps.root.size(agent) > 0 ? deps.root : null;
  const flats = judged ? subs.map(() => new Float32Array(layout.size)) : [];
  const globalFlat = judged ? new Float32Array(layout.size) : null;
  const t0 = performance.now();
  try {
    const reader = await storage.chunkReader(subs, layout, agent, round);
    try {
      const weights =
        settings.weights === 'counts' && subs.every((s) => s.weight !== null)
          ? subs.map((s) => s.weight as number)
          : undefined;
      // The updates are deltas from the previous global; before any, from the public initialisation (round 0).
      let base = reader.base;
      if (!base) {
        const init = publicInitFlat(layout, agent);
        base = (start, end) => init.subarray(start, end);
      }
      outcome = aggregateUpdates(
        { n: reader.n, layout, read: (start, end) => reader.read(start, end), weights, base },
        settings,
        { pool: deps.pool ?? null },
      );
      const refusal = refusalOf(
        outcome.aggregate,
        subs.map((s) => s.norm),
        outcome,
      );
      if (refusal) return failed(`aggregate refused: ${refusal}`, true);
      // Trust's structure evidence needs every pair and each update's spread; rules without a selection did not compute them.
      const gathered = outcome.pairwise && outcome.stats ? { pairwise: outcome.pairwise, stats: outcome.stats } : null;
      if (gathered) ({ pairwise, stats } = gathered);
      else {
        stats = emptyStats(reader.n);
        pairwise = streamDistances(
          { n: reader.n, layout, read: (start, end) => reader.read(start, end) },
          chunkRanges(layout),
          undefined,
          deps.pool ?? null,
          stats,
        );
      }
      // The root set judges whole vectors: each update and the global it applies to.
      if (judged)
        for (const [start, end] of chunkRanges(layout)) {
          reader.read(start, end).forEach((r, i) => (flats[i] as Float32Array).set(r, start));
          (globalFlat as Float32Array).set((base as NonNullable<typeof base>)(start, end), start);
        }
      // The new global = previous global + server_lr × aggregate update, stored as float32 chunks.
      const lr = settings.server_lr;
      globalChunks = chunkRanges(layout).map(([s, e]) => {
        const b = (base as NonNullable<typeof base>)(s, e);
        const g = new Float32Array(e - s);
        for (let k = 0; k < g.length; k++) g[k] = lr * (outcome.aggregate[s + k] as number) + (b[k] as number);
        return toLE(g);
      });
    } finally {
      reader.close();
    }
  } catch (err) {
    if (err instanceof AggregationError) return failed(err.message, false);
    if (err instanceof DamagedStateError) return failed(`aggregate refused: ${err.message}`, true);
    throw err;
  }
  const notFinite = firstNonFiniteChunk(globalChunks);
  if (notFinite !== null)
    return failed(
      `aggregate refused: the new global is not finite in float32 (chunk ${notFinite}): previous global + aggregate overflows`,
      true,
    );
  const evidence = structureEvidence(
    {
      pair2: pairwise.d2,
      norm2: Array.from(stats.norm2),
      supports: Array.from(stats.norm2, (a, i) => support(a, stats.sum4[i] as number)),
      nonzero: Array.from(stats.nonzero),
    },
    layout.size,
  );
  // What each update does to the operator's root pairs: recorded for the operator; trust does not act on it.
  const rootEffects = judged ? judged.effects(agent, layout, globalFlat as Float32Array, flats) : null;
  // The round's similarity: the distance score, 0 where the update shows an echo or no structure.
  const sims = similarities(outcome.distanceToAggregate, deps.trustTolerance).map((s, i) => (evidence[i] ? 0 : s));
  const used = new Set(outcome.used);
  const scores: ScoreRow[] = subs.map((s, i) => ({
    round,
    forgeId: s.forgeId,
    agent,
    distance2: outcome.distanceToAggregate[i] as number,
    similarity: sims[i] as number,
    used: used.has(i),
  }));
  const details: Record<string, unknown> = {};
  for (const key of ['selection', 'neighbours', 'm', 'theta', 'beta', 'trim', 'layers', 'unpaired'] as const)
    if (outcome[key] !== undefined) details[key] = outcome[key];
  if (outcome.scores)
    details.scores = Object.fromEntries(
      names.map((n, i) => [n, Number.isFinite(outcome.scores?.[i]) ? outcome.scores?.[i] : null]),
    );
  details.similarity = Object.fromEntries(names.map((n, i) => [n, sims[i]]));
  if (rootEffects) details.root = Object.fromEntries(names.map((n, i) => [n, rootEffects[i]]));
  if (evidence.some((e) => e !== null))
    details.evidence = Object.fromEntries(names.flatMap((n, i) => (evidence[i] ? [[n, evidence[i]]] : [])));
  const echoes = (outcome.echoes ?? []).map((g) => g.map((i) => names[i] as string));
  const json: AgentOutcome = {
    ...base,
    used: outcome.used.map((i) => names[i] as string),
    echoes,
    non_finite: outcome.nonFinite.map((i) => names[i] as string),
    details,
  };
  return {
    row: { ...row, updated: true, outcomeJson: JSON.stringify(json) },
    globalChunks,
    scores,
    log: [
      ...log,
      ...echoes.map(
        (g) => `council: round ${round}: ${agent}: ${g.length} identical updates (${g.join(', ')}) counted once`,
      ),
      `council: round ${round}: ${agent} aggregated by ${settings.strategy} from ${outcome.used.length}/${all.length} updates in ${(performance.now() - t0).toFixed(0)} ms`,
    ],
    damaged,
  };
}

function firstNonFiniteChunk(chunks: readonly Buffer[]): number | null {
  for (const [i, c] of chunks.entries()) {
    const v = f32FromLE(c);
    for (let k = 0; k < v.length; k++) if ((v[k] as number) - (v[k] as number) !== 0) return i;
  }
  return null;
}

/** Computes one agent of a round: in this thread, or (the server) in a worker thread. */
export type AgentAggregator = (round: number, agent: string, settings: RoundSettings) => Promise<AgentAggregate>;

/**
 * Aggregates every agent of a closed round that is not recorded yet, recording each as it is
 * done. Returns false when the round is not closing (already aggregated, or still open).
 */
export async function aggregateClosedRound(
  storage: CouncilStorage,
  round: number,
  compute: AgentAggregator,
  opts: { log: (line: string) => void; fallbackPolicy: PrivacyPolicy; now: () => Date; between?: () => Promise<void> },
): Promise<boolean> {
  const r = await storage.round(round);
  if (r?.state !== 'closing') return false;
  const settings = parseRoundSettings(r.strategyJson, opts.fallbackPolicy);
  const agents = await storage.agentsWithSubmissions(round);
  for (const agent of FEDERATING_AGENTS.filter((a) => agents.includes(a))) {
    if (await storage.aggregateOf(round, agent)) continue;
    let result = await compute(round, agent, settings);
    // Whoever computed it, a global that is not finite is never kept.
    if (result.globalChunks && firstNonFiniteChunk(result.globalChunks) !== null) {
      const reason = 'aggregate refused: the new global is not finite';
      result = {
        ...result,
        row: {
          ...result.row,
          updated: false,
          outcomeJson: JSON.stringify({ ...JSON.parse(result.row.outcomeJson), skipped_reason: reason }),
        },
        globalChunks: null,
        scores: [],
        refused: reason,
        log: [`council: round ${round}: ${agent}: AGGREGATE REFUSED — ${reason}`],
      };
    }
    for (const line of result.log) opts.log(line);
    await storage.recordAggregate(result.row, result.globalChunks, result.scores);
    const at = opts.now().toISOString();
    if (result.refused)
      await storage.recordEvent({
        at,
        round,
        forgeId: null,
        kind: 'aggregate_refused',
        detailJson: JSON.stringify({ agent, reason: result.refused }),
      });
    if (result.damaged?.length)
      await storage.recordEvent({
        at,
        round,
        forgeId: null,
        kind: 'update_damaged',
        detailJson: JSON.stringify({ agent, forges: result.damaged }),
      });
    await opts.between?.();
  }
  return true;
}
