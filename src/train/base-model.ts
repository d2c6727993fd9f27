import { createHash } from 'node:crypto';
import { canonicalSpec, inputBlocks, inputDim, type BaseSpec, type LayerInit } from './base-spec.js';
import { counterUniform } from './counter-random.js';
import type { Features } from './features.js';
import { toLE } from '../tensor/float-codec.js';

export type HeadName = 'score' | 'route';

/**
 * The frozen base, generated from its specification (`direct.*` is zero in the base, so only
 * the adapters hold it). The encoder layer's columns (one per input
 * feature) are generated on first use, so a process that scores ten candidates touches a few
 * hundred columns, not dim × hidden weights; the array is allocated once and its untouched pages
 * are never committed. Weights are float32 values (as published); arithmetic is float64.
 */
export class BaseModel {
  readonly spec: BaseSpec;
  readonly inDim: number;
  readonly hidden: number;
  readonly bias: Float64Array;
  readonly score: Float64Array;
  readonly route: Float64Array;
  private readonly dense: Float32Array;
  private readonly filled: Uint8Array;
  private readonly structureAt: number;
  private readonly semanticAt: number;

  constructor(spec: BaseSpec) {
    this.spec = spec;
    this.inDim = inputDim(spec);
    const blocks = inputBlocks(spec);
    this.structureAt = blocks.structure;
    this.semanticAt = blocks.semantic;
    this.hidden = spec.hidden;
    this.dense = new Float32Array(this.inDim * this.hidden);
    this.filled = new Uint8Array(this.inDim);
    this.bias = matrix(spec.seed, spec.init.denseBias, this.hidden, 1);
    this.score = matrix(spec.seed, spec.init.score, 1, this.hidden);
    this.route = matrix(spec.seed, spec.init.route, spec.specialists.length, this.hidden);
  }

  /** Generates column j of encoder.dense (hidden values) if it was not yet. */
  private fill(j: number): void {
    const H = this.hidden;
    const { seed, init } = this.spec;
    const { scale, stream } = j >= this.structureAt && j < this.semanticAt ? init.denseStructure : init.dense;
    const w = this.dense;
    for (let h = 0, i = j * H; h < H; h++, i++) w[i] = scale * counterUniform(seed, stream, i);
    this.filled[j] = 1;
  }

  /** Column j of encoder.dense (a view). */
  column(j: number): Float32Array {
    if (this.filled[j] === 0) this.fill(j);
    return this.dense.subarray(j * this.hidden, (j + 1) * this.hidden);
  }

  /** out = W0 x + b0 (the frozen pre-activation, hidden values). */
  project(x: Features, out: Float64Array): void {
    const H = this.hidden;
    const w = this.dense;
    out.set(this.bias);
    const { idx, val } = x;
    // Unrolled by four: the hot loop of scoring (a column is one contiguous run of H weights).
    // Each out[h] still adds its terms in feature order, so results are bit for bit the same.
    const H4 = H - (H % 4);
    for (let k = 0; k < idx.length; k++) {
      const j = idx[k] as number;
      if (this.filled[j] === 0) this.fill(j);
      const v = val[k] as number;
      let i = j * H;
      let h = 0;
      for (; h < H4; h += 4, i += 4) {
        out[h] = (out[h] as number) + v * (w[i] as number);
        out[h + 1] = (out[h + 1] as number) + v * (w[i + 1] as number);
        out[h + 2] = (out[h + 2] as number) + v * (w[i + 2] as number);
        out[h + 3] = (out[h + 3] as number) + v * (w[i + 3] as number);
      }
      for (; h < H; h++, i++) out[h] = (out[h] as number) + v * (w[i] as number);
    }
  }

  /** The frozen output layer of a head, row-major [out][hidden]. */
  head(name: HeadName): Float64Array {
    return name === 'score' ? this.score : this.route;
  }

  headOut(name: HeadName): number {
    return name === 'score' ? 1 : this.spec.specialists.length;
  }

  /**
   * sha256 over the canonical specification and every frozen weight (float32 little-endian, in
   * generator order: encoder.dense, its bias, head.score, head.route). Generates every column.
   */
  computeFingerprint(): string {
    const hash = createHash('sha256');
    hash.update(canonicalSpec(this.spec));
    hash.update('\n');
    for (let j = 0; j < this.inDim; j++) if (this.filled[j] === 0) this.fill(j);
    hash.update(toLE(this.dense));
    for (const t of [this.bias, this.score, this.route]) hash.update(toLE(Float32Array.from(t)));
    return `sha256:${hash.digest('hex')}`;
  }
}

/** A frozen [out][in] matrix, row-major; W[o][i] = scale * U(seed, stream, i * out + o). A bias is [out][1]. */
function matrix(seed: number, init: LayerInit, out: number, inDim: number): Float64Array {
  const w = new Float64Array(out * inDim);
  for (let o = 0; o < out; o++)
    for (let i = 0; i < inDim; i++)
      w[o * inDim + i] = Math.fround(init.scale * counterUniform(seed, init.stream, i * out + o));
  return w;
}
