import type { Agent } from '../memoir/format/agents.js';
import { mulberry32 } from '../runtime/seeded-random.js';
import { AdamW } from './adamw.js';
import { headOf } from './adapter-layout.js';
import type { BaseModel, HeadName } from './base-model.js';
import { hashString } from './encoder/hashed-ngrams.js';
import type { Example } from './examples/types.js';
import type { Features } from './features.js';
import { inputBlocks } from './base-spec.js';
import { directMatrix, setDirectMatrix } from './direct-path.js';
import {
  chooseLambdaOn,
  crossValidationDigest,
  fitLinear,
  LAMBDA_GRID,
  NO_HOLD,
  type Hold,
  sceneFolds,
  type LambdaChoice,
  type LinearProblem,
} from './linear-fit.js';
import { cloneLora, initLora, loraWeights, nonlinearSize, type LoraDims, type LoraWeights } from './lora.js';
import { majority, pairwiseAccuracy, type Metric } from './metrics.js';
import { applied as appliedAdapter, Network, type Applied, type Workspace } from './network.js';
import { logisticLoss, pairLoss, routeLoss, sigmoid } from './objectives.js';
import { RoutePrior } from './route-prior/prior.js';
import { sceneRoles } from './scene-split.js';

/** Everything that shapes a training run besides the data. */
export interface TrainSettings {
  /** Most epochs (early stopping may end sooner). */
  epochs: number;
  rank: number;
  alpha: number;
  lr: number;
  seed: number;
  batchSize: number;
  weightDecay: number;
  clipNorm: number;
  /** Epochs without a better primary metric (pairwise accuracy, …) on the stopping scenes before stopping. */
  patience: number;
  /** The direct path's L2 penalty λ; null: chosen by cross-validation over the training scenes. */
  l2: number | null;
  /** Share of scenes held out: half decide early stopping, half measure the reported metrics. */
  heldOutFraction: number;
  /** Fewer usable examples than this and the agent is skipped, not trained on noise. */
  minExamples: number;
}

export const DEFAULT_SETTINGS: TrainSettings = {
  epochs: 20,
  rank: 8,
  alpha: 16,
  lr: 0.01,
  seed: 7,
  batchSize: 16,
  weightDecay: 0.01,
  clipNorm: 1,
  patience: 5,
  l2: null,
  heldOutFraction: 0.3,
  minExamples: 8,
};

export interface TrainJob {
  agent: Agent;
  /** Which adapter is trained. Council training never applies a bond adapter (`frozen` is empty). */
  kind: 'bond' | 'council';
  examples: readonly Example[];
  /** Start from this adapter (the current council adapter of a federation round); else PEFT init. Its rank must be settings.rank. */
  start?: LoraWeights | null;
  /** Adapters applied, unchanged, while training (the current council adapter under a bond), with their α. */
  frozen: readonly { lora: LoraWeights; alpha: number }[];
  settings: TrainSettings;
  /**
   * An earlier run's λ choice (this agent's previous version): reused, without cross-validating
   * again, when its digest is this run's (the same training data, folds and offsets), so the
   * adapter is bit for bit the one a fresh choice gives.
   */
  lambdaCache?: LambdaCache | null;
}

/** A cross-validated λ and the digest of what it was chosen on (linear-fit.ts crossValidationDigest). */
export interface LambdaCache {
  digest: string;
  lambda: number;
  hold: string;
  curve: LambdaChoice['curve'];
}

export interface EpochProgress {
  agent: Agent;
  epoch: number;
  epochs: number;
  batch: number;
  batches: number;
  trainLoss: number;
  /** Loss on the stopping scenes after the last finished epoch. */
  stopLoss: number | null;
  /** The primary metric on the stopping scenes after the last finished epoch (progress only). */
  stopMetric: number | null;
  examplesPerSec: number;
  elapsedMs: number;
}

export interface TrainHooks {
  /** After every batch (throttle before printing). */
  onProgress?(p: EpochProgress): void;
  /** Checked between batches: true stops the run (in-process callers; the worker is terminated instead). */
  shouldStop?(): boolean;
  now?: () => number;
}

