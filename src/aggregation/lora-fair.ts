import { addScaled, dot, identity, matmul, matrix, solve, transpose, type Matrix } from '../tensor/linalg.js';
import { GramAccumulator } from './pairwise-distances.js';
import { AggregationError, type Vec } from './vec.js';

/**
 * LoRA-FAIR (Bian et al., ICCV 2025), the server-side refinement.
 *
 * Averaging LoRA factors separately is wrong: with forges k holding (Bₖ, Aₖ) and weights pₖ,
 * the update the forges agree on is W = Σ pₖ BₖAₖ, but FedAvg of the factors gives B̄Ā ≠ W whenever
 * the forges differ. LoRA-FAIR keeps Ā = Σ pₖAₖ (so every forge restarts from the same A) and
 * refines B̄ into B̄ + ΔB, minimising
 *
 *     S(ΔB) = 1 − cos(W, (B̄ + ΔB)Ā) + λ‖ΔB‖²          (cos of the flattened matrices)
 *
 * by plain gradient descent from ΔB = 0 (lr, steps), in float64. Also available: the closed-form
 * "ridge" variant argmin ‖W − (B̄ + ΔB)Ā‖² + λ‖ΔB‖² = (WĀᵀ − B̄ĀĀᵀ)(ĀĀᵀ + λI)⁻¹, and, for research
 * on small matrices, the column-wise cosine and the ‖ΔB‖ (not squared) penalty of the reference.
 *
 * Scale: W is m×n (e.g. 4096×4096 per layer) and never needs to exist. Everything the flat-cosine
 * objective touches lives in m×r and r×r: P = WĀᵀ = Σ pₖBₖ(AₖĀᵀ), G = ĀĀᵀ and ‖W‖², the last from
 * the Gram matrices of the stacked A rows and B columns (the same SIMD kernel as Krum). Gradient
 * descent keeps ΔB = B̄V + PU for r×r matrices U, V (true at ΔB = 0, and every gradient step
 * stays in that form), so each step costs O(r³), not O(m·n·r).
 */

export interface LoraFairOptions {
  /** λ of the penalty. */
  lambda: number;
  /** Gradient-descent step size. */
  lr: number;
  steps: number;
  /** 'sq': λ‖ΔB‖²; 'norm': λ‖ΔB‖ (reference research variant). */
  reg: 'sq' | 'norm';
  /** 'flat': cosine of the flattened matrices; 'colwise': mean column cosine (dense only). */
  cosine: 'flat' | 'colwise';
  /** 'gd': the paper's gradient descent; 'ridge': the closed form. */
  solver: 'gd' | 'ridge';
}

export const LORA_FAIR_DEFAULTS: LoraFairOptions = {
  lambda: 0.01,
  lr: 0.01,
  steps: 1000,
  reg: 'sq',
  cosine: 'flat',
  solver: 'gd',
};

/** The flat-cosine problem in m×r / r×r form. */
export interface FlatProblem {
  Bbar: Matrix;
  /** P = W·Āᵀ (m×r). */
  P: Matrix;
  /** G = Ā·Āᵀ (r×r). */
  G: Matrix;
  /** ‖W‖²_F. */
  normW2: number;
}

export function flatProblemFromDense(Abar: Matrix, Bbar: Matrix, W: Matrix): FlatProblem {
  checkShapes(Abar, Bbar);
  if (W.rows !== Bbar.rows || W.cols !== Abar.cols)
    throw new AggregationError(
      `lora-fair: W is ${W.rows}×${W.cols}, expected ${Bbar.rows}×${Abar.cols}`,
      'shape_mismatch',
    );
  return { Bbar, P: matmul(W, Abar, false, true), G: matmul(Abar, Abar, false, true), normW2: dot(W.data, W.data) };
}

function checkShapes(A: Matrix, B: Matrix): void {
  if (B.cols !== A.rows)
    throw new AggregationError(
      `lora-fair: B is ${B.rows}×${B.cols} but A is ${A.rows}×${A.cols} (ranks differ)`,
      'shape_mismatch',
    );
}

/** cos(W, B'Ā) for B' = B̄ + ΔB, from the flat problem. */
export function flatCosine(p: FlatProblem, dB?: Matrix): number {
  const Bp = matrix(p.Bbar.rows, p.Bbar.cols, p.Bbar.data);
  if (dB) addScaled(Bp, dB, 1);
  const ip = dot(p.P.data, Bp.data);
  const nM2 = dot(matmul(Bp, p.G).data, Bp.data);
  return ip / Math.sqrt(p.normW2 * nM2);
}

