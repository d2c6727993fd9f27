/**
 * AdamW (decoupled weight decay, as torch.optim.AdamW) with global-norm gradient clipping, over
 * one flat parameter array. Dense: every coordinate's moments decay every step, exactly as the
 * reference optimiser (the benchmark runs the same update in NumPy and compares losses).
 */
export interface AdamWOptions {
  lr: number;
  beta1?: number;
  beta2?: number;
  eps?: number;
  weightDecay: number;
  /** Clip the gradient's global L2 norm to this (0 or Infinity: no clipping). */
  clipNorm: number;
}

export class AdamW {
  private readonly m: Float64Array;
  private readonly v: Float64Array;
  private t = 0;
  private readonly lr: number;
  private readonly b1: number;
  private readonly b2: number;
  private readonly eps: number;
  private readonly wd: number;
  private readonly clip: number;

  constructor(n: number, o: AdamWOptions) {
    this.m = new Float64Array(n);
    this.v = new Float64Array(n);
    this.lr = o.lr;
    this.b1 = o.beta1 ?? 0.9;
    this.b2 = o.beta2 ?? 0.999;
    this.eps = o.eps ?? 1e-8;
    this.wd = o.weightDecay;
    this.clip = o.clipNorm;
  }

  /** One step; returns the gradient norm before clipping. `grad` may be scaled in place. */
  step(theta: Float64Array, grad: Float64Array): number {
    return this.update(theta, grad, 1, false);
  }

  /**
   * One step from a gradient *sum* over a batch: the mean is `scale` × the sum (scale = 1 / batch
   * size, applied exactly as a separate `*= scale` pass would be). Leaves `gradSum` zeroed for the
   * next batch, saving the trainer two passes over every parameter per step.
   */
  stepAndClear(theta: Float64Array, gradSum: Float64Array, scale: number): number {
    return this.update(theta, gradSum, scale, true);
  }

  private update(theta: Float64Array, grad: Float64Array, scale: number, clear: boolean): number {
    let sq = 0;
    for (let i = 0; i < grad.length; i++) {
      const gi = (grad[i] as number) * scale;
      sq += gi * gi;
    }
    const norm = Math.sqrt(sq);
    const k = this.clip > 0 && norm > this.clip ? this.clip / norm : 1;
    this.t++;
    const { m, v, b1, b2, eps, lr } = this;
    const c1 = 1 / (1 - b1 ** this.t);
    const c2 = 1 / (1 - b2 ** this.t);
    const decay = 1 - lr * this.wd;
    for (let i = 0; i < theta.length; i++) {
      const g = (grad[i] as number) * scale * k;
      if (clear) grad[i] = 0;
      // A coordinate whose gradient has always been zero (a hashed feature no example used): the
      // full update reduces exactly to the decay (0 / (√0 + ε) = 0), without the √ and the division.
      // Most LoRA A columns are such coordinates, and they are most of the parameters.
      if (g === 0 && m[i] === 0 && v[i] === 0) {
        theta[i] = (theta[i] as number) * decay;
        continue;
      }
      const mi = b1 * (m[i] as number) + (1 - b1) * g;
      const vi = b2 * (v[i] as number) + (1 - b2) * g * g;
      m[i] = mi;
      v[i] = vi;
      theta[i] = (theta[i] as number) * decay - (lr * (mi * c1)) / (Math.sqrt(vi * c2) + eps);
    }
    return norm;
  }
}
