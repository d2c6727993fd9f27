import type { BaseModel, HeadName } from './base-model.js';
import type { Features } from './features.js';
import type { LoraWeights } from './lora.js';

/** An adapter applied at inference or held frozen while another trains. */
export interface Applied {
  lora: LoraWeights;
  /** Its LoRA scaling α/r (adapters of one agent may have different ranks). */
  scale: number;
  /** λ: 1 applies the adapter as trained; the per-task-type lean scales council and bond. */
  weight: number;
}

export function applied(lora: LoraWeights, alpha: number, weight = 1): Applied {
  return { lora, scale: alpha / lora.rank, weight };
}

/** Per-example scratch and cache for the backward pass (one per text in flight). */
export interface Workspace {
  z: Float64Array;
  h: Float64Array;
  y: Float64Array;
  /** u_a = A_a x (dense LoRA), per applied adapter. */
  u: Float64Array[];
  /** v_a = A'_a h (head LoRA), per applied adapter. */
  v: Float64Array[];
  /** d_a = A''_a x (direct-path LoRA), per applied adapter. */
  d: Float64Array[];
  dh: Float64Array;
  gv: Float64Array;
  gu: Float64Array;
}

/**
 * The network of one agent: base + Σ_a λ_a (α_a/r_a) B_a A_a on encoder.dense, on the agent's
 * head and on its direct path (zero in the base), tanh between dense and head (s_a = α_a/r_a):
 *   z = W0 x + b0 + Σ λ_a s_a B_a (A_a x);  h = tanh(z);
 *   y = Wh0 h + Σ λ_a s_a B'_a (A'_a h) + Σ λ_a s_a B''_a (A''_a x)
 * The trainer fits the direct path as a convex problem (linear-fit.ts) and descends only the
 * nonlinear factors; backward() still gives every factor's gradient (sparse where x is).
 * The frozen part W0 x + b0 (`z0`) depends on the text only, so callers compute it once per text
 * (BaseModel.project) and reuse it every epoch.
 */
export class Network {
  readonly base: BaseModel;
  readonly head: HeadName;
  readonly hidden: number;
  readonly out: number;
  private readonly headW: Float64Array;

  constructor(base: BaseModel, head: HeadName) {
    this.base = base;
    this.head = head;
    this.hidden = base.hidden;
    this.out = base.headOut(head);
    // The routing head starts from the written-role prior (route-prior/), added to its outputs;
    // the base's random routing matrix would only add noise to it on every text.
    this.headW = head === 'route' ? new Float64Array(base.head(head).length) : base.head(head);
  }

  workspace(adapters: readonly Applied[]): Workspace {
    const H = this.hidden;
    const r = Math.max(1, ...adapters.map((a) => a.lora.rank));
    return {
      z: new Float64Array(H),
      h: new Float64Array(H),
      y: new Float64Array(this.out),
      u: adapters.map((a) => new Float64Array(a.lora.rank)),
      v: adapters.map((a) => new Float64Array(a.lora.rank)),
      d: adapters.map((a) => new Float64Array(a.lora.rank)),
      dh: new Float64Array(H),
      gv: new Float64Array(r),
      gu: new Float64Array(r),
    };
  }

  /** Fills ws.y (and the caches) for input x whose frozen pre-activation is z0. */
  forward(x: Features, z0: Float64Array, adapters: readonly Applied[], ws: Workspace): Float64Array {
    const H = this.hidden;
    const O = this.out;
    const { z, h, y } = ws;
    z.set(z0);
    const { idx, val } = x;
    for (let a = 0; a < adapters.length; a++) {
      const { lora, weight, scale } = adapters[a] as Applied;
      const r = lora.rank;
      const u = ws.u[a] as Float64Array;
      u.fill(0);
      const At = lora.denseAt;
      for (let k = 0; k < idx.length; k++) {
        const base = (idx[k] as number) * r;
        const xv = val[k] as number;
        for (let i = 0; i < r; i++) u[i] = (u[i] as number) + xv * (At[base + i] as number);
      }
      if (weight === 0) continue;
      const c = weight * scale;
      const B = lora.denseB;
      for (let j = 0; j < H; j++) {
        let s = 0;
        const row = j * r;
        for (let i = 0; i < r; i++) s += (B[row + i] as number) * (u[i] as number);
        z[j] = (z[j] as number) + c * s;
      }
    }
    for (let j = 0; j < H; j++) h[j] = Math.tanh(z[j] as number);
    const W = this.headW;
    for (let o = 0; o < O; o++) {
      let s = 0;
      const row = o * H;
      for (let j = 0; j < H; j++) s += (W[row + j] as number) * (h[j] as number);
      y[o] = s;
    }
    for (let a = 0; a < adapters.length; a++) {
      const { lora, weight, scale } = adapters[a] as Applied;
      const r = lora.rank;
      const v = ws.v[a] as Float64Array;
      const A = lora.headA;
      for (let i = 0; i < r; i++) {
        let s = 0;
        const row = i * H;
        for (let j = 0; j < H; j++) s += (A[row + j] as number) * (h[j] as number);
        v[i] = s;
      }
      if (weight === 0) continue;
      const c = weight * scale;
      const B = lora.headB;
      for (let o = 0; o < O; o++) {
        let s = 0;
        for (let i = 0; i < r; i++) s += (B[o * r + i] as number) * (v[i] as number);
        y[o] = (y[o] as number) + c * s;
      }
      const d = ws.d[a] as Float64Array;
      d.fill(0);
      const Dt = lora.directAt;
      for (let k = 0; k < idx.length; k++) {
        const base = (idx[k] as number) * r;
        const xv = val[k] as number;
        for (let i = 0; i < r; i++) d[i] = (d[i] as number) + xv * (Dt[base + i] as number);
      }
      const DB = lora.directB;
      for (let o = 0; o < O; o++) {
        let s = 0;
        for (let i = 0; i < r; i++) s += (DB[o * r + i] as number) * (d[i] as number);
        y[o] = (y[o] as number) + c * s;
      }
    }
    return y;
  }

