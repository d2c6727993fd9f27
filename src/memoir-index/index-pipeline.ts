import type { Worker } from 'node:worker_threads';
import type { FileHashes, RowBatch, RowContent } from './index-rows.js';
import { startWorker } from '../runtime/worker-start.js';
import { workerBuilt, workerUrl } from '../runtime/worker-url.js';
import type { WorkerInput, WorkerMessage } from './index-worker.js';

const workerScript = (): URL => workerUrl(import.meta.url, 'memoir-index', 'index-worker.js');

/** Whether the worker can run here (built); otherwise bulk builds parse on the main thread. */
export function workerAvailable(): boolean {
  return workerBuilt(workerScript());
}

export type Next = { batch: RowBatch } | { end: FileHashes | null } | { wait: Promise<void> };

/**
 * Row batches of one file parsed in a worker thread (index-worker.ts), so that a bulk build uses
 * two cores: the worker reads, validates and encodes batch k+1 while the main thread inserts
 * batch k. At most `ahead` batches wait on the main side (bounded memory).
 */
export class WorkerRows {
  private readonly worker: Worker;
  private readonly credits: Int32Array;
  private readonly queue: WorkerMessage[] = [];
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  private done = false;

  constructor(
    fd: number,
    untilOffset: number,
    batchEntries: number,
    opts: { content?: RowContent; hashes?: boolean; ahead?: number } = {},
  ) {
    const ahead = opts.ahead ?? 2;
    const shared = new SharedArrayBuffer(4);
    this.credits = new Int32Array(shared);
    this.credits[0] = ahead;
    const input: WorkerInput = {
      fd,
      untilOffset,
      batchEntries,
      content: opts.content ?? 'all',
      hashes: opts.hashes !== false,
      credits: shared,
    };
    this.worker = startWorker(workerScript(), { workerData: input });
    this.worker.on('message', (m: WorkerMessage) => {
      this.queue.push(m);
      this.wakeUp();
    });
    this.worker.on('error', (err) => {
      this.failure = err;
      this.wakeUp();
    });
    this.worker.on('exit', (code) => {
      if (!this.done && code !== 0) this.failure ??= new Error(`the index worker stopped (exit ${code})`);
      this.wakeUp();
    });
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  /** The next batch, the end (with the file's hashes, unless not asked for), or a promise to await first. */
  next(): Next {
    const m = this.queue.shift();
    if (m === undefined) {
      if (this.failure) throw this.failure;
      return { wait: new Promise<void>((resolve) => (this.wake = resolve)) };
    }
    if (m.type === 'error') throw Object.assign(new Error(m.message), m.code ? { code: m.code } : {});
    if (m.type === 'end') {
      this.done = true;
      return { end: m.hashes };
    }
    Atomics.add(this.credits, 0, 1);
    Atomics.notify(this.credits, 0);
    return { batch: m.batch };
  }

  /** Stops the worker (done, cancelled or failed); it never writes anything. */
  stop(): void {
    this.done = true;
    // Unblock a worker waiting for a credit, then end it.
    Atomics.store(this.credits, 0, 1 << 30);
    Atomics.notify(this.credits, 0);
    void this.worker.terminate();
  }
}

/**
 * A file's row batches, from the worker when there is one, else read here (`local`), with a promise
 * wherever the worker is behind (yield it on, then go on). Returns the worker's file hashes (null when
 * read here or not asked for).
 */
export function* rowBatches(
  worker: WorkerRows | undefined,
  local: Iterator<RowBatch> | undefined,
): Generator<RowBatch | Promise<void>, FileHashes | null> {
  for (;;) {
    if (!worker) {
      const it = (local as Iterator<RowBatch>).next();
      if (it.done) return null;
      yield it.value;
      continue;
    }
    const next = worker.next();
    if ('end' in next) return next.end;
    yield 'wait' in next ? next.wait : next.batch;
  }
}
