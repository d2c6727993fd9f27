import type { Worker } from 'node:worker_threads';
import type { AgentAggregate, AgentAggregator } from './aggregate-round.js';
import { startWorker } from '../runtime/worker-start.js';
import { workerBuilt, workerUrl } from '../runtime/worker-url.js';
import type { AggregateJob, AggregateReply } from './aggregate-worker.js';

const workerScript = (): URL => workerUrl(import.meta.url, 'council', 'aggregate-worker.js');

export function workerAvailable(): boolean {
  return workerBuilt(workerScript());
}

/**
 * Aggregation off the event loop: one worker thread (aggregate-worker.ts) computes agents one at a
 * time; the main thread keeps answering requests (/v1/health included) and records each result.
 * A worker that dies fails the job in progress (the round stays `closing` and resumes on restart)
 * and is replaced for the next one.
 */
export class WorkerAggregator {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly pending = new Map<number, { resolve: (r: AgentAggregate) => void; reject: (e: Error) => void }>();

  constructor(
    private readonly init: {
      dataDir: string;
      database: string | null;
      threads: number;
      trustTolerance: number;
      root: { root_memoir: string | null; data_dir: string; base_fingerprints: string[] };
    },
  ) {}

  /** The aggregator to give the Council; `now` (recorded_at) is the council's clock. */
  aggregator(now: () => Date): AgentAggregator {
    return (round, agent, settings) => {
      const worker = this.ensure();
      const id = this.nextId++;
      return new Promise<AgentAggregate>((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        // Keep the process alive while a job runs (idle, the worker does not hold it open).
        worker.ref();
        worker.postMessage({ id, round, agent, settings, now: now().toISOString() } satisfies AggregateJob);
      });
    };
  }

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const w = startWorker(workerScript(), { workerData: this.init });
    w.on('message', (m: AggregateReply) => {
      const p = this.pending.get(m.id);
      if (!p) return;
      this.pending.delete(m.id);
      if (this.pending.size === 0) w.unref();
      if (m.ok) {
        const r = m.result;
        // Structured clone turns Buffers into Uint8Arrays.
        const chunks = r.globalChunks?.map((u) => Buffer.from(u.buffer, u.byteOffset, u.byteLength)) ?? null;
        p.resolve({ ...r, globalChunks: chunks });
      } else {
        const err = new Error(`aggregation failed in the worker: ${m.message}`);
        if (m.stack) err.stack = m.stack;
        p.reject(err);
      }
    });
    const fail = (err: Error): void => {
      if (this.worker === w) this.worker = null;
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`the aggregation worker exited (code ${code})`)));
    w.unref();
    this.worker = w;
    return w;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = null;
    if (w) await w.terminate();
  }
}
