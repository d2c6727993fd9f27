import { test } from 'vitest';
import { BaseModel } from '../../src/train/base-model.js';
import { builtinBaseSpec } from '../../src/train/base-spec.js';
import { inputEncoder } from '../../src/train/encoder/inputs.js';
import { localDatasets } from '../../src/train/datasets/local.js';
import { examplesFromLines } from '../../src/train/datasets/held-out.js';
import { fitLinear, itemHits, type LinearProblem, type FitItem } from '../../src/train/linear-fit.js';

test('prof', () => {
  const spec = builtinBaseSpec();
  const enc = inputEncoder(spec);
  const f = localDatasets(process.env)[0]!;
  if (f.status !== 'found') return;
  const { examples } = examplesFromLines(f.dataset.convert({ limit: 600 }).lines, 'metis');
  const texts: any[] = []; const items: FitItem[] = [];
  let t0 = performance.now();
  for (const e of examples) { if (e.kind !== 'pair') continue; texts.push(enc(e.chosen, e.prompt ?? null), enc(e.rejected, e.prompt ?? null)); items.push({ kind: 'pair', a: texts.length - 2, b: texts.length - 1, target: 1, w: 1, scene: e.scene }); }
  console.log('encode ms', performance.now() - t0, 'nnz avg', texts.reduce((a, t) => a + t.idx.length, 0) / texts.length);
  const D = 16384 + 14;
  const p: LinearProblem = { out: 1, dim: D, texts, offsets: texts.map(() => new Float64Array(1)), items, prior: null };
  const idx = items.map((_, i) => i).slice(0, 480); const test = items.map((_, i) => i).slice(480);
  for (const lam of [1e-1, 1e-2, 1e-3, 1e-4]) {
    t0 = performance.now();
    const W = new Float64Array(D);
    fitLinear(p, idx, lam, W);
    console.log(lam, 'ms', (performance.now() - t0).toFixed(0), 'train', itemHits(p, W, idx).hits / idx.length, 'test', itemHits(p, W, test).hits / test.length);
  }
}, 600_000);
test('evalspeed', () => {
  const D = 16398; const texts: any[] = []; const items: FitItem[] = [];
  let seed = 1; const r = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
  for (let i = 0; i < 960; i++) { const idx = new Int32Array(371).map(() => Math.floor(r() * D)).sort(); texts.push({ idx, val: new Float64Array(371).fill(0.05) }); }
  for (let i = 0; i < 480; i++) items.push({ kind: 'pair', a: 2 * i, b: 2 * i + 1, target: 1, w: 1, scene: 's' + i });
  const p: LinearProblem = { out: 1, dim: D, texts, offsets: texts.map(() => new Float64Array(1)), items, prior: null };
  const t0 = performance.now();
  const W = new Float64Array(D);
  fitLinear(p, items.map((_, i) => i), 1e-2, W, { maxIter: 20 });
  console.log('synthetic 20 iters ms', performance.now() - t0);
});
