import { bulyanCombineInto, bulyanSelect } from './bulyan.js';
import { medianInto } from './coordinate-median.js';
import { addStats, collapseEchoes, echoGroups, emptyStats, type UpdateStats } from './echo.js';
import { allFinite, weightedMeanInto } from './fedavg.js';
import { krumSelect, multiKrumSelect } from './krum.js';
import type { Layout } from '../tensor/layout.js';
import { loraPairs } from './layout.js';
import { LORA_FAIR_DEFAULTS, loraFairLayer, type LoraFairOptions } from './lora-fair.js';
import type { GramPool } from './gram-pool.js';
import { GramAccumulator, type DistanceMatrix } from './pairwise-distances.js';
import { instantiateKernel, type Kernel } from './simd-kernel.js';
import { trimmedMeanInto } from './trimmed-mean.js';
import { AggregationError, firstNonFinite, normaliseWeights, type Vec } from './vec.js';

/**
 * Strategy selection and the one aggregation driver shared by the council server (updates read
 * chunk by chunk from SQLite) and `kourai council aggregate` (updates in memory).
 *
 * Two passes at most. Rules that select (Krum, Multi-Krum, Bulyan, LoRA-FAIR with robust
 * selection) first stream every chunk through the Gram accumulator to get the pairwise
 * distances; then one combine pass computes the aggregate chunk by chunk and, on the way, each
 * update's squared distance to it (the trust score's input). Memory: one chunk of every update
 * at a time (one LoRA layer for LoRA-FAIR), plus the float64 aggregate.
 *
 * Rules that select count each group of echoes (near-identical updates, echo.ts) once: its first
 * update stands for it and the others leave, counted against f as non-finite updates are. Copies
 * of one vector then cannot crowd Krum's neighbourhoods or Multi-Krum's and Bulyan's selections.
 */
export const STRATEGIES = ['fedavg', 'median', 'trimmed-mean', 'krum', 'multikrum', 'bulyan', 'lora-fair'] as const;
export type Strategy = (typeof STRATEGIES)[number];
/**
 * Robust pre-selection before LoRA-FAIR. It runs on the flattened factor updates (A and B
 * concatenated), not on the products BₖAₖ: the factors are what forges clip and noise (so the
 * distances mean what the privacy accounting says they mean), and the products are m×n per layer
 * and are never formed. The selected forges are then combined by LoRA-FAIR with their weights.
 */
export const SELECTIONS = ['none', 'multikrum', 'bulyan'] as const;
export type Selection = (typeof SELECTIONS)[number];

export interface StrategyConfig {
  strategy: Strategy;
  /** Byzantine bound f. */
  f: number;
  /** Trimmed mean: values dropped at each end (default f). */
  trim?: number;
  /** Multi-Krum: updates kept (default n − f). */
  m?: number;
  /** LoRA-FAIR: robust selection first (default multikrum when f > 0, else none). */
  selection?: Selection;
  loraFair?: Partial<LoraFairOptions>;
}

/** Coordinates per chunk: the unit of storage and of streaming (256 KiB of float32). */
export const CHUNK_COORDS = 65536;

export function selectionOf(c: StrategyConfig): Selection {
  return c.selection ?? (c.f > 0 ? 'multikrum' : 'none');
}

/** The smallest number of (finite) updates the strategy accepts, and why. */
export function requirement(c: StrategyConfig): { min: number; rule: string } {
  const f = c.f;
  const robust = (name: string, sel: 'krum' | 'bulyan'): { min: number; rule: string } =>
    sel === 'krum'
      ? { min: 2 * f + 3, rule: `${name} with f=${f} needs n > 2f+2 (at least ${2 * f + 3} updates)` }
      : { min: 4 * f + 3, rule: `${name} with f=${f} needs n ≥ 4f+3 (at least ${4 * f + 3} updates)` };
  switch (c.strategy) {
    case 'fedavg':
    case 'median':
      return { min: 1, rule: `${c.strategy} needs at least one update` };
    case 'trimmed-mean': {
      const k = c.trim ?? f;
      return { min: 2 * k + 1, rule: `trimmed-mean with k=${k} needs n > 2k (at least ${2 * k + 1} updates)` };
    }
    case 'krum':
    case 'multikrum':
      return robust(c.strategy, 'krum');
    case 'bulyan':
      return robust('bulyan', 'bulyan');
    case 'lora-fair': {
      const sel = selectionOf(c);
      if (sel === 'none') return { min: 1, rule: 'lora-fair needs at least one update' };
      return robust(`lora-fair after ${sel} selection`, sel === 'multikrum' ? 'krum' : 'bulyan');
    }
  }
}

