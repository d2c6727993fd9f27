import { availableParallelism, loadavg } from 'node:os';
import type { Worker } from 'node:worker_threads';
import type { LineChunk } from './verify-scan.js';
import { startWorker } from '../runtime/worker-start.js';
import { workerBuilt, workerUrl } from '../runtime/worker-url.js';
import type { VerifyWorkerInput, VerifyWorkerMessage } from './verify-worker.js';

const workerScript = (): URL => workerUrl(import.meta.url, 'memoir', 'verify-worker.js');

/** Whether the worker can run here (built); otherwise verify reads on the main thread alone. */
export function verifyWorkerAvailable(): boolean {
  return workerBuilt(workerScript());
}

/**
 * The default thread count: one per idle core, judged by the 1-minute load average (as `make -l`
 * does): an idle 2-core machine reads a memoir in two halves. On a busy machine a worker only adds
 * its start-up and its own JIT warm-up (~0.2 s of CPU) to work no core is free to share: measured on
 * the shared 2-core machine at load 5–9, two threads took 1.5–2× the wall time of one at 100k entries.
 */
export function defaultThreads(cores = availableParallelism(), load = loadavg()[0] ?? 0): number {
  return Math.max(1, Math.min(8, cores, Math.round(cores - load)));
}

/**
 * The main thread's side of a range read in a worker (verify-worker.ts): the range's chunks in
 * order, as they arrive. The worker runs ahead freely: what waits is a few dozen bytes per entry.
 */
export class RangeWorker {
  private readonly worker: Worker;
  private readonly queue: LineChunk[] = [];
  private failure: Error | undefined;
  private wake: (() => void) | undefined;
  private ended = false;
  /** The file offset the worker has read up to (progress). */
  reached: number;
  /** Chunks handed out so far: until the first, a failed worker's range can be read elsewhere. */
  delivered = 0;

  constructor(input: VerifyWorkerInput) {
    this.reached = input.range.from;
    this.worker = startWorker(workerScript(), { workerData: input });
    this.worker.on('message', (m: VerifyWorkerMessage) => {
      if (m.type === 'error') this.failure ??= Object.assign(new Error(m.message), m.code ? { code: m.code } : {});
      else {
        if (m.chunk.bytes >= 0) this.reached = m.chunk.bytes;
        if (m.chunk.last) this.ended = true;
        this.queue.push(m.chunk);
      }
      this.wakeUp();
    });
    this.worker.on('error', (err) => {
      this.failure ??= err;
      this.wakeUp();
    });
    this.worker.on('exit', (code) => {
      if (!this.ended) this.failure ??= new Error(`the verify worker stopped before the end of its range (exit ${code})`);
      this.wakeUp();
    });
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  /** The range's next chunk (the last one has `last`), waiting for the worker when none is there yet. */
  async next(): Promise<LineChunk> {
    for (;;) {
      const c = this.queue.shift();
      if (c !== undefined) {
        this.delivered++;
        return c;
      }
      if (this.failure) throw this.failure;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  /** Ends the worker (done, cancelled or failed); it never writes anything. */
  stop(): void {
    this.ended = true;
    void this.worker.terminate();
  }
}
