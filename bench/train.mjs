// Local learning benchmarks: the encoder decision, training throughput against a
// vectorised NumPy implementation of the same model/objective/optimiser (same data, same initial
// weights, same batches: losses compared step by step), scoring speed, and the whole-process
// targets (train bond on the 8-session sample forge, peak memory bounded by the buffer, score
// vs --version).
// Contract: export async function run(report, { quick }). Uses dist/ (npm run bench builds).
// Standalone: node bench/train.mjs
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
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
  const word = () =>
    Array.from({ length: 2 + Math.floor(rand() * 2) }, () => syl[Math.floor(rand() * syl.length)]).join('');
  const text = () => {
    const [f, x, y, z] = [word(), word(), word(), word()];
    return rand() < 0.5
      ? `function ${f}(${x}, ${y}) {\n  if (!${x}) return ${y};\n  const ${z} = ${word()}(${x});\n  return ${z}.${word()}(${y});\n}`
      : `function ${f}(${x}: string, ${y}: number): boolean {\n  if (${x}) {\n    return ${word()}(${y});\n  }\n  return false;\n}`;
  };
  return { rand, text };
}

function npy(arr, shape) {
  const descr =
    arr instanceof Float64Array
      ? '<f8'
      : arr instanceof Int32Array
        ? '<i4'
        : arr instanceof Float32Array
          ? '<f4'
          : null;
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
  const { inputEncoder } = await load('train/encoder/inputs.js');
  const { inputBlocks } = await load('train/base-spec.js');
  const { Network } = await load('train/network.js');
  const { applied } = await load('train/network.js');
  const { initLora, loraWeights } = await load('train/lora.js');
  const { AdamW } = await load('train/adamw.js');
  const { prepare, Run, DEFAULT_SETTINGS } = await load('train/trainer.js');
  const { mulberry32 } = await load('runtime/seeded-random.js');
  const spec = builtinBaseSpec();
  const base = new BaseModel(spec);
  const enc = inputEncoder(spec);
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
  const { items, texts } = prepare(base, (t, p) => enc(t, p), exs, head);
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
    let loss = 0;
    for (let k = 0; k < B; k++) loss += run.accumulate(order[st * B + k], grad);
    opt.stepAndClear(lora.all, grad.all, 1 / B);
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
      offset: npy(
        Float64Array.from(items.flatMap((i) => (i.offset ? Array.from(i.offset) : new Array(net.out).fill(0)))),
        [items.length, net.out],
      ),
      batches: npy(order, [S, B]),
      init: npy(init, [init.length]),
    };
    for (const [k, v] of Object.entries(files)) writeFileSync(join(dir, `${k}.npy`), v);
    const blocks = inputBlocks(spec);
    writeFileSync(
      join(dir, 'meta.json'),
      JSON.stringify({
        kind,
        structureAt: blocks.structure,
        semanticAt: blocks.semantic,
        D: base.inDim,
        H: base.hidden,
        O: net.out,
        rank: s.rank,
        alpha: s.alpha,
        lr: s.lr,
        weightDecay: s.weightDecay,
        clipNorm: s.clipNorm,
        seed: spec.seed,
        init: spec.init,
      }),
    );
    // One BLAS thread, as the JS trainer runs on one: on a shared 2-core machine a multi-threaded BLAS
    // spins against the load and NumPy's rate swung 10× between runs.
    const py = spawnSync('python3', [NUMPY, dir], {
      encoding: 'utf8',
      maxBuffer: 1 << 28,
      env: { ...process.env, OPENBLAS_NUM_THREADS: '1', OMP_NUM_THREADS: '1', MKL_NUM_THREADS: '1' },
    });
    if (py.status !== 0) return { jsSec, jsRate: (S * B) / jsSec, error: py.stderr.trim().split('\n').pop() };
    const np = JSON.parse(py.stdout);
    let maxRel = 0;
    for (let i = 0; i < S; i++)
      maxRel = Math.max(maxRel, Math.abs(losses[i] - np.losses[i]) / Math.max(1e-12, Math.abs(np.losses[i])));
    return {
      jsSec,
      jsRate: (S * B) / jsSec,
      npSec: np.seconds,
      npRate: (S * B) / np.seconds,
      maxRel,
      lastJs: losses[S - 1],
      lastNp: np.losses[S - 1],
      firstJs: losses[0],
    };
  } finally {
    cleanup(dir);
  }
}