/** Checks a configuration itself (not the number of updates). */
export function validateConfig(c: StrategyConfig): void {
  if (!Number.isInteger(c.f) || c.f < 0)
    throw new AggregationError(`f (the Byzantine bound) must be a whole number ≥ 0, got ${c.f}`, 'bad_parameter');
  if (c.trim !== undefined && (!Number.isInteger(c.trim) || c.trim < 0))
    throw new AggregationError(`trim must be a whole number ≥ 0, got ${c.trim}`, 'bad_parameter');
  if (c.m !== undefined && (!Number.isInteger(c.m) || c.m < 1))
    throw new AggregationError(`m must be a whole number ≥ 1, got ${c.m}`, 'bad_parameter');
  if (c.strategy === 'lora-fair' && (c.loraFair?.cosine ?? 'flat') !== 'flat')
    throw new AggregationError('lora-fair: only the flat cosine is available on factored updates', 'bad_parameter');
}

/** Where the driver reads updates from. */
export interface UpdateSource {
  readonly n: number;
  readonly layout: Layout;
  /** Coordinates [start, end) of every update (all float32 or all float64). */
  read(start: number, end: number): Vec[];
  /** Per-update weights (noised sample counts); uniform when absent. */
  readonly weights?: readonly number[] | undefined;
  /**
   * The global adapter the updates are deltas from, coordinates [start, end). LoRA-FAIR works on
   * the factors themselves (base + delta); absent means the updates are the factors.
   */
  base?: ((start: number, end: number) => Vec) | undefined;
}

export function inMemorySource(
  rows: readonly Vec[],
  layout: Layout,
  opts: { weights?: readonly number[]; base?: Vec } = {},
): UpdateSource {
  for (const [i, r] of rows.entries()) {
    if (r.length !== layout.size)
      throw new AggregationError(
        `update ${i} has ${r.length} coordinates, the layout has ${layout.size}`,
        'length_mismatch',
      );
  }
  const base = opts.base;
  return {
    n: rows.length,
    layout,
    read: (start, end) => rows.map((r) => r.subarray(start, end)),
    weights: opts.weights,
    base: base ? (start, end) => base.subarray(start, end) : undefined,
  };
}

/** [start, end) ranges: each tensor split into CHUNK_COORDS pieces (the storage chunks). */
export function chunkRanges(layout: Layout, chunk = CHUNK_COORDS): [number, number][] {
  const out: [number, number][] = [];
  for (const t of layout.tensors) {
    for (let s = 0; s < t.size; s += chunk) out.push([t.offset + s, t.offset + Math.min(t.size, s + chunk)]);
  }
  return out;
}

export interface LayerReport {
  layer: string;
  cos_before: number | null;
  cos_after: number | null;
  delta_b_norm: number;
  /** The most ‖ΔB‖ may be (see LayerResult.dBBound); null when λ = 0 gives no bound. */
  delta_b_bound: number | null;
}

export interface AggregateOutcome {
  strategy: Strategy;
  n: number;
  f: number;
  /** The aggregated update (same space as the inputs: deltas in, delta out). */
  aggregate: Float64Array;
  /** Updates that contributed (selection order for Krum/Bulyan). */
  used: number[];
  /** Updates dropped for NaN/Inf. */
  nonFinite: number[];
  /** Squared distance of every update to the aggregate (+Infinity for non-finite ones). */
  distanceToAggregate: number[];
  /** The pairwise squared distances, when the rule needed them (selection). */
  pairwise?: DistanceMatrix;
  /** Each update's Σuᵢ², Σuᵢ⁴ and non-zero count, gathered with the distances. */
  stats?: UpdateStats;
  /** Groups of echoes (indices, ascending), each counted once by the selection. */
  echoes?: number[][];
  selection?: Selection;
  scores?: number[];
  neighbours?: number;
  m?: number;
  theta?: number;
  beta?: number;
  trim?: number;
  layers?: LayerReport[];
  unpaired?: string[];
}