/**
 * Gradient descent on the flat objective, from ΔB = 0, in the ΔB = B̄V + PU form (O(r³) a step).
 * Returns ΔB (m×r).
 */
export function refineFlat(p: FlatProblem, opts: Pick<LoraFairOptions, 'lambda' | 'lr' | 'steps' | 'reg'>): Matrix {
  const r = p.G.rows;
  const nW = Math.sqrt(p.normW2);
  const Sbb = matmul(p.Bbar, p.Bbar, true, false);
  const Sbp = matmul(p.Bbar, p.P, true, false);
  const Spp = matmul(p.P, p.P, true, false);
  const U = matrix(r, r);
  const V = matrix(r, r);
  const I = identity(r);
  if (!(nW > 0)) return matrix(p.Bbar.rows, r);
  for (let step = 0; step < opts.steps; step++) {
    const Y = matrix(r, r, V.data);
    addScaled(Y, I, 1);
    const YG = matmul(Y, p.G);
    const UG = matmul(U, p.G);
    const SbbY = matmul(Sbb, Y);
    const SbpU = matmul(Sbp, U);
    const SppU = matmul(Spp, U);
    const ip = dot(Sbp.data, Y.data) + dot(Spp.data, U.data);
    const nM2 = dot(SbbY.data, YG.data) + 2 * dot(SbpU.data, YG.data) + dot(SppU.data, UG.data);
    if (!(nM2 > 0)) break;
    const nM = Math.sqrt(nM2);
    const alpha = 1 / (nW * nM);
    const beta = ip / (nW * nM * nM2);
    let reg: number;
    if (opts.reg === 'sq') reg = 2 * opts.lambda;
    else {
      // ‖ΔB‖² = <V, Sbb V> + 2<V, Sbp U> + <U, Spp U>, with Sbb V = Sbb Y − Sbb
      const SbbV = matrix(r, r, SbbY.data);
      addScaled(SbbV, Sbb, -1);
      const n2 = dot(V.data, SbbV.data) + 2 * dot(V.data, SbpU.data) + dot(U.data, SppU.data);
      reg = n2 > 0 ? opts.lambda / Math.sqrt(n2) : 0;
    }
    // gradient = B̄ [β Y G + reg V] + P [−α I + β U G + reg U]
    const gV = matrix(r, r);
    addScaled(gV, YG, beta);
    addScaled(gV, V, reg);
    const gU = matrix(r, r);
    addScaled(gU, I, -alpha);
    addScaled(gU, UG, beta);
    addScaled(gU, U, reg);
    addScaled(V, gV, -opts.lr);
    addScaled(U, gU, -opts.lr);
  }
  const dB = matmul(p.Bbar, V);
  addScaled(dB, matmul(p.P, U), 1);
  for (const x of dB.data)
    if (!Number.isFinite(x))
      throw new AggregationError(
        'lora-fair: the refinement diverged (non-finite ΔB); lower the learning rate',
        'diverged',
      );
  return dB;
}

/** Closed form of argmin ‖W − (B̄+ΔB)Ā‖² + λ‖ΔB‖²: ΔB = (P − B̄G)(G + λI)⁻¹. */
export function refineRidge(p: FlatProblem, lambda: number): Matrix {
  const r = p.G.rows;
  const rhs = matrix(p.P.rows, r, p.P.data);
  addScaled(rhs, matmul(p.Bbar, p.G), -1);
  const M = matrix(r, r, p.G.data);
  for (let i = 0; i < r; i++) M.data[i * r + i] = (M.data[i * r + i] as number) + lambda;
  // ΔB (G+λI) = rhs  ⇔  (G+λI) ΔBᵀ = rhsᵀ (G symmetric)
  const X = solve(M, transpose(rhs));
  if (!X) throw new AggregationError('lora-fair: ĀĀᵀ + λI is singular (λ = 0 and Ā is rank-deficient)', 'singular');
  return transpose(X);
}

/**
 * The reference form on explicit matrices (any objective variant): gradient descent on
 * S(ΔB) with M = (B̄+ΔB)Ā formed every step. O(steps·m·n·r): for fixtures and research.
 */