export interface TrainReport {
  agent: Agent;
  kind: 'bond' | 'council';
  head: HeadName;
  examples: {
    used: number;
    train: number;
    stopping: number;
    validation: number;
    byKind: Record<string, number>;
    skipped: Record<string, number>;
  };
  scenes: { train: number; stopping: number; validation: number };
  epochs: number;
  bestEpoch: number;
  stoppedEarly: boolean;
  /** Losses of the kept weights: training, the stopping scenes (the best seen), validation. */
  trainLoss: number;
  stoppingLoss: number;
  valLoss: number;
  /** Measured on the validation scenes only (never seen by training or early stopping). */
  metrics: Metric[];
  /**
   * The direct path's fit: its λ and how it was chosen; for a cross-validated λ, the digest of
   * what it was chosen on and whether an earlier run's choice was reused (job.lambdaCache).
   */
  direct: {
    lambda: number;
    /** The hold the fit used (linear-fit.ts Hold): which blocks of inputs it left out. */
    hold: string;
    chosenBy: 'cross-validation' | 'setting';
    curve: LambdaChoice['curve'];
    digest: string | null;
    reused: boolean;
  };
  examplesPerSec: number;
  settings: TrainSettings;
}

export type TrainOutcome =
  | { status: 'trained'; report: TrainReport; lora: LoraWeights }
  | { status: 'skipped'; agent: Agent; reason: string; examples: number };

interface Item {
  kind: Example['kind'];
  /** Text ids: the text (binary, graded, route) or the chosen side (pair). */
  a: number;
  /** The rejected side of a pair. */
  b: number;
  /** Label (0/1), graded target, or route class. */
  target: number;
  w: number;
  scene: string;
  /** Pairs: 1 when the chosen side is the player's revision, 0 when the player chose between two texts. */
  revision: number;
  /** Route: the routing prior's logits, added to the head's (the head learns what the prior leaves). */
  offset: Float64Array | null;
}

/** The texts of a run (with the prompt they answer), encoded once and projected through the frozen layer once. */
export interface PreparedTexts {
  features: Features[];
  z0: Float64Array[];
  lengths: number[];
}

/** Encodes a text answering a prompt (null: none known) into the base's input vector. */
export type EncodeFn = (text: string, prompt: string | null) => Features;

