import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { startWorker } from '../runtime/worker-start.js';
import { AXPY_ROWS, instantiateKernelOn, kernelModule, TILE_I, TILE_J, type Kernel } from './simd-kernel.js';

// computeUnit is shipped to the workers as source, so it spells out the tile shape and the axpy width.
if (TILE_I !== 4 || TILE_J !== 2 || AXPY_ROWS !== 8)
  throw new Error('gram-pool.ts: computeUnit assumes 4×2 tiles and 8-row axpy');
import type { Vec } from './vec.js';

/**
 * The SIMD kernels on every core: the Gram matrix of the Krum family (NumPy's BLAS uses all cores
 * for X·Xᵀ; so does this) and FedAvg's weighted sum.
 *
 * The updates live in ordinary (unshared) memory of the main thread, so the main thread copies
 * each unit of coordinates (a few blocks) into one slot of a shared WebAssembly memory and
 * publishes it (Atomics). Every thread — the workers and the main thread between copies — claims
 * the next published unit with an atomic counter and computes it: Gram tiles into its own Gram
 * matrix (summed at the end), or a slice of the weighted sum (disjoint coordinates). Slots are
 * reused once their unit is done, so memory stays at a few units however long the updates are.
 * The main thread blocks in Atomics.wait when there is nothing to do (allowed in Node), so the
 * API stays synchronous.
 *
 * Create one pool for a process that aggregates often (the council, the benchmark) and close
 * it when done; workers are unref'd and never keep a process alive.
 */
const CTRL_BYTES = 512;
/** Control words (Int32): units published, next unit to claim, units done, per-slot done marks, per-worker job marks. */
const PUBLISHED = 0;
const NEXT = 1;
const DONE = 2;
const SLOT_DONE = 8;
const JOB_DONE = 96;
/** Milliseconds a wait may take before a silent thread is declared dead. */
const WAIT_LIMIT_MS = 60_000;

interface GramJob {
  kind: 'gram';
  nPad: number;
  el: number;
  gBase: number;
}
interface AxpyJob {
  kind: 'axpy';
  n: number;
  weights: number[];
  outBase: number;
  accBase: number;
  zeroBase: number;
}
type Job = (GramJob | AxpyJob) & {
  block: number;
  len: number;
  slots: number;
  slotBase: number;
  slotBytes: number;
  seq: number;
  total: number;
  unit: number;
};

/**
 * Computes unit b of a job on thread t. The same function runs in the workers (its source is
 * shipped to them) and on the main thread, so both compute exactly the same way.
 */
function computeUnit(
  job: Job,
  b: number,
  t: number,
  buf: SharedArrayBuffer,
  k: { tile: (...a: number[]) => void; axpy: (...a: number[]) => void },
): void {
  const { block, len, unit, slots, slotBase, slotBytes } = job;
  const base = slotBase + (b % slots) * slotBytes;
  for (let u = 0; u < unit; u++) {
    const k0 = (b * unit + u) * block;
    if (k0 >= len) break;
    const kLen = Math.min(block, len - k0);
    const kPad = Math.ceil(kLen / 4) * 4;
    if (job.kind === 'gram') {
      const { nPad, el, gBase } = job;
      const stride = block * el;
      const x = base + u * nPad * stride;
      const g = gBase + t * nPad * nPad * 8;
      for (let i = 0; i < nPad; i += 4)
        for (let j = i; j < nPad; j += 2)
          k.tile(x + i * stride, x + j * stride, stride, kPad * el, g + (i * nPad + j) * 8, nPad * 8);
    } else {
      const { n, weights, outBase, accBase, zeroBase } = job;
      const R = 8;
      const x = base + u * n * block * 4;
      const acc = accBase + t * block * 8;
      const accView = new Float64Array(buf, acc, block);
      const outView = new Float64Array(buf, outBase + k0 * 8, kLen);
      accView.set(outView);
      accView.fill(0, kLen, kPad);
      const args = new Array<number>(2 * R + 2);
      for (let j = 0; j < n; j += R) {
        args[0] = acc;
        for (let r = 0; r < R; r++) {
          const has = j + r < n;
          args[1 + r] = has ? x + (j + r) * block * 4 : zeroBase;
          args[1 + R + r] = has ? (weights[j + r] as number) : 0;
        }
        args[2 * R + 1] = kPad * 4;
        k.axpy(...args);
      }
      outView.set(accView.subarray(0, kLen));
    }
  }
}