const SELECTING: ReadonlySet<Strategy> = new Set(['krum', 'multikrum', 'bulyan']);

/**
 * Streams the source through the Gram accumulator; patches the pairs the Gram form cannot resolve.
 * `stats`, when given, gathers each update's norms and non-zero count on the same pass.
 */
export function streamDistances(
  source: UpdateSource,
  ranges: readonly [number, number][],
  kernel: Kernel | null = instantiateKernel(),
  pool: GramPool | null = null,
  stats?: UpdateStats,
): DistanceMatrix {
  const acc = new GramAccumulator(source.n, { kernel, pool });
  for (const [s, e] of ranges) {
    const rows = source.read(s, e);
    if (stats) addStats(stats, rows);
    acc.add(rows);
  }
  const { matrix, recompute } = acc.distances();
  if (recompute.length > 0) {
    const sums = new Float64Array(recompute.length);
    for (const [s, e] of ranges) {
      const rows = source.read(s, e);
      recompute.forEach(([i, j], p) => {
        const a = rows[i] as Vec;
        const b = rows[j] as Vec;
        let t = 0;
        for (let k = 0; k < a.length; k++) {
          const x = (a[k] as number) - (b[k] as number);
          t += x * x;
        }
        sums[p] = (sums[p] as number) + t;
      });
    }
    recompute.forEach(([i, j], p) => {
      const v = Number.isFinite(sums[p]) ? (sums[p] as number) : Infinity;
      matrix.d2[i * matrix.n + j] = v;
      matrix.d2[j * matrix.n + i] = v;
    });
  }
  return matrix;
}

export function aggregateUpdates(
  source: UpdateSource,
  config: StrategyConfig,
  opts: { chunk?: number; kernel?: Kernel | null; pool?: GramPool | null } = {},
): AggregateOutcome {
  validateConfig(config);
  const kernel = opts.kernel === undefined ? instantiateKernel() : opts.kernel;
  const { n, layout } = source;
  const f = config.f;
  const strategy = config.strategy;
  const ranges = chunkRanges(layout, opts.chunk);
  const req = requirement(config);
  if (n < req.min) throw new AggregationError(`${req.rule}; got ${n}`, 'precondition');

  const outcome: AggregateOutcome = {
    strategy,
    n,
    f,
    aggregate: new Float64Array(layout.size),
    used: [],
    nonFinite: [],
    distanceToAggregate: [],
  };
  const selection = strategy === 'lora-fair' ? selectionOf(config) : undefined;
  if (selection) outcome.selection = selection;
  const needsDistances = SELECTING.has(strategy) || (selection !== undefined && selection !== 'none');

  let used: number[];
  if (needsDistances) {
    const stats = emptyStats(n);
    const full = streamDistances(source, ranges, kernel, opts.pool ?? null, stats);
    outcome.pairwise = full;
    outcome.stats = stats;
    outcome.nonFinite = full.nonFinite.flatMap((bad, i) => (bad ? [i] : []));
    const groups = echoGroups({ pair2: full.d2, norm2: stats.norm2, nonzero: stats.nonzero });
    if (groups.length) outcome.echoes = groups;
    const { dist, original, removed } = collapseEchoes(full, groups);
    // Every copy that left is a Byzantine update caught (honest updates never echo): it counts against f.
    const fc = Math.max(0, f - removed);
    const back = (k: number): number => original[k] as number;
    // A copy's score is its group's (it is the same submission).
    const spread = (s: readonly number[]): number[] => {
      const out = new Array<number>(n).fill(Infinity);
      original.forEach((i, k) => (out[i] = s[k] as number));
      for (const g of groups) for (const i of g.slice(1)) out[i] = out[g[0] as number] as number;
      return out;
    };
    const select = (): number[] => {
      if (strategy === 'krum') {
        const sel = krumSelect(dist, fc);
        Object.assign(outcome, { scores: spread(sel.scores), neighbours: sel.neighbours });
        return [back(sel.index)];
      }
      if (strategy === 'multikrum' || selection === 'multikrum') {
        const finite = dist.nonFinite.filter((x) => !x).length;
        const sel = multiKrumSelect(dist, fc, config.m === undefined ? undefined : Math.min(config.m, finite));
        Object.assign(outcome, { scores: spread(sel.scores), neighbours: sel.neighbours, m: sel.m });
        return sel.indices.map(back);
      }
      const sel = bulyanSelect(dist, fc);
      Object.assign(outcome, { theta: sel.theta, beta: sel.beta });
      return sel.selected.map(back);
    };
    try {
      used = select();
    } catch (err) {
      if (err instanceof AggregationError && removed > 0)
        throw new AggregationError(
          `${err.message} (after counting ${groups.length} group${groups.length === 1 ? '' : 's'} of identical updates once, ${removed} cop${removed === 1 ? 'y' : 'ies'} left out)`,
          err.code,
        );
      throw err;
    }
  } else {
    used = Array.from({ length: n }, (_, i) => i);
  }

  // Combine. Rules without a distance pass discover non-finite updates here and start again without them.
  for (;;) {
    const bad =
      strategy === 'lora-fair'
        ? combineLoraFair(source, config, used, outcome, !needsDistances)
        : combineChunks(source, config, used, ranges, outcome, !needsDistances, kernel);
    if (bad.length === 0) break;
    outcome.nonFinite.push(...bad);
    used = used.filter((i) => !bad.includes(i));
    if (used.length === 0)
      throw new AggregationError(`${strategy}: every update contains NaN or Inf`, 'no_finite_updates');
  }
  outcome.nonFinite.sort((a, b) => a - b);
  outcome.used = used;
  return outcome;
}