export function train(base: BaseModel, encode: EncodeFn, job: TrainJob, hooks: TrainHooks = {}): TrainOutcome {
  const { agent, settings } = job;
  const head = headOf(agent);
  const now = hooks.now ?? (() => performance.now());
  const t0 = now();
  const prep = prepare(base, encode, job.examples, head);
  const { items, texts, skipped } = prep;
  if (items.length < settings.minExamples) {
    return {
      status: 'skipped',
      agent,
      reason: `${items.length} usable example${items.length === 1 ? '' : 's'} (needs at least ${settings.minExamples})`,
      examples: items.length,
    };
  }
  const roles = sceneRoles(
    items.map((i) => i.scene),
    settings.heldOutFraction,
    settings.seed,
  );
  if (!roles) {
    const n = new Set(items.map((i) => i.scene)).size;
    return {
      status: 'skipped',
      agent,
      reason: `${items.length} examples in ${n} scene${n === 1 ? '' : 's'} (needs three: to train, to stop early, to validate)`,
      examples: items.length,
    };
  }
  const trainIdx: number[] = [];
  const stopIdx: number[] = [];
  const valIdx: number[] = [];
  items.forEach((it, i) => {
    const role = roles.get(it.scene);
    (role === 'stop' ? stopIdx : role === 'validate' ? valIdx : trainIdx).push(i);
  });

  const rand = mulberry32((settings.seed ^ hashString(agent)) >>> 0);
  const net = new Network(base, head);
  const dims: LoraDims = { inDim: base.inDim, hidden: base.hidden, out: net.out, rank: settings.rank };
  const lora = job.start ? cloneLora(job.start) : initLora(dims, rand);
  for (const f of job.frozen) checkDims(f.lora, { ...dims, rank: f.lora.rank });
  checkDims(lora, dims);
  const applied: Applied[] = [
    ...job.frozen.map((f) => appliedAdapter(f.lora, f.alpha)),
    appliedAdapter(lora, settings.alpha),
  ];
  const run = new Run(net, applied, texts, items);

  // Stage 1: the direct path, fitted on the training scenes (λ by cross-validation on them).
  const direct = fitDirect(
    base,
    net,
    applied,
    lora,
    settings,
    texts,
    items,
    trainIdx,
    job.start ?? null,
    rand,
    job.lambdaCache ?? null,
  );
  if (hooks.shouldStop?.()) return { status: 'skipped', agent, reason: 'stopped', examples: items.length };

  // Stage 2: the nonlinear path by AdamW over its factors, the direct path fixed; the epoch kept
  // is the one with the best primary metric on the stopping scenes (epoch 0: the fit alone).
  const prefix = nonlinearSize(dims);
  const params = lora.all.subarray(0, prefix);
  const opt = new AdamW(prefix, { lr: settings.lr, weightDecay: settings.weightDecay, clipNorm: settings.clipNorm });
  const grad = loraWeights(dims);
  const gradPrefix = grad.all.subarray(0, prefix);

  const batches = Math.ceil(trainIdx.length / settings.batchSize);
  const score0 = run.stopScore(stopIdx, trainIdx);
  let best = { ...score0, epoch: 0, all: Float64Array.from(params) };
  let bad = 0;
  let epoch = 0;
  let processed = 0;
  let lastVal: { loss: number; metric: number | null } | null = { loss: score0.loss, metric: score0.metric };
  let stoppedEarly = false;
  const order = [...trainIdx];
  // The routing head learns only its direct path: weights on the words the player's tasks used,
  // held toward the prior by the fit's L2. The nonlinear path reads every text through the frozen
  // random projection, so what it learns from a few scenes moves the answer on words it never saw
  // (trained on the sample forge it sent real tasks away from what the prior knew).
  const epochs = head === 'route' ? 0 : settings.epochs;
  for (epoch = 1; epoch <= epochs; epoch++) {
    shuffle(order, rand);
    let epochLoss = 0;
    let seen = 0;
    for (let b = 0; b < batches; b++) {
      if (hooks.shouldStop?.()) return { status: 'skipped', agent, reason: 'stopped', examples: items.length };
      const batch = order.slice(b * settings.batchSize, (b + 1) * settings.batchSize);
      let loss = 0;
      for (const i of batch) loss += run.accumulate(i, grad);
      grad.all.fill(0, prefix);
      opt.stepAndClear(params, gradPrefix, 1 / batch.length);
      epochLoss += loss;
      seen += batch.length;
      processed += batch.length;
      const elapsed = now() - t0;
      hooks.onProgress?.({
        agent,
        epoch,
        epochs: settings.epochs,
        batch: b + 1,
        batches,
        trainLoss: epochLoss / seen,
        stopLoss: lastVal?.loss ?? null,
        stopMetric: lastVal?.metric ?? null,
        examplesPerSec: elapsed > 0 ? (processed * 1000) / elapsed : 0,
        elapsedMs: elapsed,
      });
    }
    const sc = run.stopScore(stopIdx, trainIdx);
    lastVal = { loss: sc.loss, metric: sc.metric };
    if (sc.key > best.key + 1e-9 || (Math.abs(sc.key - best.key) <= 1e-9 && sc.loss < best.loss - 1e-6)) {
      best = { ...sc, epoch, all: Float64Array.from(params) };
      bad = 0;
    } else if (++bad >= settings.patience) {
      stoppedEarly = true;
      break;
    }
  }
  const epochsRun = Math.min(epoch, epochs);
  params.set(best.all);
  const elapsed = now() - t0;
  const trainEval = run.evaluate(trainIdx);
  const valEval = run.evaluate(valIdx);
  const count = (role: string): number => [...roles.values()].filter((r) => r === role).length;
  const report: TrainReport = {
    agent,
    kind: job.kind,
    head,
    examples: {
      used: items.length,
      train: trainIdx.length,
      stopping: stopIdx.length,
      validation: valIdx.length,
      byKind: countBy(items.map((i) => i.kind)),
      skipped,
    },
    scenes: { train: count('train'), stopping: count('stop'), validation: count('validate') },
    epochs: epochsRun,
    bestEpoch: best.epoch,
    stoppedEarly,
    trainLoss: trainEval.loss,
    stoppingLoss: best.loss,
    valLoss: valEval.loss,
    metrics: run.metrics(valIdx, trainIdx),
    direct,
    examplesPerSec: elapsed > 0 ? (processed * 1000) / elapsed : 0,
    settings,
  };
  return { status: 'trained', report, lora };
}

