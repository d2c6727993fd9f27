import { createHash } from 'node:crypto';
import { mulberry32 } from '../runtime/seeded-random.js';
import type { Layout } from '../tensor/layout.js';
import type { NamedTensor, TensorSpec } from '../tensor/tensor.js';

/**
 * The public initialisation of a council adapter: every agent's round-0 global. The council
 * publishes it like any version (round 0, with its digest), forges train round 1 from it and send
 * trained − init, and the council adds the aggregate of those deltas back onto it — so clipping
 * touches only what a forge learned, never the shared starting point (protocol v2).
 *
 * Scheme `kourai.public-init/1`, a function of the agent's layout (which fixes the rank and the
 * dimensions of the base), the agent and a published seed; the base fingerprint does not enter it,
 * because a council keeps one global per agent whichever accepted base a forge runs:
 *   - a PEFT LoRA A factor (a name ending in `lora_A.weight`, shape [r, in]): every value from
 *     U(−1/√in, 1/√in) — PEFT's default kaiming_uniform(a = √5) — drawn in row-major order from
 *     mulberry32 seeded with the first 4 bytes (LE) of sha256(`scheme|seed|agent|tensor name`);
 *   - every other tensor (the B factors): zeros.
 * Deterministic and public: anyone can derive it from what the round status publishes.
 */
export const PUBLIC_INIT_SCHEME = 'kourai.public-init/1';
export const PUBLIC_INIT_SEED = 0x636f756e; // "coun"

function streamOf(seed: number, agent: string, tensor: string): () => number {
  const h = createHash('sha256').update(`${PUBLIC_INIT_SCHEME}|${seed}|${agent}|${tensor}`).digest();
  return mulberry32(h.readUInt32LE(0));
}

/** The agent's public initialisation in `layout` (tensor specs or a council Layout), in layout order. */
export function publicInit(
  layout: readonly TensorSpec[] | Layout,
  agent: string,
  seed = PUBLIC_INIT_SEED,
): NamedTensor[] {
  const specs = Array.isArray(layout) ? (layout as readonly TensorSpec[]) : (layout as Layout).tensors;
  return specs.map((s) => {
    const n = s.shape.reduce((a, b) => a * b, 1);
    const data = new Float32Array(n);
    if (s.name.endsWith('lora_A.weight') && s.shape.length === 2) {
      const bound = 1 / Math.sqrt(s.shape[1] as number);
      const u = streamOf(seed, agent, s.name);
      for (let i = 0; i < n; i++) data[i] = (2 * u() - 1) * bound;
    }
    return { name: s.name, shape: [...s.shape], data };
  });
}
