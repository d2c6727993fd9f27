// Local learning benchmarks (issue 9): the encoder decision, training throughput against a
// vectorised NumPy implementation of the same model/objective/optimiser (same data, same initial
// weights, same batches: losses compared step by step), scoring speed, and the whole-process
// targets (train bond on the 8-session sample forge, peak memory bounded by the buffer, score
// vs --version).
// Contract: export async function run(report, { quick }). Uses dist/ (npm run bench builds).
// Standalone: node bench/train.mjs
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cleanup, kourai, median, tempDir } from './lib.mjs';

const dist = new URL('../dist/', import.meta.url);
const load = (p) => import(new URL(p, dist).href);
const NUMPY = fileURLToPath(new URL('./train_numpy.py', import.meta.url));

/** A seeded generator of code-like texts (sizes like the sample forge's proposals). */
export function textMaker(seed) {
  let a = seed >>> 0;
  const rand = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const syl = ['ka', 'lo', 'mi', 'ru', 'te', 'sa', 'no', 'vi', 'du', 'pe', 'zo', 'ha', 'fi', 'gu'];
  const word = () => Array.from({ length: 2 + Math.floor(rand() * 2) }, () => syl[Math.floor(rand() * syl.length)]).join('');
  const text = () => {
    const [f, x, y, z] = [word(), word(), word(), word()];
    return rand() < 0.5
      ? `function ${f}(${x}, ${y}) {\n  if (!${x}) return ${y};\n  const ${z} = ${word()}(${x});\n  return ${z}.${word()}(${y});\n}`
      : `function ${f}(${x}: string, ${y}: number): boolean {\n  if (${x}) {\n    return ${word()}(${y});\n  }\n  return false;\n}`;
  };
  return { rand, text };
}

function npy(arr, shape) {
  const descr = arr instanceof Float64Array ? '<f8' : arr instanceof Int32Array ? '<i4' : arr instanceof Float32Array ? '<f4' : null;
  let header = `{'descr': '${descr}', 'fortran_order': False, 'shape': (${shape.join(', ')}${shape.length === 1 ? ',' : ''}), }`;
  while ((10 + header.length + 1) % 64 !== 0) header += ' ';
  header += '\n';
  const head = Buffer.alloc(10);
  head.write('\x93NUMPY', 0, 'latin1');
  head[6] = 1;
  head[7] = 0;
  head.writeUInt16LE(header.length, 8);
  return Buffer.concat([head, Buffer.from(header, 'latin1'), Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength)]);
}

/**
 * One objective: E examples over the built-in base, S steps of batch B from a fixed order; the JS
 * trainer's own forward/backward (Run) and AdamW, timed; the same steps in NumPy; losses compared.
 */