/** The sample forge, in-process, indexed in a temp dir: bond views for the agents named. */
async function sampleViews(dir, player, agents) {
  const { synthSessions } = await load('memoir/sample/synth.js');
  const { profileFor } = await load('memoir/sample/planted/profiles.js');
  const { appendLines } = await load('memoir/file/append.js');
  const { openIndex } = await load('memoir-index/memoir-index.js');
  const { bondView } = await load('train/examples/views.js');
  const paths = [];
  let i = 0;
  for (const s of synthSessions({ seed: 7, sessions: 8, turns: 12, profile: profileFor(player) })) {
    const p = join(dir, player, `s${i++}`, 'memoir.jsonl');
    mkdirSync(join(p, '..'), { recursive: true });
    appendLines(p, s.lines, { fsync: false });
    paths.push(p);
  }
  const index = openIndex(join(dir, player));
  const files = index.update(paths).map((u) => u.fileId);
  const out = Object.fromEntries(agents.map((a) => [a, bondView({ index, files }, a).examples]));
  index.close();
  return out;
}

/** gpt-tokenizer (cl100k_base) BPE features: token 1–3-grams hashed into the same buckets. */
async function bpeEncoder(dim) {
  const t0 = performance.now();
  const mod = await import('gpt-tokenizer/encoding/cl100k_base');
  const importMs = performance.now() - t0;
  const { fmix32 } = await load('train/counter-random.js');
  const encode = (text) => {
    const ids = mod.encode(text);
    const acc = new Map();
    const add = (h) => {
      const j = h & (dim - 1);
      acc.set(j, (acc.get(j) ?? 0) + (h >>> 31 ? -1 : 1));
    };
    for (let i = 0; i < ids.length; i++) {
      add(fmix32((ids[i] ^ 0x1b873593) >>> 0));
      if (i >= 1) add(fmix32(((Math.imul(ids[i - 1], 31) + ids[i]) ^ 0x2f5e8c31) >>> 0));
      if (i >= 2) add(fmix32(((Math.imul(Math.imul(ids[i - 2], 31) + ids[i - 1], 31) + ids[i]) ^ 0x68e31da4) >>> 0));
    }
    const keys = [...acc.keys()].sort((a, b) => a - b);
    const idx = Int32Array.from(keys);
    const val = Float64Array.from(keys.map((k) => acc.get(k)));
    let s = 0;
    for (const v of val) s += v * v;
    for (let k = 0; k < val.length; k++) val[k] /= Math.sqrt(s) || 1;
    return { idx, val };
  };
  return { encode, importMs };
}

/** Held-out pairwise accuracy of bonds trained on the sample forge with a given encoder. */
async function heldOutWith(encode, views, cases) {
  const { BaseModel } = await load('train/base-model.js');
  const { builtinBaseSpec } = await load('train/base-spec.js');
  const { train, DEFAULT_SETTINGS } = await load('train/trainer.js');
  const { Inference } = await load('train/inference.js');
  const { heldOutPairs } = await load('memoir/sample/planted/held-out.js');
  const base = new BaseModel(builtinBaseSpec());
  const out = {};
  const bonds = {};
  for (const [player, agent, pref] of cases) {
    const key = `${player}/${agent}`;
    if (!bonds[key]) {
      const r = train(base, encode, {
        agent,
        kind: 'bond',
        examples: views[player][agent],
        frozen: [],
        settings: DEFAULT_SETTINGS,
      });
      bonds[key] = r.status === 'trained' ? r.lora : null;
    }
    const lora = bonds[key];
    const inf = new Inference({
      agent,
      head: 'score',
      base,
      council: null,
      bond: lora ? { lora, alpha: DEFAULT_SETTINGS.alpha, version: 1 } : null,
    });
    const pairs = heldOutPairs(pref, { seed: 11, n: 400 })
      .filter((p) => p.agent === agent)
      .slice(0, 200);
    let ok = 0;
    for (const p of pairs) {
      const [a, b] = inf.outputs([encode(p.preferred), encode(p.dispreferred)], 0);
      if (a[0] > b[0]) ok++;
    }
    out[`${player} ${pref}`] = ok / pairs.length;
  }
  return out;
}

