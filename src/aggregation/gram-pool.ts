import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { instantiateKernelOn, kernelModule, TILE_I, TILE_J, type Kernel } from './simd-kernel.js';
import type { Vec } from './vec.js';

/**
 * The Gram kernel on every core. NumPy's BLAS uses all cores for X·Xᵀ; so does this.
 *
 * The updates live in ordinary (unshared) memory of the main thread, so the main thread copies
 * each block of coordinates into one slot of a shared WebAssembly memory and publishes it
 * (Atomics). Every thread — the workers and the main thread between copies — claims the next
 * published block with an atomic counter and adds its tiles into its own Gram matrix; the
 * matrices are summed at the end. Slots are reused once their block is done, so memory stays at
 * a few blocks however long the updates are. The main thread blocks in Atomics.wait when there
 * is nothing to do (allowed in Node), so the API stays synchronous.
 *
 * Create one pool for a process that aggregates often (the council, the benchmark) and close
 * it when done; workers are unref'd and never keep a process alive.
 */
const CTRL_BYTES = 512;
/** Control words (Int32): blocks published, next block to claim, blocks done, per-slot done marks, per-worker job marks. */
const PUBLISHED = 0;
const NEXT = 1;
const DONE = 2;
const SLOT_DONE = 8;
const JOB_DONE = 96;
/** Seconds a wait may take before a silent worker is declared dead. */
const WAIT_LIMIT_MS = 60_000;

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { module, memory, index } = workerData;
const inst = new WebAssembly.Instance(module, { env: { mem: memory } });
const tiles = { 4: inst.exports.gram_f32, 8: inst.exports.gram_f64 };
parentPort.on('message', (job) => {
  const ctrl = new Int32Array(memory.buffer, 0, ${CTRL_BYTES / 4});
  const { nPad, block, el, len, slots, slotBase, slotBytes, gBase, seq, total, unit } = job;
  const tile = tiles[el];
  const stride = block * el;
  const g = gBase + index * nPad * nPad * 8;
  for (;;) {
    const b = Atomics.add(ctrl, ${NEXT}, 1);
    if (b >= total) break;
    for (;;) {
      const v = Atomics.load(ctrl, ${PUBLISHED});
      if (v > b) break;
      if (Atomics.wait(ctrl, ${PUBLISHED}, v, ${WAIT_LIMIT_MS}) === 'timed-out') throw new Error('gram worker: main thread stalled');
    }
    for (let u = 0; u < unit; u++) {
      const k0 = (b * unit + u) * block;
      if (k0 >= len) break;
      const x = slotBase + (b % slots) * slotBytes + u * nPad * stride;
      const kbytes = Math.ceil(Math.min(block, len - k0) / 4) * 4 * el;
      for (let i = 0; i < nPad; i += ${TILE_I}) for (let j = i; j < nPad; j += ${TILE_J}) tile(x + i * stride, x + j * stride, stride, kbytes, g + (i * nPad + j) * 8, nPad * 8);
    }
    Atomics.store(ctrl, ${SLOT_DONE} + (b % slots), b + 1);
    Atomics.notify(ctrl, ${SLOT_DONE} + (b % slots));
    Atomics.add(ctrl, ${DONE}, 1);
    Atomics.notify(ctrl, ${DONE});
  }
  Atomics.store(ctrl, ${JOB_DONE} + index, seq);
  Atomics.notify(ctrl, ${JOB_DONE} + index);
});
parentPort.postMessage('ready');
`;

export class GramPool {
  readonly threads: number;
  private readonly workers: Worker[];
  private readonly kernel: Kernel;
  private seq = 0;

  private constructor(threads: number, workers: Worker[], kernel: Kernel) {
    this.threads = threads;
    this.workers = workers;
    this.kernel = kernel;
  }

  /** A pool of `threads` threads in all (the main thread included); null when there is one core or no SIMD. */
  static async create(threads = Math.min(availableParallelism(), 8)): Promise<GramPool | null> {
    const mod = kernelModule();
    if (!mod || threads < 2) return null;
    const kernel = instantiateKernelOn(mod);
    const workers = await Promise.all(
      Array.from({ length: threads - 1 }, (_, w) => {
        const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { module: mod, memory: kernel.memory, index: w + 1 } });
        return new Promise<Worker>((resolve, reject) => {
          worker.once('message', () => {
            worker.unref();
            resolve(worker);
          });
          worker.once('error', reject);
        });
      }),
    );
    return new GramPool(threads, workers, kernel);
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  /**
   * Adds X·Xᵀ of `rows` (same length, same float kind) into `g` (n×n, upper triangle), using
   * `block` coordinates per block.
   */
  accumulate(rows: readonly Vec[], g: Float64Array, block: number): void {
    const n = rows.length;
    const len = (rows[0] as Vec).length;
    const f32 = rows[0] instanceof Float32Array;
    const el = f32 ? 4 : 8;
    const nPad = Math.ceil(n / TILE_I) * TILE_I;
    const T = this.threads;
    const slots = Math.min(64, 4 * T);
    const stride = block * el;
    // A unit of work (what a thread claims) is several blocks when n is small, so that each claim
    // carries a few million multiply-adds and synchronisation stays negligible.
    const unit = Math.max(1, Math.min(16, Math.ceil(2e6 / ((nPad * nPad) / 2) / block)));
    const slotBytes = unit * nPad * stride;
    const gBase = CTRL_BYTES;
    const gBytes = T * nPad * nPad * 8;
    const slotBase = Math.ceil((gBase + gBytes) / 64) * 64;
    this.kernel.ensure(slotBase + slots * slotBytes);
    const buf = this.kernel.memory.buffer;
    const ctrl = new Int32Array(buf, 0, CTRL_BYTES / 4);
    new Float64Array(buf, gBase, T * nPad * nPad).fill(0);
    // rows n..nPad-1 of every sub-block of every slot stay zero
    for (let s = 0; s < slots; s++) {
      for (let u = 0; u < unit; u++) {
        const X = f32 ? new Float32Array(buf, slotBase + s * slotBytes + u * nPad * stride, nPad * block) : new Float64Array(buf, slotBase + s * slotBytes + u * nPad * stride, nPad * block);
        X.fill(0, n * block);
      }
    }
    const seq = ++this.seq;
    const total = Math.ceil(len / (block * unit));
    for (let i = 0; i < JOB_DONE; i++) Atomics.store(ctrl, i, 0);
    const job = { nPad, block, el, len, slots, slotBase, slotBytes, gBase, seq, total, unit };
    for (const w of this.workers) w.postMessage(job);

    const tile = f32 ? this.kernel.gramF32 : this.kernel.gramF64;
    const compute = (b: number): void => {
      for (let u = 0; u < unit; u++) {
        const k0 = (b * unit + u) * block;
        if (k0 >= len) break;
        const x = slotBase + (b % slots) * slotBytes + u * nPad * stride;
        const kbytes = Math.ceil(Math.min(block, len - k0) / 4) * 4 * el;
        for (let i = 0; i < nPad; i += TILE_I) for (let j = i; j < nPad; j += TILE_J) tile(x + i * stride, x + j * stride, stride, kbytes, gBase + (i * nPad + j) * 8, nPad * 8);
      }
      Atomics.store(ctrl, SLOT_DONE + (b % slots), b + 1);
      Atomics.add(ctrl, DONE, 1);
    };
    // Claims the next published block, if any, and computes it here (work is shared dynamically,
    // so a worker starved of CPU by other processes slows nothing down).
    const helpOnce = (): boolean => {
      const next = Atomics.load(ctrl, NEXT);
      if (next >= total || next >= Atomics.load(ctrl, PUBLISHED)) return false;
      if (Atomics.compareExchange(ctrl, NEXT, next, next + 1) === next) compute(next);
      return true;
    };
    for (let b = 0; b < total; b++) {
      const slot = b % slots;
      // the slot's previous block must be done before it is overwritten
      while (b >= slots && Atomics.load(ctrl, SLOT_DONE + slot) < b - slots + 1) {
        if (!helpOnce()) Atomics.wait(ctrl, SLOT_DONE + slot, Atomics.load(ctrl, SLOT_DONE + slot), 50);
      }
      for (let u = 0; u < unit; u++) {
        const k0 = (b * unit + u) * block;
        if (k0 >= len) break;
        const x = slotBase + slot * slotBytes + u * nPad * stride;
        const X = f32 ? new Float32Array(buf, x, nPad * block) : new Float64Array(buf, x, nPad * block);
        const kLen = Math.min(block, len - k0);
        const kPad = Math.ceil(kLen / 4) * 4;
        for (let r = 0; r < n; r++) {
          X.set((rows[r] as Vec).subarray(k0, k0 + kLen) as never, r * block);
          if (kPad > kLen) X.fill(0, r * block + kLen, r * block + kPad);
        }
      }
      Atomics.store(ctrl, PUBLISHED, b + 1);
      Atomics.notify(ctrl, PUBLISHED);
      helpOnce();
    }
    while (helpOnce());
    waitAtLeast(ctrl, DONE, total);
    for (let t = 1; t < T; t++) waitAtLeast(ctrl, JOB_DONE + t, seq);
    const G = new Float64Array(buf, gBase, T * nPad * nPad);
    for (let i = 0; i < n; i++) {
      for (let j = i; j < n; j++) {
        let s = 0;
        for (let t = 0; t < T; t++) s += G[t * nPad * nPad + i * nPad + j] as number;
        g[i * n + j] = (g[i * n + j] as number) + s;
      }
    }
  }
}

function waitAtLeast(ctrl: Int32Array, index: number, target: number): void {
  for (;;) {
    const v = Atomics.load(ctrl, index);
    if (v >= target) return;
    if (Atomics.wait(ctrl, index, v, WAIT_LIMIT_MS) === 'timed-out') throw new Error('gram pool: a worker stopped answering');
  }
}