/**
 * The routing head's penalty toward the prior reaches much higher than the scoring heads': cross-
 * validation keeps the strongest λ that routes the player's held-out tasks as well as any, so a
 * history the prior already explains (the sample forge's) moves nothing, and one that routes
 * against it (the player's own habits) still can.
 */
const ROUTE_LAMBDA_GRID: readonly number[] = [10, 3, 1, 0.3, 0.1, ...LAMBDA_GRID];

/** The scoring heads' grid reaches higher than the council's (a few hundred pairs often want more than 3·10⁻²). */
const SCORE_LAMBDA_GRID: readonly number[] = [0.3, 0.1, ...LAMBDA_GRID];

/**
 * The holds a scoring head's cross-validation chooses among: every block, or the character n-grams,
 * the structure features or both left out of the direct path, so that the words (or an embedding)
 * carry the preference. On hh-rlhf's development part the word block alone beat every block under
 * one penalty by 1.4–3 points, and a 30× heavier penalty on the others did not reproduce it.
 */
function scoringHolds(blockOf: (c: number) => 'ngrams' | 'structure' | 'other', columns: number): Hold[] {
  const hold = (name: string, dropped: readonly string[]): Hold => {
    const w = new Float64Array(columns).fill(1);
    for (let c = 0; c < columns; c++) if (dropped.includes(blockOf(c))) w[c] = Infinity;
    return { name, weights: w };
  };
  return [
    NO_HOLD,
    hold('without n-grams', ['ngrams']),
    hold('without structure', ['structure']),
    hold('without n-grams and structure', ['ngrams', 'structure']),
  ];
}

/**
 * Fits the trained adapter's direct path (linear-fit.ts) on the training items: the rest of the
 * network (base, frozen adapters, this adapter's nonlinear factors) is each text's offset. The
 * structure inputs are rescaled to unit spread over the training texts for the fit, so one λ
 * suits every block; the stored weights are in the base's units.
 */