function timeChild(code) {
  const ts = [];
  for (let i = 0; i < 5; i++) {
    const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
      encoding: 'utf8',
      cwd: fileURLToPath(new URL('..', import.meta.url)),
    });
    if (r.status !== 0) return NaN;
    ts.push(Number(r.stdout.trim()));
  }
  return median(ts);
}

function duBytes(path) {
  const r = spawnSync('du', ['-sb', path], { encoding: 'utf8' });
  return r.status === 0 ? Number(r.stdout.split(/\s/)[0]) : NaN;
}

async function encoderDecision(report) {
  const dir = tempDir('kourai-bench-enc-');
  try {
    const { inputEncoder } = await load('train/encoder/inputs.js');
    const { builtinBaseSpec } = await load('train/base-spec.js');
    const inputs = inputEncoder(builtinBaseSpec());
    let bpe = null;
    try {
      bpe = await bpeEncoder(1 << 14);
    } catch {
      report('encoder comparison: gpt-tokenizer', 'n/a', '', 'not installed (npm ci installs the devDependency)');
    }
    const cases = [
      ['ariadne', 'techne', 'early-returns'],
      ['ariadne', 'techne', 'typed-signatures'],
      ['ariadne', 'mneme', 'conventional-commits'],
      ['ariadne', 'techne', 'no-leftovers'],
      ['daedalus', 'techne', 'single-exit'],
      ['daedalus', 'techne', 'untyped-signatures'],
      ['daedalus', 'techne', 'why-comments'],
      ['daedalus', 'metis', 'numbered-steps'],
    ];
    const views = {
      ariadne: await sampleViews(dir, 'ariadne', ['techne', 'mneme']),
      daedalus: await sampleViews(dir, 'daedalus', ['techne', 'metis']),
    };
    const encoders = [
      ['hashed n-grams + structure', (t) => inputs(t, null)],
      ...(bpe ? [['gpt-tokenizer BPE', bpe.encode]] : []),
    ];
    const mean = (o) => Object.values(o).reduce((a, b) => a + b, 0) / Object.values(o).length;
    for (const [name, encode] of encoders) {
      const acc = await heldOutWith(encode, views, cases);
      report(
        `encoder ${name}: held-out pairwise accuracy, mean of ${cases.length}`,
        mean(acc),
        '',
        Object.entries(acc)
          .map(([k, v]) => `${k} ${(v * 100).toFixed(0)}%`)
          .join(', '),
      );
      report(`encoder ${name}: held-out pairwise accuracy, worst`, Math.min(...Object.values(acc)), '');
      const texts = views.ariadne.techne.slice(0, 200).map((e) => (e.kind === 'pair' ? e.chosen : e.text));
      for (const t of texts) encode(t);
      const t0 = performance.now();
      for (let r = 0; r < 5; r++) for (const t of texts) encode(t);
      report(
        `encoder ${name}: encode`,
        ((performance.now() - t0) * 1000) / (5 * texts.length),
        'µs/text',
        `${texts.length} sample-forge proposals`,
      );
    }
    const hashedImport = timeChild(
      `const t=performance.now(); await import('./dist/train/encoder/hashed-ngrams.js'); console.log(performance.now()-t)`,
    );
    report('encoder hashed n-grams: import (fresh process)', hashedImport, 'ms', 'install size 0 (part of kourai)');
    if (bpe) {
      const bpeImport = timeChild(
        `const t=performance.now(); const m = await import('gpt-tokenizer/encoding/cl100k_base'); m.encode('x'); console.log(performance.now()-t)`,
      );
      const size = duBytes(fileURLToPath(new URL('../node_modules/gpt-tokenizer', import.meta.url)));
      report(
        'encoder gpt-tokenizer BPE: import + first encode (fresh process)',
        bpeImport,
        'ms',
        `install size ${(size / 1048576).toFixed(1)} MB`,
      );
    }
  } finally {
    cleanup(dir);
  }
}