function weightsFor(source: UpdateSource, used: readonly number[], rule: string): Float64Array {
  return normaliseWeights(
    used.length,
    source.weights ? used.map((i) => source.weights?.[i] as number) : undefined,
    rule,
  );
}

function addDistances(dist2: Float64Array, rows: readonly Vec[], agg: Float64Array): void {
  for (let i = 0; i < rows.length; i++) {
    const r = rows[i] as Vec;
    let s = 0;
    for (let k = 0; k < agg.length; k++) {
      const t = (r[k] as number) - (agg[k] as number);
      s += t * t;
    }
    dist2[i] = (dist2[i] as number) + s;
  }
}

function finishDistances(outcome: AggregateOutcome, dist2: Float64Array): void {
  outcome.distanceToAggregate = Array.from(dist2, (x) => (Number.isFinite(x) ? x : Infinity));
}

/** One pass over the chunks; returns used updates found non-finite (then nothing is final). */
function combineChunks(
  source: UpdateSource,
  config: StrategyConfig,
  used: readonly number[],
  ranges: readonly [number, number][],
  outcome: AggregateOutcome,
  screen: boolean,
  kernel: Kernel | null,
): number[] {
  const strategy = config.strategy;
  const w =
    strategy === 'fedavg' || strategy === 'multikrum' ? weightsFor(source, used, strategy) : new Float64Array(0);
  // Non-finite updates count against the trim, as against f (see trimmed-mean.ts).
  const trim = Math.max(0, (config.trim ?? config.f) - outcome.nonFinite.length);
  if (strategy === 'trimmed-mean') outcome.trim = trim;
  const dist2 = new Float64Array(source.n);
  const out = outcome.aggregate;
  out.fill(0);
  for (const [s, e] of ranges) {
    const rows = source.read(s, e);
    const o = out.subarray(s, e);
    if (screen && strategy !== 'fedavg') {
      const bad = used.filter((i) => firstNonFinite(rows[i] as Vec) !== -1);
      if (bad.length) return bad;
    }
    switch (strategy) {
      case 'fedavg':
      case 'multikrum':
        weightedMeanInto(o, rows, used, w, kernel);
        if (screen && !allFinite(o)) {
          const bad = used.filter((i) => firstNonFinite(rows[i] as Vec) !== -1);
          if (bad.length) return bad;
        }
        break;
      case 'median':
        medianInto(o, rows, used, kernel);
        break;
      case 'trimmed-mean':
        trimmedMeanInto(o, rows, used, trim, kernel);
        break;
      case 'krum':
        o.set(rows[used[0] as number] as Vec);
        break;
      case 'bulyan':
        bulyanCombineInto(o, rows, used, outcome.beta as number, kernel);
        break;
      case 'lora-fair':
        throw new Error('unreachable');
    }
    addDistances(dist2, rows, o);
  }
  finishDistances(outcome, dist2);
  return [];
}

