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
    for (let a = 0; a < adapters.length; a++) {
      const { lora, weight, scale } = adapters[a] as Applied;
      const u = ws.u[a] as Float64Array;
      if (weight === 0) {
        sparseProduct(lora.denseAt, lora.rank, x, u);
        continue;
      }
      // The direct path reads the same rows of x: both products in one pass.
      sparseProducts(lora.denseAt, lora.directAt, lora.rank, x, u, ws.d[a] as Float64Array);
      addProduct(lora.denseB, lora.rank, H, u, weight * scale, z);
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
      rowsTimes(lora.headA, r, H, h, v);
      if (weight === 0) continue;
      const c = weight * scale;
      addProduct(lora.headB, r, O, v, c, y);
      addProduct(lora.directB, r, O, ws.d[a] as Float64Array, c, y);
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
    if (r === 8) {
      denseGradient8(lora.denseB, grad, u, dh, c, H, x);
      return;
    }
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

/*
 * The products of the forward pass. Each sum adds its terms in the same order as the plain loop
 * (so results are bit for bit the same); at rank 8 (the default) the eight sums live in locals,
 * which halves the time of scoring a candidate.
 */

/** u[i] = Σ_k x_k · At[idx_k · r + i] (At holds Aᵀ, [in][r]): only the rows x touches. */
function sparseProduct(At: Float64Array, r: number, x: Features, u: Float64Array): void {
  const { idx, val } = x;
  const n = idx.length;
  if (r === 8) {
    let u0 = 0;
    let u1 = 0;
    let u2 = 0;
    let u3 = 0;
    let u4 = 0;
    let u5 = 0;
    let u6 = 0;
    let u7 = 0;
    for (let k = 0; k < n; k++) {
      const b = (idx[k] as number) * 8;
      const xv = val[k] as number;
      u0 += xv * (At[b] as number);
      u1 += xv * (At[b + 1] as number);
      u2 += xv * (At[b + 2] as number);
      u3 += xv * (At[b + 3] as number);
      u4 += xv * (At[b + 4] as number);
      u5 += xv * (At[b + 5] as number);
      u6 += xv * (At[b + 6] as number);
      u7 += xv * (At[b + 7] as number);
    }
    u[0] = u0;
    u[1] = u1;
    u[2] = u2;
    u[3] = u3;
    u[4] = u4;
    u[5] = u5;
    u[6] = u6;
    u[7] = u7;
    return;
  }
  u.fill(0, 0, r);
  for (let k = 0; k < n; k++) {
    const b = (idx[k] as number) * r;
    const xv = val[k] as number;
    for (let i = 0; i < r; i++) u[i] = (u[i] as number) + xv * (At[b + i] as number);
  }
}

/**
 * The encoder.dense factors' gradients at rank 8 (backward's general loop, the rank-8 sums in
 * locals): B gets c·dz uᵀ, and the rows of Aᵀ that x touches get x · (c·Bᵀdz).
 */
function denseGradient8(
  B: Float64Array,
  grad: LoraWeights,
  u: Float64Array,
  dz: Float64Array,
  c: number,
  H: number,
  x: Features,
): void {
  const u0 = u[0] as number;
  const u1 = u[1] as number;
  const u2 = u[2] as number;
  const u3 = u[3] as number;
  const u4 = u[4] as number;
  const u5 = u[5] as number;
  const u6 = u[6] as number;
  const u7 = u[7] as number;
  let g0 = 0;
  let g1 = 0;
  let g2 = 0;
  let g3 = 0;
  let g4 = 0;
  let g5 = 0;
  let g6 = 0;
  let g7 = 0;
  const gB = grad.denseB;
  for (let j = 0, row = 0; j < H; j++, row += 8) {
    const g = c * (dz[j] as number);
    if (g === 0) continue;
    gB[row] = (gB[row] as number) + g * u0;
    gB[row + 1] = (gB[row + 1] as number) + g * u1;
    gB[row + 2] = (gB[row + 2] as number) + g * u2;
    gB[row + 3] = (gB[row + 3] as number) + g * u3;
    gB[row + 4] = (gB[row + 4] as number) + g * u4;
    gB[row + 5] = (gB[row + 5] as number) + g * u5;
    gB[row + 6] = (gB[row + 6] as number) + g * u6;
    gB[row + 7] = (gB[row + 7] as number) + g * u7;
    g0 += g * (B[row] as number);
    g1 += g * (B[row + 1] as number);
    g2 += g * (B[row + 2] as number);
    g3 += g * (B[row + 3] as number);
    g4 += g * (B[row + 4] as number);
    g5 += g * (B[row + 5] as number);
    g6 += g * (B[row + 6] as number);
    g7 += g * (B[row + 7] as number);
  }
  const gAt = grad.denseAt;
  const { idx, val } = x;
  for (let k = 0; k < idx.length; k++) {
    const b = (idx[k] as number) * 8;
    const xv = val[k] as number;
    gAt[b] = (gAt[b] as number) + xv * g0;
    gAt[b + 1] = (gAt[b + 1] as number) + xv * g1;
    gAt[b + 2] = (gAt[b + 2] as number) + xv * g2;
    gAt[b + 3] = (gAt[b + 3] as number) + xv * g3;
    gAt[b + 4] = (gAt[b + 4] as number) + xv * g4;
    gAt[b + 5] = (gAt[b + 5] as number) + xv * g5;
    gAt[b + 6] = (gAt[b + 6] as number) + xv * g6;
    gAt[b + 7] = (gAt[b + 7] as number) + xv * g7;
  }
}

/** u = At·x and d = Dt·x (both [in][r]) in one pass over x. */
function sparseProducts(
  At: Float64Array,
  Dt: Float64Array,
  r: number,
  x: Features,
  u: Float64Array,
  d: Float64Array,
): void {
  if (r !== 8) {
    sparseProduct(At, r, x, u);
    sparseProduct(Dt, r, x, d);
    return;
  }
  const { idx, val } = x;
  const n = idx.length;
  let u0 = 0;
  let u1 = 0;
  let u2 = 0;
  let u3 = 0;
  let u4 = 0;
  let u5 = 0;
  let u6 = 0;
  let u7 = 0;
  let d0 = 0;
  let d1 = 0;
  let d2 = 0;
  let d3 = 0;
  let d4 = 0;
  let d5 = 0;
  let d6 = 0;
  let d7 = 0;
  for (let k = 0; k < n; k++) {
    const b = (idx[k] as number) * 8;
    const xv = val[k] as number;
    u0 += xv * (At[b] as number);
    u1 += xv * (At[b + 1] as number);
    u2 += xv * (At[b + 2] as number);
    u3 += xv * (At[b + 3] as number);
    u4 += xv * (At[b + 4] as number);
    u5 += xv * (At[b + 5] as number);
    u6 += xv * (At[b + 6] as number);
    u7 += xv * (At[b + 7] as number);
    d0 += xv * (Dt[b] as number);
    d1 += xv * (Dt[b + 1] as number);
    d2 += xv * (Dt[b + 2] as number);
    d3 += xv * (Dt[b + 3] as number);
    d4 += xv * (Dt[b + 4] as number);
    d5 += xv * (Dt[b + 5] as number);
    d6 += xv * (Dt[b + 6] as number);
    d7 += xv * (Dt[b + 7] as number);
  }
  u[0] = u0;
  u[1] = u1;
  u[2] = u2;
  u[3] = u3;
  u[4] = u4;
  u[5] = u5;
  u[6] = u6;
  u[7] = u7;
  d[0] = d0;
  d[1] = d1;
  d[2] = d2;
  d[3] = d3;
  d[4] = d4;
  d[5] = d5;
  d[6] = d6;
  d[7] = d7;
}

/** out[j] += c · Σ_i B[j · r + i] · u[i] for j < rows (B is [rows][r]). */
function addProduct(B: Float64Array, r: number, rows: number, u: Float64Array, c: number, out: Float64Array): void {
  if (r === 8) {
    const u0 = u[0] as number;
    const u1 = u[1] as number;
    const u2 = u[2] as number;
    const u3 = u[3] as number;
    const u4 = u[4] as number;
    const u5 = u[5] as number;
    const u6 = u[6] as number;
    const u7 = u[7] as number;
    for (let j = 0, b = 0; j < rows; j++, b += 8) {
      // `0 +` first, as the plain loop starts its sum at 0 (a sum of −0 products is +0 there too).
      const s =
        0 +
        (B[b] as number) * u0 +
        (B[b + 1] as number) * u1 +
        (B[b + 2] as number) * u2 +
        (B[b + 3] as number) * u3 +
        (B[b + 4] as number) * u4 +
        (B[b + 5] as number) * u5 +
        (B[b + 6] as number) * u6 +
        (B[b + 7] as number) * u7;
      out[j] = (out[j] as number) + c * s;
    }
    return;
  }
  for (let j = 0; j < rows; j++) {
    let s = 0;
    const row = j * r;
    for (let i = 0; i < r; i++) s += (B[row + i] as number) * (u[i] as number);
    out[j] = (out[j] as number) + c * s;
  }
}

/** v[i] = Σ_j A[i · n + j] · h[j] for i < r (A is [r][n]). */
function rowsTimes(A: Float64Array, r: number, n: number, h: Float64Array, v: Float64Array): void {
  for (let i = 0; i < r; i++) {
    let s = 0;
    const row = i * n;
    for (let j = 0; j < n; j++) s += (A[row + j] as number) * (h[j] as number);
    v[i] = s;
  }
}
