import type { BaseSpec } from './base-spec.js';
import type { Example } from './examples/types.js';
import type { EpochProgress, LambdaCache, TrainReport, TrainSettings } from './trainer.js';

/** Messages between the main thread and the training worker (structured clone; buffers transferred). */
export interface WorkerJob {
  agent: Example['agent'];
  kind: 'bond' | 'council';
  examples: readonly Example[];
  settings: TrainSettings;
  /** LoRA buffers in the trainer's internal layout (lora.ts) for this base and agent; start has settings.rank. */
  start: Float64Array | null;
  frozen: { all: Float64Array; rank: number; alpha: number }[];
  /** An earlier λ choice to reuse when its digest matches (trainer.ts TrainJob). */
  lambdaCache?: LambdaCache | null;
}

/** Pre-computed inputs for an endpoint encoder: text i's embedding is data[i·dim … (i+1)·dim). */
export interface EmbeddedTexts {
  texts: string[];
  dim: number;
  data: Float32Array;
}

export type ToWorker = { type: 'train'; id: number; spec: BaseSpec; job: WorkerJob; embedded: EmbeddedTexts | null };

export type WorkerOutcome =
  | { status: 'trained'; report: TrainReport; lora: Float64Array }
  | { status: 'skipped'; agent: Example['agent']; reason: string; examples: number };

export type FromWorker =
  | { type: 'progress'; id: number; progress: EpochProgress }
  | { type: 'done'; id: number; outcome: WorkerOutcome }
  | { type: 'error'; id: number; message: string; stack: string | undefined };