function fitDirect(
  base: BaseModel,
  net: Network,
  applied: readonly Applied[],
  lora: LoraWeights,
  settings: TrainSettings,
  texts: PreparedTexts,
  items: readonly Item[],
  trainIdx: readonly number[],
  start: LoraWeights | null,
  rand: () => number,
  cache: LambdaCache | null,
): TrainReport['direct'] {
  const scale = settings.alpha / settings.rank;
  const prior = start ? directMatrix(start, scale) : null;
  const savedB = Float64Array.from(lora.directB);
  lora.directB.fill(0);
  const ws = net.workspace(applied);
  const offsets = texts.features.map((f, t) =>
    Float64Array.from(net.forward(f, texts.z0[t] as Float64Array, applied, ws)),
  );
  lora.directB.set(savedB);
  // A route item's prior is part of the rest of the model too: the direct path learns what it leaves.
  const withPrior = new Set<number>();
  for (const it of items) {
    if (!it.offset || withPrior.has(it.a)) continue;
    withPrior.add(it.a);
    const o = offsets[it.a] as Float64Array;
    for (let k = 0; k < o.length; k++) o[k] = (o[k] as number) + (it.offset[k] as number);
  }
  const O = net.out;
  const D = base.inDim;
  const { structure, semantic } = inputBlocks(base.spec);
  // Spread of each structure input over the training texts.
  const used = new Set<number>();
  for (const i of trainIdx) {
    const it = items[i] as Item;
    used.add(it.a);
    if (it.b >= 0) used.add(it.b);
  }
  const K = semantic - structure;
  const sum = new Float64Array(K);
  const sq = new Float64Array(K);
  for (const t of used) {
    const { idx, val } = texts.features[t] as Features;
    for (let k = 0; k < idx.length; k++) {
      const j = idx[k] as number;
      if (j < structure || j >= semantic) continue;
      sum[j - structure] = (sum[j - structure] as number) + (val[k] as number);
      sq[j - structure] = (sq[j - structure] as number) + (val[k] as number) ** 2;
    }
  }
  const n = Math.max(1, used.size);
  const sd = Array.from({ length: K }, (_, k) => {
    const m = (sum[k] as number) / n;
    const v = (sq[k] as number) / n - m * m;
    return v > 1e-12 ? Math.sqrt(v) : 1;
  });
  // The fit runs over the columns the training texts touch (the others have no data: they stay
  // at the prior), renumbered densely, so its cost follows the data, not the input width.
  const colOf = new Int32Array(D).fill(-1);
  const active: number[] = [];
  for (const t of used)
    for (const j of (texts.features[t] as Features).idx) if (colOf[j] === -1) colOf[j] = active.push(j) - 1;
  const unitOf = (j: number): number => (j >= structure && j < semantic ? (sd[j - structure] as number) : 1);
  const empty: Features = { idx: new Int32Array(0), val: new Float64Array(0) };
  const compact = texts.features.map(({ idx, val }, t) => {
    if (!used.has(t)) return empty;
    const ci = new Int32Array(idx.length);
    const cv = new Float64Array(idx.length);
    for (let k = 0; k < idx.length; k++) {
      const j = idx[k] as number;
      ci[k] = colOf[j] as number;
      cv[k] = (val[k] as number) / unitOf(j);
    }
    return { idx: ci, val: cv };
  });
  const A = active.length;
  // [out][in] (adapter) <-> [active][out] (fit), structure columns in fit units.
  let priorFit: Float64Array | null = null;
  if (prior) {
    priorFit = new Float64Array(A * O);
    for (let c = 0; c < A; c++)
      for (let o = 0; o < O; o++)
        priorFit[c * O + o] = (prior[o * D + (active[c] as number)] as number) * unitOf(active[c] as number);
  }
  const problem: LinearProblem = { out: O, dim: A, texts: compact, offsets, items, prior: priorFit };
  let choice: LambdaChoice = { lambda: settings.l2 ?? NaN, hold: NO_HOLD.name, curve: [] };
  let digest: string | null = null;
  let reused = false;
  const route = net.head === 'route';
  const holds = route
    ? [NO_HOLD]
    : scoringHolds(
        (c) =>
          (active[c] as number) < structure ? 'ngrams' : (active[c] as number) < semantic ? 'structure' : 'other',
        A,
      );
  if (settings.l2 === null) {
    const grid = route ? ROUTE_LAMBDA_GRID : SCORE_LAMBDA_GRID;
    // The routing head keeps accuracy: its prior, not the fit, carries the calibration.
    const by = route ? 'accuracy' : 'loss';
    // The folds are drawn either way, so the seeded stream goes on the same with or without reuse.
    const folds = sceneFolds(problem.items, trainIdx, 3, rand);
    digest = crossValidationDigest(problem, folds, grid, holds, by);
    reused =
      cache !== null &&
      cache.digest === digest &&
      grid.includes(cache.lambda) &&
      holds.some((h) => h.name === cache.hold);
    choice =
      reused && cache
        ? { lambda: cache.lambda, hold: cache.hold, curve: cache.curve }
        : chooseLambdaOn(problem, folds, { grid, by, holds });
  }
  problem.penalty = (holds.find((h) => h.name === choice.hold) ?? NO_HOLD).weights;
  const U = priorFit ? Float64Array.from(priorFit) : new Float64Array(A * O);
  fitLinear(problem, trainIdx, choice.lambda, U);
  const W = prior ? Float64Array.from(prior) : new Float64Array(O * D);
  for (let c = 0; c < A; c++) {
    const j = active[c] as number;
    for (let o = 0; o < O; o++) W[o * D + j] = (U[c * O + o] as number) / unitOf(j);
  }
  setDirectMatrix(lora, W, scale);
  return {
    lambda: choice.lambda,
    hold: choice.hold,
    chosenBy: settings.l2 !== null ? 'setting' : 'cross-validation',
    curve: choice.curve,
    digest,
    reused,
  };
}

