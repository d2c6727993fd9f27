import { AGENTS, isBondOnly, type Agent } from '../memoir/format/agents.js';
import type { AdapterRow } from '../store/adapter-registry.js';
import type { AdapterStore } from './adapter-store.js';
import type { Example } from './examples/types.js';
import type { Metric } from './metrics.js';
import type { TextEncoder } from './text-encoder.js';
import type { TrainerWorker } from './train-in-worker.js';
import type { EpochProgress, LambdaCache, TrainReport, TrainSettings } from './trainer.js';
import { loraWeights } from './lora.js';
import { headOf } from './adapter-layout.js';
import { resolveLean } from './applied-lean.js';

/**
 * `kourai train bond`, as a service: for each agent, its bond view (every entry, private ones
 * included), the agent's current council adapter applied frozen (when it is applied at all: one
 * that did not help on the player's held-out scenes is left out), training in the worker, and a
 * new bond version written and made current. An agent's version is committed as soon as it is
 * trained, so Ctrl-C keeps the agents already done and leaves the agent in training (and the
 * rest) on their previous version.
 */
export interface BondData {
  examples: Example[];
  /** Entries looked at but not used, by reason (from the data view). */
  skipped: Record<string, number>;
  /** What the examples were drawn from (recorded with the version). */
  window: Record<string, unknown>;
}

export type TrainEvent =
  | { type: 'plan'; agents: Agent[] }
  | { type: 'start'; agent: Agent; examples: number }
  | { type: 'progress'; progress: EpochProgress }
  | { type: 'trained'; agent: Agent; result: TrainedAgent }
  | { type: 'skipped'; agent: Agent; reason: string };

export interface TrainedAgent {
  agent: Agent;
  status: 'trained';
  version: number;
  path: string;
  parent_version: number | null;
  council_version: number | null;
  examples: TrainReport['examples'];
  scenes: TrainReport['scenes'];
  epochs: number;
  best_epoch: number;
  stopped_early: boolean;
  train_loss: number;
  validation_loss: number;
  /** The headline metric (the first of `metrics`). */
  metric: Metric | null;
  metrics: Metric[];
  examples_per_sec: number;
  /** The direct path's fit: its λ, the blocks it left out (`hold`), how they were chosen and whether reused. */
  direct: { lambda: number; hold: string; chosen_by: string; reused: boolean };
  /** Entries (or labels) looked at but not used, by reason. */
  unused: Record<string, number>;
}

export interface SkippedAgent {
  agent: Agent;
  status: 'skipped';
  reason: string;
  examples: number;
  /** Entries (or labels) looked at but not used, by reason. */
  unused: Record<string, number>;
}

export type AgentResult = TrainedAgent | SkippedAgent;

export interface TrainBondOptions {
  agents: readonly Agent[];
  settings: TrainSettings;
  data(agent: Agent): Promise<BondData> | BondData;
  encoder: TextEncoder;
  store: AdapterStore;
  worker: TrainerWorker;
  now: () => Date;
  onEvent?: (e: TrainEvent) => void;
}

export function defaultAgents(): Agent[] {
  return [...AGENTS];
}