async function inProcessScoring(report) {
  const { BaseModel } = await load('train/base-model.js');
  const { builtinBaseSpec } = await load('train/base-spec.js');
  const { inputEncoder } = await load('train/encoder/inputs.js');
  const { Inference } = await load('train/inference.js');
  const { initLora } = await load('train/lora.js');
  const { mulberry32 } = await load('runtime/seeded-random.js');
  const base = new BaseModel(builtinBaseSpec());
  const inputs = inputEncoder(base.spec);
  const enc = { encode: (t) => inputs(t, null) };
  const r = mulberry32(3);
  const mk = () => {
    const l = initLora({ inDim: base.inDim, hidden: base.hidden, out: 1, rank: 8 }, r);
    for (let i = 0; i < l.denseB.length; i++) l.denseB[i] = r() - 0.5;
    for (let i = 0; i < l.directAt.length; i++) l.directAt[i] = (r() - 0.5) * 0.01;
    for (let i = 0; i < l.directB.length; i++) l.directB[i] = r() - 0.5;
    return { lora: l, alpha: 16, version: 1 };
  };
  const inf = new Inference({ agent: 'techne', head: 'score', base, council: mk(), bond: mk() });
  const { text } = textMaker(5);
  // fresh candidates every time: encoding and first-use weight columns included
  const batches = Array.from({ length: 600 }, () => Array.from({ length: 10 }, () => text()));
  for (const b of batches.slice(0, 50))
    inf.rank(
      b.map((t) => enc.encode(t)),
      0.5,
    );
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  for (const b of batches.slice(50))
    inf.rank(
      b.map((t) => enc.encode(t)),
      0.5,
    );
  const wall = (performance.now() - t0) / 1000;
  const cu = process.cpuUsage(c0);
  const cpu = (cu.user + cu.system) / 1e6;
  const n = (batches.length - 50) * 10;
  // On a shared machine the wall clock counts other people's work; CPU time is this thread's.
  report(
    'in-process scoring (encode + base + council + bond), ≥ 5,000/s',
    n / cpu,
    'cand/cpu-s',
    `batches of 10 fresh candidates; ${(n / wall).toFixed(0)}/s by the wall clock at load ${loadavg()[0].toFixed(1)} on ${cpus().length} cores`,
  );
}

