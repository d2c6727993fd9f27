import { createHash } from 'node:crypto';
import type { Features } from './features.js';
import { logisticLoss, pairLoss, routeLoss, sigmoid } from './objectives.js';

/**
 * The direct path's fit: a regularised linear model on the sparse inputs, the same objectives as
 * the network (Bradley–Terry pairs, logistic binary and graded targets, softmax routing), each
 * text's output the fixed part of the network (`offsets`) plus W x. Convex, so it is solved, not
 * descended: L-BFGS on the mean weighted loss + (λ/2) Σ_j m_j (W_j − W0_j)², with gradients that
 * touch only the columns of the features present. m_j is 1 unless a hold (below) weighs a column
 * more, or drops it (m_j = ∞). λ and the hold are chosen by cross-validation over scenes of the training part
 * (`chooseLambda`), ties to the larger λ and the earlier hold.
 */
export interface FitItem {
  kind: 'pair' | 'binary' | 'graded' | 'route';
  a: number;
  /** The rejected text of a pair; -1 otherwise. */
  b: number;
  target: number;
  w: number;
  scene: string;
}

export interface LinearProblem {
  out: number;
  dim: number;
  texts: readonly Features[];
  /** Per text, `out` values added to W x (the rest of the network). */
  offsets: readonly Float64Array[];
  items: readonly FitItem[];
  /** Shrink towards this [dim][out] matrix (a starting adapter); null: towards zero. */
  prior: Float64Array | null;
  /** Per column, the penalty's multiplier m_j (a hold's weights; ∞: the column is dropped); null or absent: 1 everywhere. */
  penalty?: Float64Array | null;
}

/**
 * A hold: blocks of inputs the fit leaves out (weight ∞: their columns stay at the prior), so that
 * with a few hundred pairs a block that carries little for this player (character n-grams on
 * prose) does not drown the one that carries the preference. Cross-validation picks among the
 * holds it is offered.
 */
export interface Hold {
  name: string;
  /** Per column of the problem, the penalty's multiplier; null: 1 everywhere. */
  weights: Float64Array | null;
}

export const NO_HOLD: Hold = { name: 'none', weights: null };

export const LAMBDA_GRID: readonly number[] = [3e-2, 1e-2, 3e-3, 1e-3, 3e-4, 1e-4];
/** L-BFGS iterations per λ and fold while choosing: selection needs the ranking of λ values, not the last digit. */
const CV_MAX_ITER = 40;

interface Objective {
  value: number;
  grad: Float64Array;
}

/** Scores of the texts `used` under W ([dim][out]). */
function scores(p: LinearProblem, W: Float64Array, used: readonly number[], out: Float64Array[]): void {
  const O = p.out;
  for (const t of used) {
    const s = out[t] as Float64Array;
    s.set(p.offsets[t] as Float64Array);
    const { idx, val } = p.texts[t] as Features;
    if (O === 1) {
      let s0 = s[0] as number;
      for (let k = 0; k < idx.length; k++) s0 += (val[k] as number) * (W[idx[k] as number] as number);
      s[0] = s0;
      continue;
    }
    for (let k = 0; k < idx.length; k++) {
      const base = (idx[k] as number) * O;
      const v = val[k] as number;
      for (let o = 0; o < O; o++) s[o] = (s[o] as number) + v * (W[base + o] as number);
    }
  }
}

function textsOf(p: LinearProblem, idx: readonly number[]): number[] {
  const set = new Set<number>();
  for (const i of idx) {
    const it = p.items[i] as FitItem;
    set.add(it.a);
    if (it.b >= 0) set.add(it.b);
  }
  return [...set].sort((a, b) => a - b);
}

class Evaluator {
  private readonly used: number[];
  private readonly s: Float64Array[];
  private readonly g: Float64Array[];
  private readonly gy: Float64Array;
  private readonly wsum: number;

  constructor(
    private readonly p: LinearProblem,
    private readonly idx: readonly number[],
    private readonly lambda: number,
  ) {
    this.used = textsOf(p, idx);
    this.s = p.texts.map(() => new Float64Array(p.out));
    this.g = p.texts.map(() => new Float64Array(p.out));
    this.gy = new Float64Array(p.out);
    this.wsum = idx.reduce((a, i) => a + (p.items[i] as FitItem).w, 0) || 1;
  }

