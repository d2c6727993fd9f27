import type { LoraWeights } from './lora.js';

/**
 * Frobenius norms of effective LoRA updates without forming them: for X = Σ_k c_k B_k A_k,
 * ||X||² = Σ_ij (B̃ᵀB̃)_ij (ÃÃᵀ)_ij with B̃ = [c_1 B_1 …], Ã = [A_1; …] — Gram matrices of size
 * (Σ r_k)², never the out × in product.
 */
export interface Term {
  lora: LoraWeights;
  /** c_k: α/r times any sign or mixing weight. */
  coef: number;
}

type Module = 'dense' | 'head' | 'direct';

/** Column i of B (out values) and row i of A (in values) of one module. */
function factors(
  l: LoraWeights,
  m: Module,
): { out: number; inDim: number; b: (o: number, i: number) => number; a: (i: number, j: number) => number } {
  const r = l.rank;
  if (m === 'dense')
    return {
      out: l.hidden,
      inDim: l.inDim,
      b: (o, i) => l.denseB[o * r + i] as number,
      a: (i, j) => l.denseAt[j * r + i] as number,
    };
  if (m === 'direct')
    return {
      out: l.out,
      inDim: l.inDim,
      b: (o, i) => l.directB[o * r + i] as number,
      a: (i, j) => l.directAt[j * r + i] as number,
    };
  return {
    out: l.out,
    inDim: l.hidden,
    b: (o, i) => l.headB[o * r + i] as number,
    a: (i, j) => l.headA[i * l.hidden + j] as number,
  };
}

export function effectiveNorm(terms: readonly Term[], m: Module): number {
  const cols: { b: Float64Array; a: Float64Array }[] = [];
  for (const t of terms) {
    const f = factors(t.lora, m);
    for (let i = 0; i < t.lora.rank; i++) {
      const b = new Float64Array(f.out);
      for (let o = 0; o < f.out; o++) b[o] = t.coef * f.b(o, i);
      const a = new Float64Array(f.inDim);
      for (let j = 0; j < f.inDim; j++) a[j] = f.a(i, j);
      cols.push({ b, a });
    }
  }
  const dot = (x: Float64Array, y: Float64Array): number => {
    let s = 0;
    for (let k = 0; k < x.length; k++) s += (x[k] as number) * (y[k] as number);
    return s;
  };
  let s = 0;
  for (let i = 0; i < cols.length; i++) {
    for (let j = i; j < cols.length; j++) {
      const ci = cols[i] as { b: Float64Array; a: Float64Array };
      const cj = cols[j] as { b: Float64Array; a: Float64Array };
      const v = dot(ci.b, cj.b) * dot(ci.a, cj.a);
      s += i === j ? v : 2 * v;
    }
  }
  return Math.sqrt(Math.max(0, s));
}

function sameFactor(x: Float64Array, y: Float64Array): boolean {
  if (x.length !== y.length) return false;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return false;
  return true;
}

/**
 * ‖c_to B_to A_to − c_from B_from A_from‖ of one module. Through the Gram matrices the two terms
 * cancel only up to rounding, which grows with the factors' size; when the versions share a
 * factor (byte-identical adapters share both) the other one is subtracted first, so identical
 * adapters differ by exactly 0 and a change in one factor is measured without cancellation.
 */
export function differenceNorm(to: Term, from: Term, m: Module): number {
  const [bKey, aKey] = FACTORS[m];
  const bt = to.lora[bKey];
  const at = to.lora[aKey];
  const bf = from.lora[bKey];
  const af = from.lora[aKey];
  const shareA = sameFactor(at, af);
  if (to.lora.rank === from.lora.rank && (shareA || sameFactor(bt, bf))) {
    const [x, y] = shareA ? [bt, bf] : [at, af];
    const d = new Float64Array(x.length);
    for (let i = 0; i < d.length; i++) d[i] = to.coef * (x[i] as number) - from.coef * (y[i] as number);
    const lora = { ...to.lora, [shareA ? bKey : aKey]: d };
    return effectiveNorm([{ lora, coef: 1 }], m);
  }
  return effectiveNorm([to, { lora: from.lora, coef: -from.coef }], m);
}

/** Each module's B and A factors in LoraWeights. */
const FACTORS: Readonly<Record<Module, readonly ['denseB' | 'headB' | 'directB', 'denseAt' | 'headA' | 'directAt']>> = {
  dense: ['denseB', 'denseAt'],
  head: ['headB', 'headA'],
  direct: ['directB', 'directAt'],
};