  /**
   * Accumulates into `grad` the gradient, with respect to adapter `t`'s factors, of a loss whose
   * gradient with respect to y is `gy` (after forward() on the same ws).
   */
  backward(
    x: Features,
    adapters: readonly Applied[],
    t: number,
    ws: Workspace,
    gy: Float64Array,
    grad: LoraWeights,
  ): void {
    const H = this.hidden;
    const O = this.out;
    const { h, dh, gv, gu } = ws;
    const W = this.headW;
    // dL/dh through the frozen head and every applied head adapter.
    for (let j = 0; j < H; j++) {
      let acc = 0;
      for (let o = 0; o < O; o++) acc += (W[o * H + j] as number) * (gy[o] as number);
      dh[j] = acc;
    }
    for (let a = 0; a < adapters.length; a++) {
      const { lora, weight, scale } = adapters[a] as Applied;
      if (weight === 0) continue;
      const r = lora.rank;
      const c = weight * scale;
      const B = lora.headB;
      for (let i = 0; i < r; i++) {
        let acc = 0;
        for (let o = 0; o < O; o++) acc += (B[o * r + i] as number) * (gy[o] as number);
        gv[i] = c * acc;
      }
      if (a === t) {
        const v = ws.v[a] as Float64Array;
        for (let o = 0; o < O; o++) {
          const g = c * (gy[o] as number);
          for (let i = 0; i < r; i++) grad.headB[o * r + i] = (grad.headB[o * r + i] as number) + g * (v[i] as number);
        }
        for (let i = 0; i < r; i++) {
          const g = gv[i] as number;
          if (g === 0) continue;
          const row = i * H;
          for (let j = 0; j < H; j++) grad.headA[row + j] = (grad.headA[row + j] as number) + g * (h[j] as number);
        }
      }
      const A = lora.headA;
      for (let i = 0; i < r; i++) {
        const g = gv[i] as number;
        if (g === 0) continue;
        const row = i * H;
        for (let j = 0; j < H; j++) dh[j] = (dh[j] as number) + g * (A[row + j] as number);
      }
    }
    // Through tanh: dz = dh (1 - h²), kept in dh.
    for (let j = 0; j < H; j++) {
      const hj = h[j] as number;
      dh[j] = (dh[j] as number) * (1 - hj * hj);
    }
    const { lora, weight, scale } = adapters[t] as Applied;
    if (weight === 0) return;
    const r = lora.rank;
    const c = weight * scale;
    const { idx, val } = x;
    // The direct path: y += c · B'' (A'' x); gradients touch only the rows of A'' where x ≠ 0.
    {
      const d = ws.d[t] as Float64Array;
      const DB = lora.directB;
      gu.fill(0, 0, r);
      for (let o = 0; o < O; o++) {
        const g = c * (gy[o] as number);
        if (g === 0) continue;
        for (let i = 0; i < r; i++) {
          grad.directB[o * r + i] = (grad.directB[o * r + i] as number) + g * (d[i] as number);
          gu[i] = (gu[i] as number) + g * (DB[o * r + i] as number);
        }
      }
      const gDt = grad.directAt;
      for (let k = 0; k < idx.length; k++) {
        const base = (idx[k] as number) * r;
        const xv = val[k] as number;
        for (let i = 0; i < r; i++) gDt[base + i] = (gDt[base + i] as number) + xv * (gu[i] as number);
      }
    }
    const u = ws.u[t] as Float64Array;
    const B = lora.denseB;
    gu.fill(0, 0, r);
    for (let j = 0; j < H; j++) {
      const g = c * (dh[j] as number);
      if (g === 0) continue;
      const row = j * r;
      for (let i = 0; i < r; i++) {
        grad.denseB[row + i] = (grad.denseB[row + i] as number) + g * (u[i] as number);
        gu[i] = (gu[i] as number) + g * (B[row + i] as number);
      }
    }
    const gAt = grad.denseAt;
    for (let k = 0; k < idx.length; k++) {
      const base = (idx[k] as number) * r;
      const xv = val[k] as number;
      for (let i = 0; i < r; i++) gAt[base + i] = (gAt[base + i] as number) + xv * (gu[i] as number);
    }
  }
}