  /** The objective at W; its gradient is written to `grad` (zeroed first). */
  eval(W: Float64Array, grad: Float64Array): Objective {
    const { p, used, s, g, gy } = this;
    const O = p.out;
    scores(p, W, used, s);
    for (const t of used) (g[t] as Float64Array).fill(0);
    let loss = 0;
    for (const i of this.idx) {
      const it = p.items[i] as FitItem;
      const sa = s[it.a] as Float64Array;
      const ga = g[it.a] as Float64Array;
      if (it.kind === 'pair') {
        const r = pairLoss(sa[0] as number, (s[it.b] as Float64Array)[0] as number, it.w);
        loss += r.loss;
        ga[0] = (ga[0] as number) + r.g;
        const gb = g[it.b] as Float64Array;
        gb[0] = (gb[0] as number) - r.g;
      } else if (it.kind === 'route') {
        loss += routeLoss(sa, it.target, it.w, gy);
        for (let o = 0; o < O; o++) ga[o] = (ga[o] as number) + (gy[o] as number);
      } else {
        const r = logisticLoss(sa[0] as number, it.target, it.w);
        loss += r.loss;
        ga[0] = (ga[0] as number) + r.g;
      }
    }
    const inv = 1 / this.wsum;
    grad.fill(0);
    for (const t of used) {
      const gt = g[t] as Float64Array;
      const { idx, val } = p.texts[t] as Features;
      if (O === 1) {
        const g0 = gt[0] as number;
        for (let k = 0; k < idx.length; k++) {
          const j = idx[k] as number;
          grad[j] = (grad[j] as number) + (val[k] as number) * inv * g0;
        }
        continue;
      }
      for (let k = 0; k < idx.length; k++) {
        const base = (idx[k] as number) * O;
        const v = (val[k] as number) * inv;
        for (let o = 0; o < O; o++) grad[base + o] = (grad[base + o] as number) + v * (gt[o] as number);
      }
    }
    let reg = 0;
    const prior = p.prior;
    const pen = p.penalty ?? null;
    const lam = this.lambda;
    for (let j = 0; j < W.length; j++) {
      // W is [dim][out]: column c's weights are W[c·out … c·out + out − 1].
      const m = pen ? (pen[Math.floor(j / O)] as number) : 1;
      if (m === Infinity) {
        // A dropped column stays where the fit starts it (the prior): no gradient moves it.
        grad[j] = 0;
        continue;
      }
      const d = (W[j] as number) - (prior ? (prior[j] as number) : 0);
      if (d === 0) continue;
      reg += m * d * d;
      grad[j] = (grad[j] as number) + lam * m * d;
    }
    return { value: loss * inv + 0.5 * lam * reg, grad };
  }
}

function dot(a: Float64Array, b: Float64Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
}

/** Minimises the objective on items `idx` from W (changed in place); L-BFGS with backtracking. */
export function fitLinear(
  p: LinearProblem,
  idx: readonly number[],
  lambda: number,
  W: Float64Array,
  opts: { maxIter?: number; tol?: number } = {},
): Float64Array {
  const ev = new Evaluator(p, idx, lambda);
  const maxIter = opts.maxIter ?? 100;
  const tol = opts.tol ?? 1e-5;
  const m = 8;
  const n = W.length;
  // The stored pairs, with their sᵀy and yᵀy (each is used in every later iteration).
  const S: Float64Array[] = [];
  const Y: Float64Array[] = [];
  const SY: number[] = [];
  const YY: number[] = [];
  // Vectors are recycled (a pair dropped from the memory, a rejected step's gradient), not reallocated.
  const free: Float64Array[] = [];
  const take = (): Float64Array => free.pop() ?? new Float64Array(n);
  let cur = ev.eval(W, take());
  const dir = new Float64Array(n);
  const W0 = new Float64Array(n);
  const alpha = new Float64Array(m);
  for (let iter = 0; iter < maxIter; iter++) {
    let gmax = 0;
    for (let j = 0; j < n; j++) gmax = Math.max(gmax, Math.abs(cur.grad[j] as number));
    if (gmax < tol) break;
    // Two-loop recursion: dir = −H g.
    dir.set(cur.grad);
    for (let k = S.length - 1; k >= 0; k--) {
      const a = dot(S[k] as Float64Array, dir) / (SY[k] as number);
      alpha[k] = a;
      const y = Y[k] as Float64Array;
      for (let j = 0; j < n; j++) dir[j] = (dir[j] as number) - a * (y[j] as number);
    }
    if (S.length > 0) {
      const gamma = (SY[S.length - 1] as number) / (YY[S.length - 1] as number);
      for (let j = 0; j < n; j++) dir[j] = (dir[j] as number) * gamma;
    } else {
      const norm = Math.sqrt(dot(cur.grad, cur.grad));
      for (let j = 0; j < n; j++) dir[j] = (dir[j] as number) / Math.max(norm, 1e-12);
    }
    for (let k = 0; k < S.length; k++) {
      const y = Y[k] as Float64Array;
      const s = S[k] as Float64Array;
      const b = dot(y, dir) / (SY[k] as number);
      const c = (alpha[k] as number) - b;
      for (let j = 0; j < n; j++) dir[j] = (dir[j] as number) + c * (s[j] as number);
    }
    for (let j = 0; j < n; j++) dir[j] = -(dir[j] as number);
    let slope = dot(dir, cur.grad);
    if (!(slope < 0)) {
      // Not a descent direction: restart from steepest descent.
      free.push(...S, ...Y);
      S.length = 0;
      Y.length = 0;
      SY.length = 0;
      YY.length = 0;
      for (let j = 0; j < n; j++) dir[j] = -(cur.grad[j] as number);
      slope = dot(dir, cur.grad);
    }
    let step = 1;
    W0.set(W);
    let next: Objective | null = null;
    for (let ls = 0; ls < 30; ls++) {
      for (let j = 0; j < n; j++) W[j] = (W0[j] as number) + step * (dir[j] as number);
      const cand = ev.eval(W, take());
      if (cand.value <= cur.value + 1e-4 * step * slope) {
        next = cand;
        break;
      }
      free.push(cand.grad);
      step *= 0.5;
    }
    if (!next) {
      W.set(W0);
      break;
    }
    const s = take();
    const y = take();
    for (let j = 0; j < n; j++) {
      s[j] = (W[j] as number) - (W0[j] as number);
      y[j] = (next.grad[j] as number) - (cur.grad[j] as number);
    }
    const decrease = cur.value - next.value;
    free.push(cur.grad);
    cur = next;
    const sy = dot(s, y);
    if (sy > 1e-12) {
      S.push(s);
      Y.push(y);
      SY.push(sy);
      YY.push(dot(y, y));
      if (S.length > m) {
        free.push(S.shift() as Float64Array, Y.shift() as Float64Array);
        SY.shift();
        YY.shift();
      }
    } else free.push(s, y);
    if (decrease < 1e-8 * Math.max(1, Math.abs(cur.value))) break;
  }
  return W;
}

