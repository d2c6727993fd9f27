import type { LoraWeights } from './lora.js';

/**
 * The direct path of an adapter as one matrix, and back. The fitted linear model W [out][in]
 * (linear-fit.ts) is stored as LoRA factors with ΔW = s · B A (s = α/r): with r ≥ out the
 * factorisation is exact and canonical (B = the identity on the first `out` columns, A = W / s),
 * so averaging the factors of several forges averages their linear models exactly. With r < out
 * (a routing head at a small rank) it is the best rank-r approximation: B = the top r
 * eigenvectors of W Wᵀ, A = Bᵀ W / s.
 */

/** s · B A as a dense [out][in] matrix. */
export function directMatrix(l: LoraWeights, scale: number): Float64Array {
  const { out, inDim, rank: r } = l;
  const W = new Float64Array(out * inDim);
  for (let j = 0; j < inDim; j++) {
    const a = j * r;
    for (let o = 0; o < out; o++) {
      let s = 0;
      for (let i = 0; i < r; i++) s += (l.directB[o * r + i] as number) * (l.directAt[a + i] as number);
      if (s !== 0) W[o * inDim + j] = scale * s;
    }
  }
  return W;
}

/** Sets l's direct factors so that s · B A = W (or its best rank-r approximation). */
export function setDirectMatrix(l: LoraWeights, W: Float64Array, scale: number): void {
  const { out, inDim, rank: r } = l;
  l.directAt.fill(0);
  l.directB.fill(0);
  const U = r >= out ? identityColumns(out, r) : topEigenvectors(gram(W, out, inDim), out, r);
  for (let i = 0; i < r; i++) {
    for (let j = 0; j < inDim; j++) {
      let s = 0;
      for (let o = 0; o < out; o++) s += (U[o * r + i] as number) * (W[o * inDim + j] as number);
      l.directAt[j * r + i] = s / scale;
    }
  }
  l.directB.set(U);
}

function identityColumns(out: number, r: number): Float64Array {
  const U = new Float64Array(out * r);
  for (let o = 0; o < out; o++) U[o * r + o] = 1;
  return U;
}

function gram(W: Float64Array, out: number, inDim: number): Float64Array {
  const G = new Float64Array(out * out);
  for (let a = 0; a < out; a++) {
    for (let b = a; b < out; b++) {
      let s = 0;
      for (let j = 0; j < inDim; j++) s += (W[a * inDim + j] as number) * (W[b * inDim + j] as number);
      G[a * out + b] = s;
      G[b * out + a] = s;
    }
  }
  return G;
}

/** The r eigenvectors of symmetric G [n][n] with the largest eigenvalues, as columns of U [n][r] (cyclic Jacobi). */
function topEigenvectors(G: Float64Array, n: number, r: number): Float64Array {
  const A = Float64Array.from(G);
  const V = identityColumns(n, n);
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += (A[p * n + q] as number) ** 2;
    if (off < 1e-24) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = A[p * n + q] as number;
        if (Math.abs(apq) < 1e-300) continue;
        const theta = ((A[q * n + q] as number) - (A[p * n + p] as number)) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = A[k * n + p] as number;
          const akq = A[k * n + q] as number;
          A[k * n + p] = c * akp - s * akq;
          A[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = A[p * n + k] as number;
          const aqk = A[q * n + k] as number;
          A[p * n + k] = c * apk - s * aqk;
          A[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = V[k * n + p] as number;
          const vkq = V[k * n + q] as number;
          V[k * n + p] = c * vkp - s * vkq;
          V[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = Array.from({ length: n }, (_, i) => i).sort(
    (a, b) => (A[b * n + b] as number) - (A[a * n + a] as number),
  );
  const U = new Float64Array(n * r);
  for (let i = 0; i < r; i++) for (let k = 0; k < n; k++) U[k * r + i] = V[k * n + (order[i] as number)] as number;
  return U;
}
