import type { Layout } from '../tensor/layout.js';
import { publicInit, PUBLIC_INIT_SEED } from '../protocol/public-init.js';

/**
 * The public initialisation (protocol/public-init.ts) flattened in layout order: the council's base
 * before any aggregate.
 */
export function publicInitFlat(layout: Layout, agent: string, seed = PUBLIC_INIT_SEED): Float32Array {
  const flat = new Float32Array(layout.size);
  publicInit(layout, agent, seed).forEach((t, i) =>
    flat.set(t.data, (layout.tensors[i] as Layout['tensors'][number]).offset),
  );
  return flat;
}