function checkDims(l: LoraWeights, d: LoraDims): void {
  if (l.inDim !== d.inDim || l.hidden !== d.hidden || l.out !== d.out || l.rank !== d.rank) {
    throw new RangeError(
      `adapter dims [in ${l.inDim}, hidden ${l.hidden}, out ${l.out}, rank ${l.rank}] do not match the run's [in ${d.inDim}, hidden ${d.hidden}, out ${d.out}, rank ${d.rank}]`,
    );
  }
}

function countBy(xs: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const x of xs) out[x] = (out[x] ?? 0) + 1;
  return out;
}

function shuffle(xs: number[], rand: () => number): void {
  for (let i = xs.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    const t = xs[i] as number;
    xs[i] = xs[j] as number;
    xs[j] = t;
  }
}

/** Examples -> items over a table of unique texts; examples the head cannot use are counted by reason. */
export function prepare(
  base: BaseModel,
  encode: EncodeFn,
  examples: readonly Example[],
  head: HeadName,
): { items: Item[]; texts: PreparedTexts; skipped: Record<string, number> } {
  const ids = new Map<string, number>();
  const texts: PreparedTexts = { features: [], z0: [], lengths: [] };
  const skipped: Record<string, number> = {};
  const skip = (why: string): void => {
    skipped[why] = (skipped[why] ?? 0) + 1;
  };
  const text = (t: string, prompt: string | null): number => {
    const key = prompt === null ? `\u0001${t}` : `${prompt}\u0000${t}`;
    let id = ids.get(key);
    if (id === undefined) {
      id = texts.features.length;
      ids.set(key, id);
      const f = encode(t, prompt);
      const z0 = new Float64Array(base.hidden);
      base.project(f, z0);
      texts.features.push(f);
      texts.z0.push(z0);
      texts.lengths.push(t.length);
    }
    return id;
  };
  const items: Item[] = [];
  const specialists = base.spec.specialists;
  const prior = head === 'route' ? new RoutePrior(specialists) : null;
  for (const e of examples) {
    if (!(e.weight > 0) || !Number.isFinite(e.weight)) {
      skip('non-positive weight');
      continue;
    }
    const base = { kind: e.kind, w: e.weight, scene: e.scene, b: -1, revision: 0, offset: null };
    const prompt = e.prompt ?? null;
    if (e.kind === 'route') {
      if (head !== 'route') {
        skip('route label for a scoring head');
        continue;
      }
      const label = specialists.indexOf(e.label);
      if (label < 0) {
        skip('route label not a specialist');
        continue;
      }
      items.push({
        ...base,
        a: text(e.text, null),
        target: label,
        offset: prior ? prior.score(e.description === undefined ? e.text : e.description, e.taskType).logits : null,
      });
      continue;
    }
    if (head === 'route') {
      skip(`${e.kind} example for the routing head`);
      continue;
    }
    if (e.kind === 'pair') {
      if (e.chosen === e.rejected) {
        skip('pair with identical texts');
        continue;
      }
      items.push({
        ...base,
        a: text(e.chosen, prompt),
        b: text(e.rejected, prompt),
        target: 1,
        revision: e.chosenBy === 'revision' ? 1 : 0,
      });
    } else if (e.kind === 'binary') items.push({ ...base, a: text(e.text, prompt), target: e.label });
    else {
      if (!(e.target >= 0 && e.target <= 1)) {
        skip('graded target outside [0, 1]');
        continue;
      }
      items.push({ ...base, a: text(e.text, prompt), target: e.target });
    }
  }
  return { items, texts, skipped };
}

