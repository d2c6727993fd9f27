import type { Agent } from '../memoir/format/agents.js';
import type { HeadName } from './base-model.js';
import { inputDim, type BaseSpec } from './base-spec.js';
import type { NamedTensor, TensorSpec } from '../tensor/tensor.js';
import { loraWeights, type LoraWeights } from './lora.js';

/** The head an agent's adapter trains: Hephaestus routes; every other agent scores candidates. */
export function headOf(agent: Agent): HeadName {
  return agent === 'hephaestus' ? 'route' : 'score';
}

/** PEFT module names of the base's linear layers that carry LoRA factors for `agent`. */
export function targetModules(agent: Agent): string[] {
  return ['encoder.dense', `head.${headOf(agent)}`, `direct.${headOf(agent)}`];
}

const PREFIX = 'base_model.model.';

/**
 * The tensors of an agent's adapter, in order, with PEFT names and shapes
 * (`base_model.model.<module>.lora_A.weight` [r, in], `….lora_B.weight` [out, r]). Pure and cheap:
 * the federation round and the council configure the layout they exchange from this.
 */
export function adapterLayout(spec: BaseSpec, agent: Agent, rank: number): TensorSpec[] {
  if (!Number.isInteger(rank) || rank < 1) throw new RangeError(`rank must be a whole number ≥ 1, got ${rank}`);
  const head = headOf(agent);
  const out = head === 'score' ? 1 : spec.specialists.length;
  return [
    { name: `${PREFIX}encoder.dense.lora_A.weight`, shape: [rank, inputDim(spec)] },
    { name: `${PREFIX}encoder.dense.lora_B.weight`, shape: [spec.hidden, rank] },
    { name: `${PREFIX}head.${head}.lora_A.weight`, shape: [rank, spec.hidden] },
    { name: `${PREFIX}head.${head}.lora_B.weight`, shape: [out, rank] },
    { name: `${PREFIX}direct.${head}.lora_A.weight`, shape: [rank, inputDim(spec)] },
    { name: `${PREFIX}direct.${head}.lora_B.weight`, shape: [out, rank] },
  ];
}

/** Internal factors -> PEFT tensors (float32), in adapterLayout order. */
export function loraToTensors(spec: BaseSpec, agent: Agent, lora: LoraWeights): NamedTensor[] {
  const [a, b, ha, hb, da, db] = adapterLayout(spec, agent, lora.rank) as [
    TensorSpec,
    TensorSpec,
    TensorSpec,
    TensorSpec,
    TensorSpec,
    TensorSpec,
  ];
  const { rank: r, inDim } = lora;
  const transpose = (At: Float64Array): Float32Array => {
    const A = new Float32Array(r * inDim);
    for (let j = 0; j < inDim; j++) for (let i = 0; i < r; i++) A[i * inDim + j] = At[j * r + i] as number;
    return A;
  };
  return [
    { ...a, data: transpose(lora.denseAt) },
    { ...b, data: Float32Array.from(lora.denseB) },
    { ...ha, data: Float32Array.from(lora.headA) },
    { ...hb, data: Float32Array.from(lora.headB) },
    { ...da, data: transpose(lora.directAt) },
    { ...db, data: Float32Array.from(lora.directB) },
  ];
}

/**
 * PEFT tensors -> internal factors. The names and shapes must be exactly the agent's layout for
 * this base and rank; otherwise a message saying which tensor differs (the caller wraps it).
 */
export function tensorsToLora(
  spec: BaseSpec,
  agent: Agent,
  rank: number,
  tensors: readonly { name: string; shape: readonly number[]; data: ArrayLike<number> }[],
): LoraWeights {
  const layout = adapterLayout(spec, agent, rank);
  const byName = new Map(tensors.map((t) => [t.name, t]));
  for (const want of layout) {
    const got = byName.get(want.name);
    if (!got) throw new RangeError(`tensor ${want.name} is missing`);
    if (got.shape.join(',') !== want.shape.join(','))
      throw new RangeError(
        `tensor ${want.name} has shape [${got.shape.join(', ')}], expected [${want.shape.join(', ')}]`,
      );
  }
  const extra = tensors.find((t) => !layout.some((l) => l.name === t.name));
  if (extra) throw new RangeError(`unexpected tensor ${extra.name}`);
  const out = headOf(agent) === 'score' ? 1 : spec.specialists.length;
  const inDim = inputDim(spec);
  const w = loraWeights({ inDim, hidden: spec.hidden, out, rank });
  const get = (i: number): ArrayLike<number> =>
    (byName.get((layout[i] as TensorSpec).name) as { data: ArrayLike<number> }).data;
  const untranspose = (A: ArrayLike<number>, At: Float64Array): void => {
    // Written in order (one feature's rank values at a time): the faster way round when loading.
    for (let j = 0; j < inDim; j++) for (let i = 0; i < rank; i++) At[j * rank + i] = A[i * inDim + j] as number;
  };
  untranspose(get(0), w.denseAt);
  w.denseB.set(get(1));
  w.headA.set(get(2));
  w.headB.set(get(3));
  untranspose(get(4), w.directAt);
  w.directB.set(get(5));
  for (let k = 0; k < w.all.length; k++)
    if (!Number.isFinite(w.all[k] as number)) throw new RangeError('a tensor holds NaN or Infinity');
  return w;
}
