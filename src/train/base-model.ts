import { createHash } from 'node:crypto';
import { canonicalSpec, inputBlocks, inputDim, type BaseSpec, type LayerInit } from './base-spec.js';
import { counterUniform, counterUniforms } from './counter-random.js';
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
  /** The word block's first column: the frozen projection reads nothing from there on. */
  private readonly wordsAt: number;

  constructor(spec: BaseSpec) {
    this.spec = spec;
    this.inDim = inputDim(spec);
    const blocks = inputBlocks(spec);
    this.structureAt = blocks.structure;
    this.semanticAt = blocks.semantic;
    this.wordsAt = blocks.words;
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
    this.filled[j] = 1;
    // The word block's columns are zero (the array's initial value).
    if (j >= this.wordsAt) return;
    const { seed, init } = this.spec;
    const { scale, stream } = j >= this.structureAt && j < this.semanticAt ? init.denseStructure : init.dense;
    counterUniforms(seed, stream, j * H, scale, this.dense, j * H, H);
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
    const b = this.bias;
    const { idx, val } = x;
    // Indices ascend, so the word block (zero columns) is a tail the loops can stop before.
    let n = idx.length;
    while (n > 0 && (idx[n - 1] as number) >= this.wordsAt) n--;
    for (let k = 0; k < n; k++) if (this.filled[idx[k] as number] === 0) this.fill(idx[k] as number);
    // The hot loop of scoring. Eight hidden units at a time are summed in locals over every feature
    // (out is read and written once per unit, not once per feature); each unit still adds its
    // terms in feature order after its bias, so results are bit for bit those of the plain loop.
    const H8 = H - (H % 8);
    let h = 0;
    for (; h < H8; h += 8) {
      let a0 = b[h] as number;
      let a1 = b[h + 1] as number;
      let a2 = b[h + 2] as number;
      let a3 = b[h + 3] as number;
      let a4 = b[h + 4] as number;
      let a5 = b[h + 5] as number;
      let a6 = b[h + 6] as number;
      let a7 = b[h + 7] as number;
      for (let k = 0; k < n; k++) {
        const v = val[k] as number;
        const i = (idx[k] as number) * H + h;
        a0 += v * (w[i] as number);
        a1 += v * (w[i + 1] as number);
        a2 += v * (w[i + 2] as number);
        a3 += v * (w[i + 3] as number);
        a4 += v * (w[i + 4] as number);
        a5 += v * (w[i + 5] as number);
        a6 += v * (w[i + 6] as number);
        a7 += v * (w[i + 7] as number);
      }
      out[h] = a0;
      out[h + 1] = a1;
      out[h + 2] = a2;
      out[h + 3] = a3;
      out[h + 4] = a4;
      out[h + 5] = a5;
      out[h + 6] = a6;
      out[h + 7] = a7;
    }
    for (; h < H; h++) {
      let a = b[h] as number;
      for (let k = 0; k < n; k++) a += (val[k] as number) * (w[(idx[k] as number) * H + h] as number);
      out[h] = a;
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
