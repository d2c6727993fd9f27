import type { BaseSpec } from './base-spec.js';
import { inputEncoder } from './encoder/inputs.js';
import type { EncodeFn } from './trainer.js';
import type { EmbeddedTexts } from './worker-protocol.js';

/** The encoder a training run uses: the base's inputs, with an endpoint base's embeddings looked up in `embedded`. */
export function encoderFor(spec: BaseSpec, embedded: EmbeddedTexts | null): EncodeFn {
  const enc = inputEncoder(spec);
  if (spec.semantic === null) return (t, prompt) => enc(t, prompt);
  if (!embedded) throw new Error('an endpoint-encoder base needs its texts embedded before training');
  const at = new Map(embedded.texts.map((t, i) => [t, i]));
  return (t, prompt) => {
    const i = at.get(t);
    if (i === undefined) throw new Error('a text was not embedded before training');
    return enc(t, prompt, embedded.data.subarray(i * embedded.dim, (i + 1) * embedded.dim));
  };
}