export function refineDense(Abar: Matrix, Bbar: Matrix, W: Matrix, opts: LoraFairOptions): Matrix {
  checkShapes(Abar, Bbar);
  if (opts.solver === 'ridge') return refineRidge(flatProblemFromDense(Abar, Bbar, W), opts.lambda);
  const m = W.rows;
  const n = W.cols;
  const dB = matrix(Bbar.rows, Bbar.cols);
  const Bp = matrix(Bbar.rows, Bbar.cols);
  const nW = Math.sqrt(dot(W.data, W.data));
  const colW = new Float64Array(n);
  for (let j = 0; j < n; j++) {
    let s = 0;
    for (let i = 0; i < m; i++) s += (W.data[i * n + j] as number) ** 2;
    colW[j] = Math.sqrt(s);
  }
  for (let step = 0; step < opts.steps; step++) {
    for (let i = 0; i < Bp.data.length; i++) Bp.data[i] = (Bbar.data[i] as number) + (dB.data[i] as number);
    const M = matmul(Bp, Abar);
    const gM = matrix(m, n);
    if (opts.cosine === 'flat') {
      const nM = Math.sqrt(dot(M.data, M.data));
      const ip = dot(W.data, M.data);
      for (let i = 0; i < gM.data.length; i++)
        gM.data[i] = -((W.data[i] as number) / (nW * nM) - (ip * (M.data[i] as number)) / (nW * nM ** 3));
    } else {
      for (let j = 0; j < n; j++) {
        let nm = 0;
        let ip = 0;
        for (let i = 0; i < m; i++) {
          nm += (M.data[i * n + j] as number) ** 2;
          ip += (W.data[i * n + j] as number) * (M.data[i * n + j] as number);
        }
        nm = Math.sqrt(nm);
        const nw = colW[j] as number;
        for (let i = 0; i < m; i++) {
          gM.data[i * n + j] =
            -((W.data[i * n + j] as number) / (nw * nm) - (ip * (M.data[i * n + j] as number)) / (nw * nm ** 3)) / n;
        }
      }
    }
    const g = matmul(gM, Abar, false, true);
    if (opts.reg === 'sq') addScaled(g, dB, 2 * opts.lambda);
    else {
      const nd = Math.sqrt(dot(dB.data, dB.data));
      if (nd > 0) addScaled(g, dB, opts.lambda / nd);
    }
    addScaled(dB, g, -opts.lr);
  }
  return dB;
}

/**
 * Builds the flat problem from the forges' factors: Aₖ (r×n, row-major) and Bₖ (m×r, row-major),
 * normalised weights pₖ. Returns Ā and B̄ too.
 */
export function flatProblemFromFactors(
  As: readonly Vec[],
  Bs: readonly Vec[],
  weights: Float64Array,
  dims: { m: number; r: number; n: number },
): { problem: FlatProblem; Abar: Matrix } {
  const { m, r, n } = dims;
  const K = As.length;
  if (Bs.length !== K || weights.length !== K)
    throw new RangeError('lora-fair: need one A, one B and one weight per forge');
  const Abar = matrix(r, n);
  const Bbar = matrix(m, r);
  for (let k = 0; k < K; k++) {
    const p = weights[k] as number;
    const a = As[k] as Vec;
    const b = Bs[k] as Vec;
    for (let i = 0; i < r * n; i++) Abar.data[i] = (Abar.data[i] as number) + p * (a[i] as number);
    for (let i = 0; i < m * r; i++) Bbar.data[i] = (Bbar.data[i] as number) + p * (b[i] as number);
  }
  // Gram of every forge's A rows, and of every forge's B columns (B transposed to rows).
  const aRows: Vec[] = [];
  const bRows: Vec[] = [];
  for (let k = 0; k < K; k++) {
    const a = As[k] as Vec;
    const b = Bs[k] as Vec;
    for (let c = 0; c < r; c++) {
      aRows.push(a.subarray(c * n, (c + 1) * n));
      const col = new Float64Array(m);
      for (let i = 0; i < m; i++) col[i] = b[i * r + c] as number;
      bRows.push(col);
    }
  }
  const ga = gram(aRows);
  const gb = gram(bRows);
  const KR = K * r;
  // ‖W‖² = Σ_ab q_a q_b GB[a,b] GA[a,b], q_(k,c) = p_k
  let normW2 = 0;
  for (let a = 0; a < KR; a++) {
    const qa = weights[Math.floor(a / r)] as number;
    for (let b = 0; b < KR; b++)
      normW2 += qa * (weights[Math.floor(b / r)] as number) * (gb[a * KR + b] as number) * (ga[a * KR + b] as number);
  }
  // G = Σ_kl p_k p_l A_k A_lᵀ;  C_k = A_k Āᵀ = Σ_l p_l A_k A_lᵀ;  P = Σ_k p_k B_k C_k
  const G = matrix(r, r);
  const P = matrix(m, r);
  for (let k = 0; k < K; k++) {
    const C = matrix(r, r);
    for (let l = 0; l < K; l++) {
      const pl = weights[l] as number;
      for (let c = 0; c < r; c++)
        for (let c2 = 0; c2 < r; c2++)
          C.data[c * r + c2] = (C.data[c * r + c2] as number) + pl * (ga[(k * r + c) * KR + l * r + c2] as number);
    }
    addScaled(G, C, weights[k] as number);
    const Bk = matrix(m, r, Bs[k] as Vec);
    addScaled(P, matmul(Bk, C), weights[k] as number);
  }
  return { problem: { Bbar, P, G, normW2 }, Abar };
}