async function throughput(kind, { examples: E, steps: S, batch: B }) {
  const { BaseModel } = await load('train/base-model.js');
  const { builtinBaseSpec } = await load('train/base-spec.js');
  const { HashedEncoder } = await load('train/encoder/hashed-ngrams.js');
  const { Network } = await load('train/network.js');
  const { applied } = await load('train/network.js');
  const { initLora, loraWeights } = await load('train/lora.js');
  const { AdamW } = await load('train/adamw.js');
  const { prepare, Run, DEFAULT_SETTINGS } = await load('train/trainer.js');
  const { mulberry32 } = await load('runtime/seeded-random.js');
  const spec = builtinBaseSpec();
  const base = new BaseModel(spec);
  const enc = new HashedEncoder(spec.encoder.dim);
  const { rand, text } = textMaker(42);
  const specialists = spec.specialists;
  const agent = kind === 'route' ? 'hephaestus' : 'techne';
  const exs = Array.from({ length: E }, (_, i) => {
    const b = { agent, entryId: `e${i}`, scene: `s${i}`, weight: 0.5 + rand(), taskType: null };
    if (kind === 'pair') return { ...b, kind, chosen: text(), rejected: text(), chosenBy: 'choice' };
    if (kind === 'binary') return { ...b, kind, text: text(), label: rand() < 0.5 ? 0 : 1 };
    if (kind === 'graded') return { ...b, kind, text: text(), target: rand() };
    return { ...b, kind, text: text(), label: specialists[Math.floor(rand() * specialists.length)] };
  });
  const head = kind === 'route' ? 'route' : 'score';
  const { items, texts } = prepare(base, (t) => enc.encode(t), exs, head);
  const net = new Network(base, head);
  const s = DEFAULT_SETTINGS;
  const dims = { inDim: base.inDim, hidden: base.hidden, out: net.out, rank: s.rank };
  const lora = initLora(dims, mulberry32(9));
  // Start from a B that is not zero, so every factor moves from the first step.
  for (let i = 0; i < lora.denseB.length; i++) lora.denseB[i] = (mulberry32(i + 1)() - 0.5) * 0.02;
  const init = Float64Array.from(lora.all);
  const order = new Int32Array(S * B);
  for (let i = 0; i < order.length; i++) order[i] = Math.floor(rand() * items.length);
  const run = new Run(net, [applied(lora, s.alpha)], texts, items);
  const opt = new AdamW(lora.all.length, { lr: s.lr, weightDecay: s.weightDecay, clipNorm: s.clipNorm });
  const grad = loraWeights(dims);
  const losses = [];
  const t0 = performance.now();
  for (let st = 0; st < S; st++) {
    grad.all.fill(0);
    let loss = 0;
    for (let k = 0; k < B; k++) loss += run.accumulate(order[st * B + k], grad);
    const inv = 1 / B;
    for (let k = 0; k < grad.all.length; k++) grad.all[k] *= inv;
    opt.step(lora.all, grad.all);
    losses.push(loss / B);
  }
  const jsSec = (performance.now() - t0) / 1000;

  // The same run for NumPy.
  const dir = tempDir('kourai-bench-train-');
  try {
    const nnz = texts.features.reduce((n, f) => n + f.idx.length, 0);
    const idx = new Int32Array(nnz);
    const val = new Float64Array(nnz);
    const indptr = new Int32Array(texts.features.length + 1);
    let o = 0;
    texts.features.forEach((f, i) => {
      idx.set(f.idx, o);
      val.set(f.val, o);
      o += f.idx.length;
      indptr[i + 1] = o;
    });
    const files = {
      idx: npy(idx, [nnz]),
      val: npy(val, [nnz]),
      indptr: npy(indptr, [indptr.length]),
      a: npy(Int32Array.from(items.map((i) => i.a)), [items.length]),
      b: npy(Int32Array.from(items.map((i) => i.b)), [items.length]),
      target: npy(Float64Array.from(items.map((i) => i.target)), [items.length]),
      w: npy(Float64Array.from(items.map((i) => i.w)), [items.length]),
      batches: npy(order, [S, B]),
      init: npy(init, [init.length]),
    };
    for (const [k, v] of Object.entries(files)) writeFileSync(join(dir, `${k}.npy`), v);
    writeFileSync(join(dir, 'meta.json'), JSON.stringify({ kind, D: base.inDim, H: base.hidden, O: net.out, rank: s.rank, alpha: s.alpha, lr: s.lr, weightDecay: s.weightDecay, clipNorm: s.clipNorm, seed: spec.seed, init: spec.init }));
    const py = spawnSync('python3', [NUMPY, dir], { encoding: 'utf8', maxBuffer: 1 << 28 });
    if (py.status !== 0) return { jsSec, jsRate: (S * B) / jsSec, error: py.stderr.trim().split('\n').pop() };
    const np = JSON.parse(py.stdout);
    let maxRel = 0;
    for (let i = 0; i < S; i++) maxRel = Math.max(maxRel, Math.abs(losses[i] - np.losses[i]) / Math.max(1e-12, Math.abs(np.losses[i])));
    return { jsSec, jsRate: (S * B) / jsSec, npSec: np.seconds, npRate: (S * B) / np.seconds, maxRel, lastJs: losses[S - 1], lastNp: np.losses[S - 1], firstJs: losses[0] };
  } finally {
    cleanup(dir);
  }
}

export async function run(report, { quick } = {}) {
  const opts = quick ? { examples: 300, steps: 60, batch: 16 } : { examples: 1000, steps: 200, batch: 16 };
  for (const kind of ['pair', 'binary', 'graded', 'route']) {
    const r = await throughput(kind, opts);
    report(`training throughput, ${kind} (JS trainer)`, r.jsRate, 'ex/s', `${opts.steps} AdamW steps of ${opts.batch}`);
    if (r.error) {
      report(`training throughput, ${kind} (NumPy)`, 'n/a', '', r.error);
      continue;
    }
    report(`training throughput, ${kind} (NumPy, same model/objective/optimiser)`, r.npRate, 'ex/s', `JS/NumPy ${(r.jsRate / r.npRate).toFixed(2)}×`);
    report(`  loss after ${opts.steps} steps: JS vs NumPy`, r.lastJs, '', `NumPy ${r.lastNp.toPrecision(8)}; max relative difference over all steps ${r.maxRel.toExponential(1)} (first step ${r.firstJs.toPrecision(6)})`);
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rows = [];
  await run((name, value, unit, note = '') => {
    rows.push(name);
    console.log(`${name.padEnd(62)} ${String(typeof value === 'number' ? value.toPrecision(5) : value).padStart(12)} ${unit.padEnd(8)} ${note}`);
  }, { quick: process.argv.includes('--quick') });
}