/** Per item: 1 when predicted right (a tie ½; graded: 1 − |σ(y) − target|), and its loss. */
export function itemHits(p: LinearProblem, W: Float64Array, idx: readonly number[]): { hits: number; loss: number } {
  const s = p.texts.map(() => new Float64Array(p.out));
  scores(p, W, textsOf(p, idx), s);
  const gy = new Float64Array(p.out);
  let hits = 0;
  let loss = 0;
  for (const i of idx) {
    const it = p.items[i] as FitItem;
    const sa = s[it.a] as Float64Array;
    if (it.kind === 'pair') {
      const d = (sa[0] as number) - ((s[it.b] as Float64Array)[0] as number);
      hits += d > 0 ? 1 : d === 0 ? 0.5 : 0;
      loss += pairLoss(sa[0] as number, (s[it.b] as Float64Array)[0] as number, 1).loss;
    } else if (it.kind === 'route') {
      let arg = 0;
      for (let o = 1; o < p.out; o++) if ((sa[o] as number) > (sa[arg] as number)) arg = o;
      hits += arg === it.target ? 1 : 0;
      loss += routeLoss(sa, it.target, 1, gy);
    } else if (it.kind === 'binary') {
      hits += (sa[0] as number) > 0 === (it.target === 1) ? 1 : 0;
      loss += logisticLoss(sa[0] as number, it.target, 1).loss;
    } else {
      hits += 1 - Math.abs(sigmoid(sa[0] as number) - it.target);
      loss += logisticLoss(sa[0] as number, it.target, 1).loss;
    }
  }
  return { hits, loss };
}

/** Scene folds of the items (k at most, each scene in one fold), deterministic for a seed. */
export function sceneFolds(
  items: readonly FitItem[],
  idx: readonly number[],
  k: number,
  rand: () => number,
): number[][] {
  const scenes = [...new Set(idx.map((i) => (items[i] as FitItem).scene))].sort();
  for (let i = scenes.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [scenes[i], scenes[j]] = [scenes[j] as string, scenes[i] as string];
  }
  const n = Math.min(k, scenes.length);
  const foldOf = new Map(scenes.map((s, i) => [s, i % n]));
  const folds: number[][] = Array.from({ length: n }, () => []);
  for (const i of idx) (folds[foldOf.get((items[i] as FitItem).scene) as number] as number[]).push(i);
  return folds;
}

export interface LambdaChoice {
  lambda: number;
  /** The hold chosen (its name). */
  hold: string;
  /** Mean held-out hit rate and loss per hold and grid value, holds in the order offered, each in grid order. */
  curve: { lambda: number; hold: string; accuracy: number; loss: number }[];
}

