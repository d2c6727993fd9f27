import type { Agent } from '../../memoir/format/agents.js';
import type { TrainEvent } from '../../train/train-bond.js';

/**
 * The training display's state: a row per agent, driven by the trainer's events. Pure (unit
 * tested); the Ink view and the plain-text progress lines both read it.
 */
export interface AgentRow {
  agent: Agent;
  status: 'waiting' | 'training' | 'trained' | 'skipped';
  examples: number | null;
  epoch: number;
  epochs: number;
  batch: number;
  batches: number;
  trainLoss: number | null;
  stopLoss: number | null;
  stopMetric: number | null;
  examplesPerSec: number | null;
  /** Upper bound: early stopping may end sooner. */
  etaSec: number | null;
  version: number | null;
  reason: string | null;
}

export interface TrainState {
  rows: AgentRow[];
}

export const initialTrainState: TrainState = { rows: [] };

function blank(agent: Agent): AgentRow {
  return {
    agent,
    status: 'waiting',
    examples: null,
    epoch: 0,
    epochs: 0,
    batch: 0,
    batches: 0,
    trainLoss: null,
    stopLoss: null,
    stopMetric: null,
    examplesPerSec: null,
    etaSec: null,
    version: null,
    reason: null,
  };
}

function patch(s: TrainState, agent: Agent, f: (r: AgentRow) => AgentRow): TrainState {
  const rows = s.rows.some((r) => r.agent === agent) ? s.rows : [...s.rows, blank(agent)];
  return { rows: rows.map((r) => (r.agent === agent ? f(r) : r)) };
}

export function trainReducer(s: TrainState, e: TrainEvent): TrainState {
  switch (e.type) {
    case 'plan':
      return { rows: e.agents.map(blank) };
    case 'start':
      return patch(s, e.agent, (r) => ({ ...r, status: 'training', examples: e.examples }));
    case 'progress': {
      const p = e.progress;
      const done = (p.epoch - 1) * p.batches + p.batch;
      const total = p.epochs * p.batches;
      const rate = p.elapsedMs > 0 ? done / (p.elapsedMs / 1000) : 0;
      return patch(s, p.agent, (r) => ({
        ...r,
        status: 'training',
        epoch: p.epoch,
        epochs: p.epochs,
        batch: p.batch,
        batches: p.batches,
        trainLoss: p.trainLoss,
        stopLoss: p.stopLoss,
        stopMetric: p.stopMetric,
        examplesPerSec: p.examplesPerSec,
        etaSec: rate > 0 ? (total - done) / rate : null,
      }));
    }
    case 'trained':
      return patch(s, e.agent, (r) => ({
        ...r,
        status: 'trained',
        epoch: e.result.epochs,
        etaSec: 0,
        version: e.result.version,
        trainLoss: e.result.train_loss,
        stopMetric: e.result.metric?.value ?? r.stopMetric,
      }));
    case 'skipped':
      return patch(s, e.agent, (r) => ({ ...r, status: 'skipped', reason: e.reason, etaSec: null }));
  }
}

/** One plain line per agent for a non-interactive stderr. */
export function progressLine(r: AgentRow): string {
  if (r.status === 'skipped') return `${r.agent}: skipped — ${r.reason ?? ''}`;
  if (r.status === 'trained')
    return `${r.agent}: trained v${r.version ?? '?'} ${r.epoch === 0 ? 'by its direct fit alone' : `after ${r.epoch} epochs`}, train loss ${fmt(r.trainLoss)}`;
  if (r.status === 'waiting') return `${r.agent}: waiting`;
  return `${r.agent}: epoch ${r.epoch}/${r.epochs} batch ${r.batch}/${r.batches} · train loss ${fmt(r.trainLoss)} · stop loss ${fmt(r.stopLoss)} · ${r.examplesPerSec === null ? '—' : Math.round(r.examplesPerSec)} ex/s · eta ≤ ${r.etaSec === null ? '—' : `${Math.ceil(r.etaSec)}s`}`;
}

export function fmt(x: number | null): string {
  return x === null || !Number.isFinite(x) ? '—' : x.toFixed(4);
}
