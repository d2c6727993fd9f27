/**
 * Clipping of a released delta: ALL its tensors together, as one vector, to L2 norm S.
 * This bounds the L2 sensitivity of the release by S, which is what the Gaussian mechanism's
 * guarantee needs (clipping per tensor would bound it only by S·sqrt(number of tensors)).
 */
import { InvalidDataError } from '../errors.js';
import { globalL2, numel, type NamedTensor } from '../tensor/tensor.js';

export interface Clipped {
  tensors: NamedTensor[];
  /** L2 norm of the whole delta before clipping (stays local: never released). */
  normBefore: number;
  /** L2 norm after clipping (<= S, also local). */
  normAfter: number;
  /** The factor applied to every element (1 when the delta was already within S). */
  scale: number;
  clipped: boolean;
}

/** Throws InvalidDataError naming the tensor when shapes do not match data or values are not finite. */
export function checkTensors(tensors: readonly NamedTensor[]): void {
  const names = new Set<string>();
  for (const t of tensors) {
    if (names.has(t.name)) throw new InvalidDataError(`delta: tensor ${JSON.stringify(t.name)} appears twice`);
    names.add(t.name);
    if (!t.shape.every((d) => Number.isInteger(d) && d >= 0))
      throw new InvalidDataError(
        `delta: tensor ${JSON.stringify(t.name)} has an invalid shape [${t.shape.join(', ')}]`,
      );
    if (numel(t.shape) !== t.data.length) {
      throw new InvalidDataError(
        `delta: tensor ${JSON.stringify(t.name)} has shape [${t.shape.join(', ')}] (${numel(t.shape)} values) but ${t.data.length} values`,
      );
    }
    for (let i = 0; i < t.data.length; i++) {
      if (!Number.isFinite(t.data[i]))
        throw new InvalidDataError(`delta: tensor ${JSON.stringify(t.name)} holds a non-finite value at index ${i}`);
    }
  }
}

/**
 * Scales every tensor by min(1, S / ||delta||₂). New arrays; the input is not modified.
 * Because values are stored as float32, the scale is nudged down until the stored vector's norm
 * (computed in float64) is <= S exactly.
 */
export function clipToNorm(tensors: readonly NamedTensor[], clipNorm: number): Clipped {
  if (!(clipNorm > 0) || !Number.isFinite(clipNorm))
    throw new RangeError(`clip norm must be a positive finite number, got ${clipNorm}`);
  checkTensors(tensors);
  const normBefore = globalL2(tensors);
  if (normBefore <= clipNorm) {
    return {
      tensors: tensors.map((t) => ({ name: t.name, shape: [...t.shape], data: Float32Array.from(t.data) })),
      normBefore,
      normAfter: normBefore,
      scale: 1,
      clipped: false,
    };
  }
  let scale = clipNorm / normBefore;
  for (;;) {
    const out = tensors.map((t) => {
      const data = new Float32Array(t.data.length);
      for (let i = 0; i < data.length; i++) data[i] = (t.data[i] as number) * scale;
      return { name: t.name, shape: [...t.shape], data };
    });
    const normAfter = globalL2(out);
    if (normAfter <= clipNorm) return { tensors: out, normBefore, normAfter, scale, clipped: true };
    scale *= 1 - 2 ** -23; // float32 rounding pushed the norm a hair above S
  }
}