function combineLoraFair(
  source: UpdateSource,
  config: StrategyConfig,
  used: readonly number[],
  outcome: AggregateOutcome,
  screen: boolean,
): number[] {
  const opts: LoraFairOptions = { ...LORA_FAIR_DEFAULTS, ...config.loraFair };
  const { pairs, others, unpaired } = loraPairs(source.layout);
  const w = weightsFor(source, used, 'lora-fair');
  const dist2 = new Float64Array(source.n);
  const out = outcome.aggregate;
  out.fill(0);
  const layers: LayerReport[] = [];
  const factors = (rows: Vec[], s: number, e: number): Vec[] => {
    const base = source.base?.(s, e);
    if (!base) return used.map((i) => rows[i] as Vec);
    return used.map((i) => {
      const r = rows[i] as Vec;
      const x = new Float64Array(r.length);
      for (let k = 0; k < r.length; k++) x[k] = (base[k] as number) + (r[k] as number);
      return x;
    });
  };
  for (const p of pairs) {
    const rowsA = source.read(p.a.offset, p.a.offset + p.a.size);
    const rowsB = source.read(p.b.offset, p.b.offset + p.b.size);
    if (screen) {
      const bad = used.filter((i) => firstNonFinite(rowsA[i] as Vec) !== -1 || firstNonFinite(rowsB[i] as Vec) !== -1);
      if (bad.length) return bad;
    }
    const res = loraFairLayer(
      factors(rowsA, p.a.offset, p.a.offset + p.a.size),
      factors(rowsB, p.b.offset, p.b.offset + p.b.size),
      w,
      { m: p.m, r: p.r, n: p.n },
      opts,
    );
    const oA = out.subarray(p.a.offset, p.a.offset + p.a.size);
    const oB = out.subarray(p.b.offset, p.b.offset + p.b.size);
    const baseA = source.base?.(p.a.offset, p.a.offset + p.a.size);
    const baseB = source.base?.(p.b.offset, p.b.offset + p.b.size);
    for (let k = 0; k < oA.length; k++) oA[k] = (res.A.data[k] as number) - (baseA ? (baseA[k] as number) : 0);
    for (let k = 0; k < oB.length; k++) oB[k] = (res.B.data[k] as number) - (baseB ? (baseB[k] as number) : 0);
    addDistances(dist2, rowsA, oA);
    addDistances(dist2, rowsB, oB);
    let dbn = 0;
    for (const x of res.dB.data) dbn += x * x;
    layers.push({
      layer: p.layer,
      cos_before: Number.isFinite(res.cosBefore) ? res.cosBefore : null,
      cos_after: Number.isFinite(res.cosAfter) ? res.cosAfter : null,
      delta_b_norm: Math.sqrt(dbn),
      delta_b_bound: Number.isFinite(res.dBBound) ? res.dBBound : null,
    });
  }
  for (const t of others) {
    for (let s = t.offset; s < t.offset + t.size; s += CHUNK_COORDS) {
      const e = Math.min(t.offset + t.size, s + CHUNK_COORDS);
      const rows = source.read(s, e);
      if (screen) {
        const bad = used.filter((i) => firstNonFinite(rows[i] as Vec) !== -1);
        if (bad.length) return bad;
      }
      const o = out.subarray(s, e);
      weightedMeanInto(o, rows, used, w);
      addDistances(dist2, rows, o);
    }
  }
  outcome.layers = layers;
  outcome.unpaired = unpaired;
  finishDistances(outcome, dist2);
  return [];
}