export async function trainBonds(o: TrainBondOptions): Promise<AgentResult[]> {
  const emit = o.onEvent ?? (() => undefined);
  emit({ type: 'plan', agents: [...o.agents] });
  const results: AgentResult[] = [];
  for (const agent of o.agents) {
    const data = await o.data(agent);
    emit({ type: 'start', agent, examples: data.examples.length });
    const council = isBondOnly(agent) ? null : councilUnder(o.store, agent);
    const texts = data.examples.flatMap((e) => (e.kind === 'pair' ? [e.chosen, e.rejected] : [e.text]));
    const outcome = await o.worker.train(
      o.encoder.spec,
      {
        agent,
        kind: 'bond',
        examples: data.examples,
        settings: o.settings,
        start: null,
        frozen: council ? [{ all: council.lora.all, rank: council.lora.rank, alpha: council.config.lora_alpha }] : [],
        lambdaCache: lambdaCacheOf(o.store.registry.current(agent, 'bond')),
      },
      { embedded: await o.encoder.embedded(texts), onProgress: (p) => emit({ type: 'progress', progress: p }) },
    );
    if (outcome.status === 'skipped') {
      const r: SkippedAgent = {
        agent,
        status: 'skipped',
        reason: outcome.reason,
        examples: outcome.examples,
        unused: data.skipped,
      };
      results.push(r);
      emit({ type: 'skipped', agent, reason: r.reason });
      continue;
    }
    const { report } = outcome;
    const dims = {
      inDim: o.encoder.base.inDim,
      hidden: o.encoder.base.hidden,
      out: o.encoder.base.headOut(headOf(agent)),
      rank: o.settings.rank,
    };
    const row: AdapterRow = o.store.save({
      agent,
      kind: 'bond',
      lora: loraWeights(dims, outcome.lora),
      alpha: o.settings.alpha,
      origin: 'trained',
      metrics: {
        ...summary(report),
        council_version: council?.row.version ?? null,
        settings: report.settings,
        direct: directRecord(report),
      },
      dataWindow: { view: 'bond', ...data.window, skipped: data.skipped },
      createdAt: o.now().toISOString(),
    });
    const r: TrainedAgent = {
      agent,
      status: 'trained',
      version: row.version,
      path: row.path,
      parent_version: row.parentVersion,
      council_version: council?.row.version ?? null,
      ...summary(report),
      unused: data.skipped,
    };
    results.push(r);
    emit({ type: 'trained', agent, result: r });
  }
  return results;
}

function summary(
  r: TrainReport,
): Omit<TrainedAgent, 'agent' | 'status' | 'version' | 'path' | 'parent_version' | 'council_version' | 'unused'> {
  return {
    examples: r.examples,
    scenes: r.scenes,
    epochs: r.epochs,
    best_epoch: r.bestEpoch,
    stopped_early: r.stoppedEarly,
    train_loss: r.trainLoss,
    validation_loss: r.valLoss,
    metric: r.metrics[0] ?? null,
    metrics: r.metrics,
    examples_per_sec: r.examplesPerSec,
    direct: directSummary(r),
  };
}

/** What a version records of its direct path's λ: with the digest, the next run can reuse the choice. */
function directRecord(r: TrainReport): {
  lambda: number;
  hold: string;
  chosen_by: string;
  reused: boolean;
  digest: string | null;
  curve: LambdaCache['curve'];
} {
  const d = r.direct;
  return { lambda: d.lambda, hold: d.hold, chosen_by: d.chosenBy, reused: d.reused, digest: d.digest, curve: d.curve };
}

/** What `--json` says of the direct path's fit: the record without its digest and curve. */
function directSummary(r: TrainReport): TrainedAgent['direct'] {
  const { lambda, hold, chosen_by, reused } = directRecord(r);
  return { lambda, hold, chosen_by, reused };
}

/** The λ choice recorded with an agent's current bond version, if it has one (older versions do not). */
function lambdaCacheOf(row: AdapterRow | null): LambdaCache | null {
  const d = (row?.metrics as { direct?: Partial<ReturnType<typeof directRecord>> } | null | undefined)?.direct;
  if (
    !d ||
    typeof d.digest !== 'string' ||
    typeof d.lambda !== 'number' ||
    typeof d.hold !== 'string' ||
    !Array.isArray(d.curve)
  )
    return null;
  return { digest: d.digest, lambda: d.lambda, hold: d.hold, curve: d.curve };
}

/** The council adapter a new bond trains over: the current one, unless scoring would not apply it now (applied-lean.ts). */
function councilUnder(store: AdapterStore, agent: Agent): ReturnType<AdapterStore['loadCurrent']> {
  const council = store.loadCurrent(agent, 'council');
  if (!council) return null;
  const bond = store.registry.current(agent, 'bond');
  const now = resolveLean({
    use: 'both',
    taskType: null,
    council: { version: council.row.version, metrics: council.row.metrics },
    bond: bond ? { version: bond.version, metrics: bond.metrics } : null,
  });
  return now.council ? council : null;
}