/** Forward/backward over prepared items for one network and its applied adapters (the last trains). */
export class Run {
  private readonly ws1: Workspace;
  private readonly ws2: Workspace;
  private readonly gy: Float64Array;
  private readonly yo: Float64Array;
  private readonly t: number;

  constructor(
    private readonly net: Network,
    private readonly applied: readonly Applied[],
    private readonly texts: PreparedTexts,
    private readonly items: readonly Item[],
  ) {
    this.ws1 = net.workspace(applied);
    this.ws2 = net.workspace(applied);
    this.gy = new Float64Array(net.out);
    this.yo = new Float64Array(net.out);
    this.t = applied.length - 1;
  }

  /** The head's outputs plus the item's offset (the routing prior), in scratch space. */
  private withOffset(y: Float64Array, offset: Float64Array | null): Float64Array {
    if (!offset) return y;
    for (let o = 0; o < y.length; o++) this.yo[o] = (y[o] as number) + (offset[o] as number);
    return this.yo;
  }

  private fwd(text: number, ws: Workspace): Float64Array {
    return this.net.forward(
      this.texts.features[text] as Features,
      this.texts.z0[text] as Float64Array,
      this.applied,
      ws,
    );
  }

  /** Adds item i's gradient to `grad` (unscaled) and returns its loss. */
  accumulate(i: number, grad: LoraWeights): number {
    const it = this.items[i] as Item;
    const { net, applied, t, gy, ws1, ws2, texts } = this;
    if (it.kind === 'pair') {
      const yc = this.fwd(it.a, ws1)[0] as number;
      const yr = this.fwd(it.b, ws2)[0] as number;
      const { loss, g } = pairLoss(yc, yr, it.w);
      gy[0] = g;
      net.backward(texts.features[it.a] as Features, applied, t, ws1, gy, grad);
      gy[0] = -g;
      net.backward(texts.features[it.b] as Features, applied, t, ws2, gy, grad);
      return loss;
    }
    const y = this.fwd(it.a, ws1);
    let loss: number;
    if (it.kind === 'route') loss = routeLoss(this.withOffset(y, it.offset), it.target, it.w, gy);
    else {
      const r = logisticLoss(y[0] as number, it.target, it.w);
      gy[0] = r.g;
      loss = r.loss;
    }
    net.backward(texts.features[it.a] as Features, applied, t, ws1, gy, grad);
    return loss;
  }

  /** Loss of one item without gradients, and its prediction (pair margin, logit, or class). */
  private predict(i: number): { loss: number; margin: number; argmax: number } {
    const it = this.items[i] as Item;
    if (it.kind === 'pair') {
      const yc = this.fwd(it.a, this.ws1)[0] as number;
      const yr = this.fwd(it.b, this.ws2)[0] as number;
      return { loss: pairLoss(yc, yr, it.w).loss, margin: yc - yr, argmax: -1 };
    }
    if (it.kind === 'route') {
      const y = this.withOffset(this.fwd(it.a, this.ws1), it.offset);
      let arg = 0;
      for (let o = 1; o < y.length; o++) if ((y[o] as number) > (y[arg] as number)) arg = o;
      return { loss: routeLoss(y, it.target, it.w, this.gy), margin: 0, argmax: arg };
    }
    const y = this.fwd(it.a, this.ws1);
    return { loss: logisticLoss(y[0] as number, it.target, it.w).loss, margin: y[0] as number, argmax: -1 };
  }

  /** Mean weighted loss over items (the quantity training minimises). */
  evaluate(idx: readonly number[]): { loss: number } {
    let s = 0;
    for (const i of idx) s += this.predict(i).loss;
    return { loss: idx.length ? s / idx.length : NaN };
  }

