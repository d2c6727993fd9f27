import type { Layout, LayoutEntry } from '../tensor/layout.js';

/**
 * A LoRA layer: W = B·A with A of shape [r, n] (`…lora_A…`) and B of shape [m, r] (the same
 * name with `lora_B`), the PEFT naming (`base_model.model.…q_proj.lora_A.weight`).
 */
export interface LoraPair {
  /** The A tensor's name with `lora_A` replaced by `lora_*`. */
  layer: string;
  a: LayoutEntry;
  b: LayoutEntry;
  m: number;
  r: number;
  n: number;
}

/**
 * Pairs the A and B factors. Tensors that are not LoRA factors (a routing head, a bias), or whose
 * partner is missing or has an incompatible shape, are `others`: LoRA-FAIR averages them plainly
 * and reports the incomplete pairs in `unpaired`.
 */
export function loraPairs(layout: Layout): { pairs: LoraPair[]; others: LayoutEntry[]; unpaired: string[] } {
  const byName = new Map(layout.tensors.map((t) => [t.name, t]));
  const pairs: LoraPair[] = [];
  const paired = new Set<string>();
  const unpaired: string[] = [];
  for (const a of layout.tensors) {
    if (!a.name.includes('lora_A')) continue;
    const bName = a.name.replace('lora_A', 'lora_B');
    const b = byName.get(bName);
    const [r, n] = a.shape;
    const [m, rb] = b?.shape ?? [];
    if (
      !b ||
      a.shape.length !== 2 ||
      b.shape.length !== 2 ||
      r !== rb ||
      r === undefined ||
      n === undefined ||
      m === undefined
    ) {
      unpaired.push(a.name);
      continue;
    }
    pairs.push({ layer: a.name.replace('lora_A', 'lora_*'), a, b, m, r, n });
    paired.add(a.name).add(bName);
  }
  for (const t of layout.tensors) if (t.name.includes('lora_B') && !paired.has(t.name)) unpaired.push(t.name);
  return { pairs, others: layout.tensors.filter((t) => !paired.has(t.name)), unpaired };
}
