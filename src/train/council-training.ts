import { UsageError } from '../errors.js';
import { isBondOnly, type Agent } from '../memoir/format/agents.js';
import { headOf } from './adapter-layout.js';
import type { BaseModel } from './base-model.js';
import type { Example } from './examples/types.js';
import { loraWeights, type LoraWeights } from './lora.js';
import type { TrainerWorker } from './train-in-worker.js';
import type { EpochProgress, TrainReport, TrainSettings } from './trainer.js';
import type { EmbeddedTexts } from './worker-protocol.js';

/**
 * The federation round's local step: train an agent's council adapter on
 * its council view, starting from the current global council adapter. Base + council only: no
 * bond adapter is ever applied, so the council delta cannot depend on private data through the
 * bond. Returns the trained adapter (the caller computes and releases the delta).
 */
export interface CouncilTrainingInput {
  base: BaseModel;
  agent: Agent;
  /** The council view's examples (councilView: shareable entries, council fields only). */
  examples: readonly Example[];
  /** The current global council adapter (null: PEFT init); its rank must be settings.rank. */
  start: LoraWeights | null;
  settings: TrainSettings;
  worker: TrainerWorker;
  /** Endpoint encoders: the texts embedded beforehand (TextEncoder.embedded). */
  embedded?: EmbeddedTexts | null;
  onProgress?: (p: EpochProgress) => void;
}

export type CouncilTrainingResult =
  | { status: 'trained'; lora: LoraWeights; report: TrainReport }
  | { status: 'skipped'; reason: string; examples: number };

export async function trainCouncil(i: CouncilTrainingInput): Promise<CouncilTrainingResult> {
  if (isBondOnly(i.agent)) throw new UsageError(`${i.agent} has no council adapter: Cupid and Puck are bond-only`);
  if (i.start && i.start.rank !== i.settings.rank)
    throw new UsageError(`the starting council adapter has rank ${i.start.rank}, the settings say ${i.settings.rank}`);
  const outcome = await i.worker.train(
    i.base.spec,
    {
      agent: i.agent,
      kind: 'council',
      examples: i.examples,
      settings: i.settings,
      start: i.start ? Float64Array.from(i.start.all) : null,
      frozen: [],
    },
    { embedded: i.embedded ?? null, ...(i.onProgress ? { onProgress: i.onProgress } : {}) },
  );
  if (outcome.status === 'skipped') return { status: 'skipped', reason: outcome.reason, examples: outcome.examples };
  const dims = {
    inDim: i.base.inDim,
    hidden: i.base.hidden,
    out: i.base.headOut(headOf(i.agent)),
    rank: i.settings.rank,
  };
  return { status: 'trained', lora: loraWeights(dims, outcome.lora), report: outcome.report };
}