  /**
   * What early stopping compares: the primary metric on the stopping scenes as a "higher is
   * better" key (mean absolute error negated), and the loss for ties.
   */
  stopScore(idx: readonly number[], fit: readonly number[]): { key: number; metric: number | null; loss: number } {
    const m = this.metrics(idx, fit)[0];
    const loss = this.evaluate(idx).loss;
    if (!m) return { key: -Infinity, metric: null, loss };
    return { key: m.name === 'mean_abs_error' ? -m.value : m.value, metric: m.value, loss };
  }

  /** Metrics on `idx` (validation) per kind, baselines fitted on `fit` (training) where they need fitting. */
  metrics(idx: readonly number[], fit: readonly number[]): Metric[] {
    const out: Metric[] = [];
    const items = this.items;
    const of = (kind: Item['kind'], xs: readonly number[]): Item[] =>
      xs.map((i) => items[i] as Item).filter((it) => it.kind === kind);
    const idxOf = (kind: Item['kind']): number[] => idx.filter((i) => (items[i] as Item).kind === kind);
    const pairs = idxOf('pair');
    if (pairs.length) {
      const margins = pairs.map((i) => this.predict(i).margin);
      const its = pairs.map((i) => items[i] as Item);
      const len = this.texts.lengths;
      const shorter = pairwiseAccuracy(its.map((it) => (len[it.b] as number) - (len[it.a] as number)));
      const revised = pairwiseAccuracy(its.map((it) => it.revision));
      out.push({
        kind: 'pair',
        name: 'pairwise_accuracy',
        value: pairwiseAccuracy(margins),
        n: pairs.length,
        baselines: [
          { name: 'always_prefer_revised', value: revised },
          { name: 'always_prefer_shorter', value: shorter },
        ],
      });
    }
    const route = idxOf('route');
    if (route.length) {
      const maj = majority(of('route', fit).map((it) => it.target)) ?? 0;
      const hits = route.filter((i) => this.predict(i).argmax === (items[i] as Item).target).length;
      const majHits = route.filter((i) => (items[i] as Item).target === maj).length;
      // The prior alone (what routing is before any history): what the head must add to.
      const priorHits = route.filter((i) => {
        const it = items[i] as Item;
        if (!it.offset) return false;
        let arg = 0;
        for (let o = 1; o < it.offset.length; o++) if ((it.offset[o] as number) > (it.offset[arg] as number)) arg = o;
        return arg === it.target;
      }).length;
      out.push({
        kind: 'route',
        name: 'accuracy',
        value: hits / route.length,
        n: route.length,
        baselines: [
          { name: 'majority_class', value: majHits / route.length },
          { name: 'routing_prior', value: priorHits / route.length },
        ],
      });
    }
    const bin = idxOf('binary');
    if (bin.length) {
      const maj = majority(of('binary', fit).map((it) => it.target)) ?? 1;
      const hits = bin.filter((i) => (this.predict(i).margin > 0 ? 1 : 0) === (items[i] as Item).target).length;
      const majHits = bin.filter((i) => (items[i] as Item).target === maj).length;
      out.push({
        kind: 'binary',
        name: 'accuracy',
        value: hits / bin.length,
        n: bin.length,
        baselines: [{ name: 'majority_class', value: majHits / bin.length }],
      });
    }
    const graded = idxOf('graded');
    if (graded.length) {
      const fitTargets = of('graded', fit).map((it) => it.target);
      const mean = fitTargets.length ? fitTargets.reduce((a, b) => a + b, 0) / fitTargets.length : 0.5;
      let err = 0;
      let base = 0;
      for (const i of graded) {
        const it = items[i] as Item;
        err += Math.abs(sigmoid(this.predict(i).margin) - it.target);
        base += Math.abs(mean - it.target);
      }
      out.push({
        kind: 'graded',
        name: 'mean_abs_error',
        value: err / graded.length,
        n: graded.length,
        baselines: [{ name: 'mean_target', value: base / graded.length }],
      });
    }
    return out;
  }
}
