import type { TensorSpec } from './tensor.js';

/**
 * The layout of one agent's adapter: its named tensors, in order, flattened into one vector.
 * The council accepts updates in the layout it is configured with, the aggregation rules see the
 * flat vector, and the trainer produces tensors in the same layout.
 */
export interface LayoutEntry extends TensorSpec {
  /** First coordinate of this tensor in the flat vector. */
  offset: number;
  size: number;
}

export interface Layout {
  tensors: LayoutEntry[];
  /** Total number of coordinates. */
  size: number;
}

export function layoutOf(specs: readonly TensorSpec[]): Layout {
  let offset = 0;
  const tensors = specs.map((s) => {
    const size = s.shape.reduce((a, b) => a * b, 1);
    const e: LayoutEntry = { name: s.name, shape: [...s.shape], offset, size };
    offset += size;
    return e;
  });
  return { tensors, size: offset };
}

/** Whether two layouts have the same tensor names, order and shapes. */
export function sameLayout(a: Layout, b: Layout): boolean {
  return (
    a.tensors.length === b.tensors.length &&
    a.tensors.every((t, i) => t.name === b.tensors[i]?.name && t.shape.join(',') === b.tensors[i]?.shape.join(','))
  );
}
