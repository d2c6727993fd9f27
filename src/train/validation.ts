/**
 * The player's held-out examples and a judge over them: which of them a model gets right at a
 * given lean. The model is whatever the trainer builds, reached only through Inference (the same
 * path `score` and `route` take), so this follows any change of the network.
 */
import type { Example } from './examples/types.js';
import type { Features } from './features.js';
import type { Inference } from './inference.js';
import type { Judge } from './lean-choice.js';
import { sceneRoles } from './scene-split.js';

/** The examples of the scenes the trainer holds out to measure (never trained on, never used to stop). */
export function heldOutExamples(
  examples: readonly Example[],
  split: { heldOutFraction: number; seed: number },
): Example[] {
  const roles = sceneRoles(
    examples.map((e) => e.scene),
    split.heldOutFraction,
    split.seed,
  );
  if (!roles) return [];
  // A graded target of exactly one half has no right side.
  return examples.filter((e) => roles.get(e.scene) === 'validate' && !(e.kind === 'graded' && e.target === 0.5));
}

export function scenesOf(examples: readonly Example[]): number {
  return new Set(examples.map((e) => e.scene)).size;
}

/** Encodes the examples' texts once (each with the prompt it answers, as the trainer does); the judge then runs the network at any lean. */
export async function judgeOn(
  inf: Inference,
  encode: (texts: readonly string[], prompt: string | null) => Promise<Features[]>,
  examples: readonly Example[],
): Promise<Judge> {
  const byPrompt = new Map<string | null, { texts: string[]; slots: number[] }>();
  const at: number[] = [];
  let n = 0;
  for (const e of examples) {
    const texts = e.kind === 'pair' ? [e.chosen, e.rejected] : [e.text];
    const p = e.prompt ?? null;
    const g = byPrompt.get(p) ?? { texts: [], slots: [] };
    byPrompt.set(p, g);
    at.push(n);
    for (const t of texts) {
      g.texts.push(t);
      g.slots.push(n++);
    }
  }
  const features: Features[] = new Array<Features>(n);
  for (const [p, g] of byPrompt)
    (await encode(g.texts, p)).forEach((f, i) => void (features[g.slots[i] as number] = f));
  const specialists = inf.model.base.spec.specialists;
  return (lean) => {
    const y = inf.outputs(features, lean);
    return examples.map((e, k) => {
      const i = at[k] as number;
      const out = y[i] as Float64Array;
      if (e.kind === 'pair') return (out[0] as number) > ((y[i + 1] as Float64Array)[0] as number);
      if (e.kind === 'binary') return (out[0] as number) > 0 === (e.label === 1);
      if (e.kind === 'graded') return (out[0] as number) > 0 === e.target > 0.5;
      let best = 0;
      for (let j = 1; j < out.length; j++) if ((out[j] as number) > (out[best] as number)) best = j;
      return specialists[best] === e.label;
    });
  };
}
