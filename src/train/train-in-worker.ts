import { fileURLToPath } from 'node:url';
import type { Worker } from 'node:worker_threads';
import { CancelledError } from '../errors.js';
import { startWorker } from '../runtime/worker-start.js';
import { workerBuilt, workerUrl } from '../runtime/worker-url.js';
import type { BaseSpec } from './base-spec.js';
import type { EpochProgress } from './trainer.js';
import type { EmbeddedTexts, FromWorker, WorkerJob, WorkerOutcome } from './worker-protocol.js';

/**
 * The training worker, seen from the main thread: one worker thread trains jobs one after the
 * other; progress arrives as events; aborting the signal terminates the worker at once (a
 * training run holds nothing on disk) and the pending job rejects with CancelledError.
 */
const workerScript = (): URL => workerUrl(import.meta.url, 'train', 'train-worker.js');

export class TrainerWorker {
  private readonly worker: Worker;
  private nextId = 1;
  private pending: {
    id: number;
    resolve: (o: WorkerOutcome) => void;
    reject: (e: Error) => void;
    onProgress: ((p: EpochProgress) => void) | undefined;
  } | null = null;
  private dead: Error | null = null;
  private readonly onAbort: () => void;

  constructor(private readonly signal: AbortSignal) {
    const url = workerScript();
    if (!workerBuilt(url))
      throw new Error(`the training worker is not built: ${fileURLToPath(url)} (run \`npm run build\`)`);
    this.worker = startWorker(url);
    this.worker.on('message', (m: FromWorker) => this.receive(m));
    this.worker.on('error', (err) => this.fail(err));
    this.worker.on('exit', (code) => this.fail(new Error(`the training worker exited (code ${code})`)));
    this.onAbort = () => {
      this.fail(new CancelledError());
      void this.worker.terminate();
    };
    if (signal.aborted) this.onAbort();
    else signal.addEventListener('abort', this.onAbort, { once: true });
  }

  private receive(m: FromWorker): void {
    const p = this.pending;
    if (!p || m.id !== p.id) return;
    if (m.type === 'progress') p.onProgress?.(m.progress);
    else {
      this.pending = null;
      if (m.type === 'done') p.resolve(m.outcome);
      else {
        const err = new Error(`training failed in the worker: ${m.message}`);
        if (m.stack) err.stack = m.stack;
        p.reject(err);
      }
    }
  }

  private fail(err: Error): void {
    if (!this.dead) this.dead = err;
    const p = this.pending;
    this.pending = null;
    p?.reject(this.dead);
  }

  train(
    spec: BaseSpec,
    job: WorkerJob,
    opts: { embedded?: EmbeddedTexts | null; onProgress?: (p: EpochProgress) => void } = {},
  ): Promise<WorkerOutcome> {
    if (this.dead) return Promise.reject(this.dead);
    if (this.pending) return Promise.reject(new Error('the training worker runs one job at a time'));
    const id = this.nextId++;
    return new Promise<WorkerOutcome>((resolve, reject) => {
      this.pending = { id, resolve, reject, onProgress: opts.onProgress };
      this.worker.postMessage({ type: 'train', id, spec, job, embedded: opts.embedded ?? null });
    });
  }

  async close(): Promise<void> {
    this.signal.removeEventListener('abort', this.onAbort);
    this.dead ??= new Error('the training worker is closed');
    await this.worker.terminate();
  }
}