function gram(rows: Vec[]): Float64Array {
  const acc = new GramAccumulator(rows.length);
  acc.add(rows);
  return acc.gram();
}

export interface LayerResult {
  A: Matrix;
  B: Matrix;
  dB: Matrix;
  /** cos(W, B̄Ā) before and cos(W, (B̄+ΔB)Ā) after the refinement (NaN when W = 0). */
  cosBefore: number;
  cosAfter: number;
  /**
   * What ‖ΔB‖ can be at most, from the objective alone (Infinity when λ = 0): gradient descent is
   * kept only if it lowered S, so λ‖ΔB‖² ≤ S(ΔB) ≤ S(0) = 1 − cos before (λ‖ΔB‖ for the norm
   * penalty); the ridge solution minimises ‖W − (B̄+ΔB)Ā‖² + λ‖ΔB‖², so λ‖ΔB‖² ≤ ‖W − B̄Ā‖². The
   * council refuses an aggregate beyond what its inputs and these bounds allow.
   */
  dBBound: number;
}

function frobenius(m: Matrix): number {
  return Math.sqrt(dot(m.data, m.data));
}

/** One LoRA layer: Ā, B̄ + ΔB from the forges' factors. */
export function loraFairLayer(
  As: readonly Vec[],
  Bs: readonly Vec[],
  weights: Float64Array,
  dims: { m: number; r: number; n: number },
  opts: LoraFairOptions = LORA_FAIR_DEFAULTS,
): LayerResult {
  if (opts.cosine !== 'flat')
    throw new AggregationError(
      'lora-fair: the council refines with the flat cosine; the column-wise variant is for research on explicit matrices',
      'bad_parameter',
    );
  const { problem, Abar } = flatProblemFromFactors(As, Bs, weights, dims);
  const cosBefore = flatCosine(problem);
  const degenerate = !(problem.normW2 > 0) || !Number.isFinite(cosBefore);
  let dB = matrix(dims.m, dims.r);
  let dBBound = 0;
  if (!degenerate && opts.solver === 'ridge') {
    dB = refineRidge(problem, opts.lambda);
    // ‖W − B̄Ā‖² = ‖W‖² − 2⟨P, B̄⟩ + ⟨B̄G, B̄⟩
    const e0 = Math.max(
      0,
      problem.normW2 -
        2 * dot(problem.P.data, problem.Bbar.data) +
        dot(matmul(problem.Bbar, problem.G).data, problem.Bbar.data),
    );
    dBBound = opts.lambda > 0 ? Math.sqrt(e0 / opts.lambda) : Infinity;
  } else if (!degenerate) {
    const refined = refineFlat(problem, opts);
    const s0 = 1 - cosBefore;
    const penalty =
      opts.reg === 'sq' ? opts.lambda * dot(refined.data, refined.data) : opts.lambda * frobenius(refined);
    // A refinement that does not lower the objective is no refinement (a too-large step size).
    if (1 - flatCosine(problem, refined) + penalty <= s0) dB = refined;
    dBBound = opts.lambda > 0 ? (opts.reg === 'sq' ? Math.sqrt(s0 / opts.lambda) : s0 / opts.lambda) : Infinity;
  }
  const B = matrix(dims.m, dims.r, problem.Bbar.data);
  addScaled(B, dB, 1);
  return {
    A: Abar,
    B,
    dB,
    cosBefore: degenerate ? NaN : cosBefore,
    cosAfter: degenerate ? NaN : flatCosine(problem, dB),
    dBBound,
  };
}