/** λ by k-fold cross-validation over scenes of `idx` (the training part only). */
export function chooseLambda(
  p: LinearProblem,
  idx: readonly number[],
  rand: () => number,
  opts: {
    folds?: number;
    grid?: readonly number[];
    maxIter?: number;
    by?: 'accuracy' | 'loss';
    holds?: readonly Hold[];
  } = {},
): LambdaChoice {
  return chooseLambdaOn(p, sceneFolds(p.items, idx, opts.folds ?? 3, rand), opts);
}

/**
 * λ and the hold by cross-validation over the given folds (item indices): by held-out accuracy, or
 * by held-out loss (`by: 'loss'`), which moves in smaller steps than accuracy on a few hundred pairs.
 */
export function chooseLambdaOn(
  p: LinearProblem,
  folds: readonly (readonly number[])[],
  opts: { grid?: readonly number[]; maxIter?: number; by?: 'accuracy' | 'loss'; holds?: readonly Hold[] } = {},
): LambdaChoice {
  const grid = opts.grid ?? LAMBDA_GRID;
  const holds = opts.holds ?? [NO_HOLD];
  const byLoss = opts.by === 'loss';
  if (folds.length < 2 || grid.length * holds.length === 1)
    return { lambda: grid[Math.floor(grid.length / 2)] as number, hold: (holds[0] as Hold).name, curve: [] };
  const cells = holds.flatMap((h) => grid.map((lambda) => ({ h, lambda, hits: 0, loss: 0 })));
  let n = 0;
  for (let f = 0; f < folds.length; f++) {
    const test = folds[f] as number[];
    const train = folds.flatMap((x, g) => (g === f ? [] : x));
    n += test.length;
    for (const h of holds) {
      const q: LinearProblem = { ...p, penalty: h.weights };
      // Warm starts down the grid (from the most regularised).
      const W = p.prior ? Float64Array.from(p.prior) : new Float64Array(p.dim * p.out);
      for (const c of cells) {
        if (c.h !== h) continue;
        fitLinear(q, train, c.lambda, W, { maxIter: opts.maxIter ?? CV_MAX_ITER });
        const r = itemHits(q, W, test);
        c.hits += r.hits;
        c.loss += r.loss;
      }
    }
  }
  const curve = cells.map((c) => ({ lambda: c.lambda, hold: c.h.name, accuracy: c.hits / n, loss: c.loss / n }));
  let best = 0;
  for (let g = 1; g < curve.length; g++) {
    const c = curve[g] as (typeof curve)[number];
    const b = curve[best] as (typeof curve)[number];
    if (byLoss ? c.loss < b.loss - 1e-12 : c.accuracy > b.accuracy + 1e-9) best = g;
  }
  const b = curve[best] as (typeof curve)[number];
  return { lambda: b.lambda, hold: b.hold, curve };
}

/**
 * What a cross-validation's outcome (chooseLambdaOn over `grid`) is a function of: the
 * folds, every item in them, the inputs and offsets of their texts, the prior and the problem's
 * shape. Equal digests choose the same λ with the same curve, so a run may reuse an earlier
 * choice instead of cross-validating again. The tag names the fitting code: changing fitLinear,
 * itemHits or the selection rule changes it, so no choice made by other code is ever reused.
 */
export const CV_TAG = 'kourai-lambda-cv/2';

export function crossValidationDigest(
  p: LinearProblem,
  folds: readonly (readonly number[])[],
  grid: readonly number[] = LAMBDA_GRID,
  holds: readonly Hold[] = [NO_HOLD],
  by: 'accuracy' | 'loss' = 'accuracy',
): string {
  const h = createHash('sha256');
  h.update(JSON.stringify({ tag: CV_TAG, grid, by, maxIter: CV_MAX_ITER, out: p.out, dim: p.dim }));
  const bytes = (a: Int32Array | Float64Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  const all: number[] = [];
  for (const f of folds) {
    h.update(`fold ${f.length}\n`);
    h.update(bytes(Int32Array.from(f)));
    all.push(...f);
  }
  const items = new Float64Array(all.length * 5);
  all.forEach((i, k) => {
    const it = p.items[i] as FitItem;
    items.set([['pair', 'binary', 'graded', 'route'].indexOf(it.kind), it.a, it.b, it.target, it.w], k * 5);
  });
  h.update(bytes(items));
  for (const t of textsOf(p, all)) {
    const { idx, val } = p.texts[t] as Features;
    h.update(`text ${t} ${idx.length}\n`);
    h.update(bytes(idx));
    h.update(bytes(val));
    h.update(bytes(p.offsets[t] as Float64Array));
  }
  h.update(p.prior ? bytes(p.prior) : 'no prior');
  for (const hold of holds) {
    h.update(`hold ${hold.name}\n`);
    h.update(hold.weights ? bytes(hold.weights) : 'ones');
  }
  return `sha256:${h.digest('hex')}`;
}
