import { parentPort, workerData } from 'node:worker_threads';
import { GramPool } from '../aggregation/gram-pool.js';
import { computeAgentAggregate, type AgentAggregate } from './aggregate-round.js';
import type { RoundSettings } from './round-settings.js';
import { openCouncilStorage } from './open-storage.js';
import { loadRootSet } from './root-memoir.js';
import type { RootSet } from './root-set.js';
import type { CouncilStorage } from './storage.js';

/**
 * The aggregation worker thread (see worker-aggregator.ts): computes one agent's aggregate at a
 * time from its own connection to the storage (read-only for council.db), so the event loop that answers forges
 * never waits for LoRA-FAIR or Krum. It writes nothing: the main thread records the result.
 */
export interface AggregateJob {
  id: number;
  round: number;
  agent: string;
  settings: RoundSettings;
  /** The main thread's clock (recorded_at). */
  now: string;
}

export type AggregateReply =
  { id: number; ok: true; result: AgentAggregate } | { id: number; ok: false; message: string; stack?: string };

interface Init {
  dataDir: string;
  database: string | null;
  threads: number;
  trustTolerance: number;
  /** Where the operator's root memoir is (root-memoir.ts), read on the first job. */
  root: { root_memoir: string | null; data_dir: string; base_fingerprints: string[] };
}

const init = workerData as Init;
let storage: Promise<CouncilStorage> | null = null;
let pool: Promise<GramPool | null> | null = null;
let root: RootSet | null | undefined;

parentPort?.on('message', (job: AggregateJob) => {
  void run(job);
});

async function run(job: AggregateJob): Promise<void> {
  try {
    storage ??= openCouncilStorage({ data_dir: init.dataDir, database: init.database }, 'read').catch(
      (err: unknown) => {
        storage = null;
        throw err;
      },
    );
    pool ??= init.threads > 1 ? GramPool.create(init.threads) : Promise.resolve(null);
    if (root === undefined) root = init.root ? loadRootSet(init.root) : null;
    const result = await computeAgentAggregate(
      {
        storage: await storage,
        now: () => new Date(job.now),
        pool: await pool,
        trustTolerance: init.trustTolerance,
        root,
      },
      job.round,
      job.agent,
      job.settings,
    );
    const transfer = (result.globalChunks ?? []).map((b) => b.buffer as ArrayBuffer);
    parentPort?.postMessage({ id: job.id, ok: true, result } satisfies AggregateReply, transfer);
  } catch (err) {
    parentPort?.postMessage({
      id: job.id,
      ok: false,
      message: (err as Error).message,
      ...((err as Error).stack ? { stack: (err as Error).stack } : {}),
    } satisfies AggregateReply);
  }
}
