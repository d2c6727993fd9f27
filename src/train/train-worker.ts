import { parentPort } from 'node:worker_threads';
import { BaseModel } from './base-model.js';
import { canonicalSpec, type BaseSpec } from './base-spec.js';
import { headOf } from './adapter-layout.js';
import { encoderFor } from './run-encoder.js';
import { loraWeights } from './lora.js';
import { train } from './trainer.js';
import type { FromWorker, ToWorker } from './worker-protocol.js';

/**
 * The training worker: runs train() off the main thread, so the main thread stays free for the
 * progress display and Ctrl-C (which terminates this worker; nothing it holds is on disk).
 * Progress is posted at most every 100 ms and at the end of every epoch.
 */
const port = parentPort;
if (!port) throw new Error('train-worker.js runs as a worker thread');

let cached: { key: string; base: BaseModel } | null = null;

function baseFor(spec: BaseSpec): BaseModel {
  const key = canonicalSpec(spec);
  if (cached?.key !== key) cached = { key, base: new BaseModel(spec) };
  return cached.base;
}

port.on('message', (msg: ToWorker) => {
  const post = (m: FromWorker, transfer: ArrayBuffer[] = []): void => port.postMessage(m, transfer);
  try {
    const base = baseFor(msg.spec);
    const { job } = msg;
    const dims = {
      inDim: base.inDim,
      hidden: base.hidden,
      out: base.headOut(headOf(job.agent)),
      rank: job.settings.rank,
    };
    let last = 0;
    const outcome = train(
      base,
      encoderFor(msg.spec, msg.embedded),
      {
        agent: job.agent,
        kind: job.kind,
        examples: job.examples,
        settings: job.settings,
        start: job.start ? loraWeights(dims, job.start) : null,
        frozen: job.frozen.map((f) => ({ lora: loraWeights({ ...dims, rank: f.rank }, f.all), alpha: f.alpha })),
        lambdaCache: job.lambdaCache ?? null,
      },
      {
        onProgress: (p) => {
          const t = performance.now();
          if (t - last < 100 && p.batch !== p.batches) return;
          last = t;
          post({ type: 'progress', id: msg.id, progress: p });
        },
      },
    );
    if (outcome.status === 'trained') {
      const all = outcome.lora.all;
      post({ type: 'done', id: msg.id, outcome: { status: 'trained', report: outcome.report, lora: all } }, [
        all.buffer as ArrayBuffer,
      ]);
    } else post({ type: 'done', id: msg.id, outcome });
  } catch (err) {
    post({ type: 'error', id: msg.id, message: (err as Error).message, stack: (err as Error).stack });
  }
});
