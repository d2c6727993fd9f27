import { parentPort, workerData } from 'node:worker_threads';
import { headOf } from '../train/adapter-layout.js';
import type { BaseSpec } from '../train/base-spec.js';
import { loraWeights } from '../train/lora.js';
import { train } from '../train/trainer.js';
import { CachedBase, cachedEncoder } from './cached-model.js';
import type { PoolJob } from './train-pool.js';

/**
 * A simulation training thread: the trainer's `train()` on jobs from the main thread, with the
 * base and encoder built once and their per-text caches kept between jobs (the point of a
 * long-lived worker: a forge's texts come back every round).
 */
const port = parentPort;
if (!port) throw new Error('simulation/train-worker.js runs as a worker thread');
const spec = (workerData as { spec: BaseSpec }).spec;
const base = new CachedBase(spec);
const encode = cachedEncoder(spec);

port.on('message', (m: { id: number; job: PoolJob }) => {
  try {
    const j = m.job;
    const dims = { inDim: base.inDim, hidden: base.hidden, out: base.headOut(headOf(j.agent)), rank: j.settings.rank };
    const r = train(base, encode, {
      agent: j.agent,
      kind: j.kind,
      examples: j.examples,
      settings: j.settings,
      start: j.start ? loraWeights(dims, j.start) : null,
      frozen: j.frozen.map((f) => ({ lora: loraWeights({ ...dims, rank: f.rank }, f.all), alpha: f.alpha })),
    });
    if (r.status === 'trained') port.postMessage({ id: m.id, lora: r.lora.all }, [r.lora.all.buffer as ArrayBuffer]);
    else port.postMessage({ id: m.id, lora: null });
  } catch (err) {
    port.postMessage({ id: m.id, error: (err as Error).stack ?? String(err) });
  }
});
