/**
 * A LoRA adapter's factors for one agent, in the trainer's internal layout (float64):
 *   encoder.dense: A as Aᵀ [in][r] (a feature's r values are contiguous: sparse inputs touch few
 *   rows), B [hidden][r]; the agent's head: A [r][hidden], B [out][r]; the agent's direct path:
 *   A as Aᵀ [in][r], B [out][r].
 * All six live in one buffer, the nonlinear path's four first (`nonlinearSize`), so an optimiser
 * can run over that prefix alone. adapter-layout.ts converts to and from the PEFT layout
 * (lora_A [r, in], lora_B [out, r]).
 */
export interface LoraDims {
  inDim: number;
  hidden: number;
  out: number;
  rank: number;
}

export interface LoraWeights extends LoraDims {
  all: Float64Array;
  denseAt: Float64Array;
  denseB: Float64Array;
  headA: Float64Array;
  headB: Float64Array;
  directAt: Float64Array;
  directB: Float64Array;
}

/** Values of encoder.dense's and the head's factors (the prefix of `all`). */
export function nonlinearSize(d: LoraDims): number {
  return d.inDim * d.rank + d.hidden * d.rank + d.rank * d.hidden + d.out * d.rank;
}

export function loraSize(d: LoraDims): number {
  return nonlinearSize(d) + d.inDim * d.rank + d.out * d.rank;
}

/** Views over `all` (zeros when not given). */
export function loraWeights(d: LoraDims, all: Float64Array = new Float64Array(loraSize(d))): LoraWeights {
  if (all.length !== loraSize(d))
    throw new RangeError(`LoRA buffer holds ${all.length} values, dims need ${loraSize(d)}`);
  const { inDim, hidden, out, rank } = d;
  let o = 0;
  const take = (n: number): Float64Array => {
    const v = all.subarray(o, o + n);
    o += n;
    return v;
  };
  return {
    inDim,
    hidden,
    out,
    rank,
    all,
    denseAt: take(inDim * rank),
    denseB: take(hidden * rank),
    headA: take(rank * hidden),
    headB: take(out * rank),
    directAt: take(inDim * rank),
    directB: take(out * rank),
  };
}

export function cloneLora(w: LoraWeights): LoraWeights {
  return loraWeights(w, Float64Array.from(w.all));
}

/**
 * PEFT's initialisation: A uniform on ±1/√in (kaiming-uniform with a = √5), B zero, so a fresh
 * adapter changes nothing until it has learned something. `uniform` is the seeded source. The
 * direct path starts at zero: it is fitted, not descended (linear-fit.ts).
 */
export function initLora(d: LoraDims, uniform: () => number): LoraWeights {
  const w = loraWeights(d);
  const bDense = 1 / Math.sqrt(d.inDim);
  for (let i = 0; i < w.denseAt.length; i++) w.denseAt[i] = (2 * uniform() - 1) * bDense;
  const bHead = 1 / Math.sqrt(d.hidden);
  for (let i = 0; i < w.headA.length; i++) w.headA[i] = (2 * uniform() - 1) * bHead;
  return w;
}
