import { availableParallelism } from 'node:os';
import type { FederatingAgent } from '../memoir/format/agents.js';
import type { BaseModel } from '../train/base-model.js';
import type { BaseSpec } from '../train/base-spec.js';
import type { Example } from '../train/examples/types.js';
import type { Features } from '../train/features.js';
import { headOf } from '../train/adapter-layout.js';
import { loraWeights } from '../train/lora.js';
import type { Worker } from 'node:worker_threads';
import { CancelledError } from '../errors.js';
import { startWorker } from '../runtime/worker-start.js';
import { workerBuilt, workerUrl } from '../runtime/worker-url.js';
import { train, type TrainSettings } from '../train/trainer.js';

/**
 * The trainings of one round, run side by side: a simulated forge is its data view and its
 * adapter, so a round's cohort is a list of independent training jobs. With worker threads
 * (one per core, at most `threads`; train-worker.ts) the jobs spread over them; without (the
 * worker is not built, or `--threads 0`), they run here one after the other. Either way each job
 * is the trainer's own `train()` on the same inputs, so the numbers are the same.
 */
export interface PoolJob {
  agent: FederatingAgent;
  kind: 'bond' | 'council';
  examples: readonly Example[];
  /** Start adapter (the trainer's flat layout); null: the PEFT initialisation. */
  start: Float64Array | null;
  /** Adapters held frozen while training (flat, with rank and α). */
  frozen: { all: Float64Array; rank: number; alpha: number }[];
  settings: TrainSettings;
}

export interface TrainPool {
  readonly threads: number;
  /** The trained adapters in job order (null: the trainer skipped the job). */
  run(jobs: readonly PoolJob[], onDone?: () => void): Promise<(Float64Array | null)[]>;
  close(): Promise<void>;
}

export function inlinePool(base: BaseModel, encode: (t: string) => Features, shouldStop?: () => boolean): TrainPool {
  return {
    threads: 0,
    run: async (jobs, onDone) => {
      const out: (Float64Array | null)[] = [];
      for (const j of jobs) {
        const dims = {
          inDim: base.inDim,
          hidden: base.hidden,
          out: base.headOut(headOf(j.agent)),
          rank: j.settings.rank,
        };
        const r = train(
          base,
          encode,
          {
            agent: j.agent,
            kind: j.kind,
            examples: j.examples,
            settings: j.settings,
            start: j.start ? loraWeights(dims, Float64Array.from(j.start)) : null,
            frozen: j.frozen.map((f) => ({ lora: loraWeights({ ...dims, rank: f.rank }, f.all), alpha: f.alpha })),
          },
          shouldStop ? { shouldStop } : {},
        );
        out.push(r.status === 'trained' ? r.lora.all : null);
        onDone?.();
        // Let Ctrl-C's handler run between trainings.
        await new Promise((res) => setImmediate(res));
      }
      return out;
    },
    close: async () => undefined,
  };
}

/** One long-lived simulation training thread (train-worker.ts), one job at a time. */
class Lane {
  private readonly worker: Worker;
  private next = 1;
  private pending: { id: number; resolve: (v: Float64Array | null) => void; reject: (e: Error) => void } | null = null;
  private dead: Error | null = null;

  constructor(url: URL, spec: BaseSpec) {
    this.worker = startWorker(url, { workerData: { spec } });
    this.worker.on('message', (m: { id: number; lora?: Float64Array | null; error?: string }) => {
      const p = this.pending;
      if (!p || p.id !== m.id) return;
      this.pending = null;
      if (m.error !== undefined) p.reject(new Error(`training failed in a simulation worker: ${m.error}`));
      else p.resolve(m.lora ?? null);
    });
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`a simulation training worker exited (code ${code})`)));
  }

  fail(err: Error): void {
    this.dead ??= err;
    const p = this.pending;
    this.pending = null;
    p?.reject(this.dead);
  }

  train(job: PoolJob): Promise<Float64Array | null> {
    if (this.dead) return Promise.reject(this.dead);
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending = { id, resolve, reject };
      this.worker.postMessage({ id, job });
    });
  }

  async close(): Promise<void> {
    this.dead ??= new Error('the simulation worker is closed');
    await this.worker.terminate();
  }
}

/** Worker threads for the trainings: min(threads, cores); null when the worker is not built. */
export function workerPool(spec: BaseSpec, threads: number, signal: AbortSignal): TrainPool | null {
  const url = workerUrl(import.meta.url, 'simulation', 'train-worker.js');
  if (!workerBuilt(url)) return null;
  const n = Math.max(1, Math.min(threads, availableParallelism()));
  const lanes = Array.from({ length: n }, () => new Lane(url, spec));
  const onAbort = (): void => {
    for (const l of lanes) {
      l.fail(new CancelledError());
      void l.close();
    }
  };
  signal.addEventListener('abort', onAbort, { once: true });
  return {
    threads: n,
    run: async (jobs, onDone) => {
      const out: (Float64Array | null)[] = new Array<Float64Array | null>(jobs.length).fill(null);
      let next = 0;
      const lane = async (l: Lane): Promise<void> => {
        while (next < jobs.length) {
          const i = next++;
          const j = jobs[i] as PoolJob;
          // The worker receives copies (structured clone): the caller's arrays stay usable.
          out[i] = await l.train(j);
          onDone?.();
        }
      };
      await Promise.all(lanes.map(lane));
      return out;
    },
    close: async () => {
      signal.removeEventListener('abort', onAbort);
      await Promise.all(lanes.map((l) => l.close()));
    },
  };
}