const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { module, memory, index } = workerData;
const inst = new WebAssembly.Instance(module, { env: { mem: memory } });
const computeUnit = ${computeUnit.toString()};
parentPort.on('message', (job) => {
  const buf = memory.buffer;
  const ctrl = new Int32Array(buf, 0, ${CTRL_BYTES / 4});
  const k = { tile: job.el === 8 ? inst.exports.gram_f64 : inst.exports.gram_f32, axpy: inst.exports.axpy8_f32 };
  for (;;) {
    const b = Atomics.add(ctrl, ${NEXT}, 1);
    if (b >= job.total) break;
    for (;;) {
      const v = Atomics.load(ctrl, ${PUBLISHED});
      if (v > b) break;
      if (Atomics.wait(ctrl, ${PUBLISHED}, v, ${WAIT_LIMIT_MS}) === 'timed-out') throw new Error('kernel worker: main thread stalled');
    }
    computeUnit(job, b, index, buf, k);
    Atomics.store(ctrl, ${SLOT_DONE} + (b % job.slots), b + 1);
    Atomics.notify(ctrl, ${SLOT_DONE} + (b % job.slots));
    Atomics.add(ctrl, ${DONE}, 1);
    Atomics.notify(ctrl, ${DONE});
  }
  Atomics.store(ctrl, ${JOB_DONE} + index, job.seq);
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
        const worker = startWorker(
          { source: WORKER_SOURCE },
          { workerData: { module: mod, memory: kernel.memory, index: w + 1 } },
        );
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
    const stride = block * el;
    // A unit of work (what a thread claims) is several blocks when n is small, so that each claim
    // carries a few million multiply-adds and synchronisation stays negligible.
    const unit = Math.max(1, Math.min(16, Math.ceil(2e6 / ((nPad * nPad) / 2) / block)));
    const gBase = CTRL_BYTES;
    const slotBase = Math.ceil((gBase + T * nPad * nPad * 8) / 64) * 64;
    const job = this.prepare(
      { kind: 'gram', nPad, el, gBase },
      { block, len, unit, slotBase, slotBytes: unit * nPad * stride },
    );
    const buf = this.kernel.memory.buffer;
    new Float64Array(buf, gBase, T * nPad * nPad).fill(0);
    // rows n..nPad-1 of every sub-block of every slot stay zero
    for (let s = 0; s < job.slots; s++)
      for (let u = 0; u < unit; u++)
        this.view(f32, slotBase + s * job.slotBytes + u * nPad * stride, nPad * block).fill(0, n * block);
    this.drive(job, rows, (r) => r * block, nPad * stride);
    const G = new Float64Array(buf, gBase, T * nPad * nPad);
    for (let i = 0; i < n; i++) {
      for (let j = i; j < n; j++) {
        let s = 0;
        for (let t = 0; t < T; t++) s += G[t * nPad * nPad + i * nPad + j] as number;
        g[i * n + j] = (g[i * n + j] as number) + s;
      }
    }
  }

  /**
   * out[k] += Σⱼ w[j]·rows[j][k] for float32 rows, every core taking blocks of coordinates. The
   * same sums, in the same order, as weightedMeanInto's SIMD and scalar loops.
   */
  weightedSum(rows: readonly Float32Array[], w: Float64Array, out: Float64Array, block = 4096): void {
    const n = rows.length;
    const len = out.length;
    const T = this.threads;
    const unit = Math.max(1, Math.min(16, Math.ceil(262144 / Math.max(1, n) / block)));
    const accBase = CTRL_BYTES;
    const zeroBase = accBase + T * block * 8;
    const outBase = Math.ceil((zeroBase + block * 4) / 64) * 64;
    const slotBase = Math.ceil((outBase + len * 8) / 64) * 64;
    const job = this.prepare(
      { kind: 'axpy', n, weights: Array.from(w), outBase, accBase, zeroBase },
      { block, len, unit, slotBase, slotBytes: unit * n * block * 4 },
    );
    const buf = this.kernel.memory.buffer;
    new Float32Array(buf, zeroBase, block).fill(0);
    new Float64Array(buf, outBase, len).set(out);
    this.drive(job, rows, (r) => r * block, n * block * 4);
    out.set(new Float64Array(buf, outBase, len));
  }

  private prepare<J extends GramJob | AxpyJob>(
    kind: J,
    o: { block: number; len: number; unit: number; slotBase: number; slotBytes: number },
  ): J & Job {
    const slots = Math.min(64, 4 * this.threads);
    this.kernel.ensure(o.slotBase + slots * o.slotBytes);
    return { ...kind, ...o, slots, seq: ++this.seq, total: Math.ceil(o.len / (o.block * o.unit)) } as J & Job;
  }

  private view(f32: boolean, byteOffset: number, length: number): Float32Array | Float64Array {
    const buf = this.kernel.memory.buffer;
    return f32 ? new Float32Array(buf, byteOffset, length) : new Float64Array(buf, byteOffset, length);
  }

  /** Copies units into slots and publishes them; computes units itself whenever it can. */
  private drive(job: Job, rows: readonly Vec[], rowOffset: (r: number) => number, subBytes: number): void {
    const buf = this.kernel.memory.buffer;
    const ctrl = new Int32Array(buf, 0, CTRL_BYTES / 4);
    for (let i = 0; i < JOB_DONE + this.threads; i++) Atomics.store(ctrl, i, 0);
    for (const w of this.workers) w.postMessage(job);
    const f32 = rows[0] instanceof Float32Array;
    const el = f32 ? 4 : 8;
    const k = { tile: f32 ? this.kernel.gramF32 : this.kernel.gramF64, axpy: this.kernel.axpy8F32 };
    const { total, slots, unit, block, len } = job;
    const compute = (b: number): void => {
      computeUnit(job, b, 0, buf, k as never);
      Atomics.store(ctrl, SLOT_DONE + (b % slots), b + 1);
      Atomics.add(ctrl, DONE, 1);
    };
    const helpOnce = (): boolean => {
      const next = Atomics.load(ctrl, NEXT);
      if (next >= total || next >= Atomics.load(ctrl, PUBLISHED)) return false;
      if (Atomics.compareExchange(ctrl, NEXT, next, next + 1) === next) compute(next);
      return true;
    };
    for (let b = 0; b < total; b++) {
      const slot = b % slots;
      // the slot's previous unit must be done before it is overwritten
      while (b >= slots && Atomics.load(ctrl, SLOT_DONE + slot) < b - slots + 1) {
        if (!helpOnce()) Atomics.wait(ctrl, SLOT_DONE + slot, Atomics.load(ctrl, SLOT_DONE + slot), 50);
      }
      for (let u = 0; u < unit; u++) {
        const k0 = (b * unit + u) * block;
        if (k0 >= len) break;
        const kLen = Math.min(block, len - k0);
        const kPad = Math.ceil(kLen / 4) * 4;
        const X = this.view(f32, job.slotBase + slot * job.slotBytes + u * subBytes, subBytes / el);
        for (let r = 0; r < rows.length; r++) {
          const at = rowOffset(r);
          X.set((rows[r] as Vec).subarray(k0, k0 + kLen) as never, at);
          if (kPad > kLen) X.fill(0, at + kLen, at + kPad);
        }
      }
      Atomics.store(ctrl, PUBLISHED, b + 1);
      Atomics.notify(ctrl, PUBLISHED);
      helpOnce();
    }
    while (helpOnce());
    waitAtLeast(ctrl, DONE, total);
    for (let t = 1; t < this.threads; t++) waitAtLeast(ctrl, JOB_DONE + t, job.seq);
  }
}

function waitAtLeast(ctrl: Int32Array, index: number, target: number): void {
  for (;;) {
    const v = Atomics.load(ctrl, index);
    if (v >= target) return;
    if (Atomics.wait(ctrl, index, v, WAIT_LIMIT_MS) === 'timed-out')
      throw new Error('kernel pool: a worker stopped answering');
  }
}
