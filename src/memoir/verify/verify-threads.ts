import { availableParallelism, loadavg } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { adoptChunk, type LineChunk } from './verify-scan.js';
import { DEFAULT_SPLIT_BYTES } from './verify-blocks.js';
import { startWorker } from '../../runtime/worker-start.js';
import { workerBuilt, workerUrl } from '../../runtime/worker-url.js';
import type { VerifyWorkerInput, VerifyWorkerMessage } from './verify-worker.js';

const workerScript = (): URL => workerUrl(import.meta.url, 'memoir/verify', 'verify-worker.js');

/** Whether the worker can run here (built); otherwise verify reads on the main thread alone. */
export function verifyWorkerAvailable(): boolean {
  return workerBuilt(workerScript());
}

/**
 * The default thread count: one per idle core, judged by the 1-minute load average (as `make -l`
 * does), for a file of at least DEFAULT_SPLIT_BYTES; one below that. On a busy machine a worker only
 * adds its start-up and its own JIT warm-up to work no core is free to share (two threads took
 * 1.5–2× the wall time of one at 100k entries at load 5–9).
 */
export function defaultThreads(cores = availableParallelism(), load = loadavg()[0] ?? 0, size = Infinity): number {
  if (size < DEFAULT_SPLIT_BYTES) return 1;
  return Math.max(1, Math.min(8, cores, Math.round(cores - load)));
}

/**
 * The main thread's side of one worker (verify-worker.ts): the chunks of the blocks it claimed, by
 * block, as they arrive. The worker runs ahead freely: what waits is a few dozen bytes per entry.
 */
export class BlockWorker {
  private readonly worker: Worker;
  private readonly chunks = new Map<number, LineChunk[]>();
  private readonly complete = new Set<number>();
  /** Set when the worker failed (error, or exit before it was done): its unfinished blocks are read elsewhere. */
  failure: Error | undefined;
  private finished = false;
  private wake: (() => void) | undefined;

  constructor(
    input: VerifyWorkerInput,
    /** Called for each chunk as it arrives (progress). */
    private readonly onChunk: (block: number, chunk: LineChunk) => void,
  ) {
    this.worker = startWorker(workerScript(), { workerData: input });
    this.worker.on('message', (m: VerifyWorkerMessage) => {
      if (this.failure) return;
      if (m.type === 'error') this.fail(Object.assign(new Error(m.message), m.code ? { code: m.code } : {}));
      else if (m.type === 'done') this.finished = true;
      else {
        const chunk = adoptChunk(m.chunk);
        let list = this.chunks.get(m.block);
        if (list === undefined) this.chunks.set(m.block, (list = []));
        list.push(chunk);
        if (chunk.last) this.complete.add(m.block);
        this.onChunk(m.block, chunk);
      }
      this.wakeUp();
    });
    this.worker.on('error', (err) => {
      this.fail(err);
      this.wakeUp();
    });
    this.worker.on('exit', (code) => {
      if (!this.finished) this.fail(new Error(`the verify worker stopped before it was done (exit ${code})`));
      this.wakeUp();
    });
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    this.chunks.clear();
    this.complete.clear();
    void this.worker.terminate();
  }

  private wakeUp(): void {
    const w = this.wake;
    this.wake = undefined;
    w?.();
  }

  /** The chunks of a block this worker has read whole (taken: a second call gives undefined). */
  take(block: number): LineChunk[] | undefined {
    if (!this.complete.delete(block)) return undefined;
    const list = this.chunks.get(block);
    this.chunks.delete(block);
    return list;
  }

  /** Resolves at the worker's next message, error or exit. */
  event(): Promise<void> {
    return new Promise<void>((resolve) => (this.wake = resolve));
  }

  /** Ends the worker (done, cancelled or failed); it never writes anything. */
  stop(): void {
    this.finished = true;
    void this.worker.terminate();
  }
}