async function wholeProcess(report, { quick }) {
  const home = tempDir('kourai-bench-train-');
  try {
    kourai(['memoir', 'synth', '--sessions', '8'], { home });
    const t = kourai(['train', 'bond', '--json'], { home });
    const res = JSON.parse(t.stdout);
    const trained = res.agents.filter((a) => a.status === 'trained').length;
    report(
      'train bond, 8-session sample forge, whole process (< 30 s)',
      t.seconds,
      's',
      `${trained} of ${res.agents.length} agents trained; ${t.cpuSeconds.toFixed(2)} s of CPU; peak RSS ${t.rssMB.toFixed(0)} MB`,
    );
    // The same data again: each agent's λ comes from its previous version (same digest), not a new cross-validation.
    const again = kourai(['train', 'bond', '--json'], { home });
    report(
      '  again on the same data (λ reused, adapters identical)',
      again.seconds,
      's',
      `${again.cpuSeconds.toFixed(2)} s of CPU = ${(again.cpuSeconds / t.cpuSeconds).toFixed(2)}× the first run's`,
    );
    const pair = [
      'function a(x) {\n  if (!x) return 0;\n  return x.y;\n}',
      'function a(x) {\n  if (x) {\n    return x.y;\n  }\n  return 0;\n}',
    ];
    const cands = Array.from({ length: 10 }, (_, i) => pair[i % 2]);
    // interleaved, so both see the same load
    const vs = [];
    const ss = [];
    for (let i = 0; i < 7; i++) {
      vs.push(kourai(['--version'], { home }));
      ss.push(kourai(['score', '--agent', 'techne', ...cands], { home }));
    }
    const [ver, sc] = [median(vs.map((r) => r.seconds)), median(ss.map((r) => r.seconds))];
    const [verCpu, scCpu] = [median(vs.map((r) => r.cpuSeconds)), median(ss.map((r) => r.cpuSeconds))];
    report(
      'kourai score, 10 candidates, whole process (≤ 2× --version)',
      sc / ver,
      '×',
      `wall ${(sc * 1000).toFixed(0)} ms vs --version ${(ver * 1000).toFixed(0)} ms (medians of 7, interleaved)`,
    );
    report(
      '  the same by CPU time',
      scCpu / verCpu,
      '×',
      `${(scCpu * 1000).toFixed(0)} ms vs ${(verCpu * 1000).toFixed(0)} ms of CPU`,
    );
  } finally {
    cleanup(home);
  }
  // Peak memory follows the buffer, not the memoir.
  const sizes = quick ? [10_000, 30_000] : [10_000, 100_000];
  const peaks = [];
  for (const n of sizes) {
    const h = tempDir('kourai-bench-rss-');
    try {
      const f = join(h, 'm', 'memoir.jsonl');
      kourai(['memoir', 'synth', '--out', f, '--entries', String(n)], { home: h });
      kourai(['memoir', 'index', '--memoir', f], { home: h });
      const r = kourai(['train', 'bond', '--memoir', f, '--epochs', '3', '--buffer', '2000', '--json'], { home: h });
      peaks.push(r.rssMB);
      report(
        `train bond --buffer 2000, ${n.toLocaleString('en-US')}-entry memoir: peak RSS`,
        r.rssMB,
        'MB',
        `${r.seconds.toFixed(1)} s (index built beforehand)`,
      );
    } finally {
      cleanup(h);
    }
  }
  report(
    `  peak RSS ${sizes[1].toLocaleString('en-US')} vs ${sizes[0].toLocaleString('en-US')} entries (within 20%)`,
    peaks[1] / peaks[0],
    '×',
  );
}

export async function run(report, { quick } = {}) {
  await encoderDecision(report);
  const opts = quick ? { examples: 300, steps: 60, batch: 16 } : { examples: 1000, steps: 200, batch: 16 };
  // JS and NumPy alternate, three rounds each, and the medians are compared: on a shared machine
  // either side can land on a bad moment (NumPy's BLAS threads suffer most under load).
  const fmt = (xs) => xs.map((x) => x.toFixed(0)).join(' / ');
  for (const kind of ['pair', 'binary', 'graded', 'route']) {
    const rounds = [];
    for (let i = 0; i < 3; i++) rounds.push(await throughput(kind, opts));
    const r = rounds[rounds.length - 1];
    const js = rounds.map((x) => x.jsRate);
    report(
      `training throughput, ${kind} (JS trainer)`,
      median(js),
      'ex/s',
      `median of 3 (${fmt(js)}); ${opts.steps} AdamW steps of ${opts.batch}`,
    );
    if (r.error) {
      report(`training throughput, ${kind} (NumPy)`, 'n/a', '', r.error);
      continue;
    }
    const np = rounds.map((x) => x.npRate);
    report(
      `training throughput, ${kind} (NumPy, one BLAS thread, same model/objective/optimiser)`,
      median(np),
      'ex/s',
      `median of 3 (${fmt(np)}); JS/NumPy ${(median(js) / median(np)).toFixed(2)}× (goal ≥ 1)`,
    );
    report(
      `  loss after ${opts.steps} steps: JS vs NumPy`,
      r.lastJs,
      '',
      `NumPy ${r.lastNp.toPrecision(8)}; max relative difference over all steps ${Math.max(...rounds.map((x) => x.maxRel)).toExponential(1)} (first step ${r.firstJs.toPrecision(6)})`,
    );
  }
  await inProcessScoring(report);
  await wholeProcess(report, { quick });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const rows = [];
  await run(
    (name, value, unit, note = '') => {
      rows.push(name);
      console.log(
        `${name.padEnd(62)} ${String(typeof value === 'number' ? value.toPrecision(5) : value).padStart(12)} ${unit.padEnd(8)} ${note}`,
      );
    },
    { quick: process.argv.includes('--quick') },
  );
}
