/**
 * The tensor type every floor above shares — aggregation, privacy, the council wire, the trainer:
 * a name, a row-major shape and the values, float32 (what leaves a forge and what the council
 * stores) or float64 (where arithmetic needs it). The dtype is the array's type: nothing to keep
 * in sync.
 */
export type TensorData = Float32Array | Float64Array;
export type Dtype = 'F32' | 'F64';

export interface NamedTensor<D extends TensorData = Float32Array> {
  name: string;
  shape: number[];
  data: D;
}

/** A tensor's name and shape without its values (an adapter layout is a list of these). */
export interface TensorSpec {
  name: string;
  shape: number[];
}

export function dtypeOf(data: TensorData): Dtype {
  return data instanceof Float64Array ? 'F64' : 'F32';
}

export function bytesPerElement(dtype: Dtype): 4 | 8 {
  return dtype === 'F32' ? 4 : 8;
}

/** The number of values a shape holds (1 for a scalar []). Assumes a valid shape: see checkedNumel. */
export function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/**
 * The number of values of a shape, or null when a dimension is not a whole number ≥ 0 or the
 * product exceeds `max` (default 2^53 − 1). Checked dimension by dimension, so a hostile shape
 * like [65536 × 8] is refused before any product loses precision.
 */
export function checkedNumel(shape: readonly unknown[], max = Number.MAX_SAFE_INTEGER): number | null {
  let n = 1;
  for (const d of shape) {
    if (typeof d !== 'number' || !Number.isSafeInteger(d) || d < 0) return null;
    if (d === 0) return 0;
    if (n > max / d) return null;
    n *= d;
  }
  return n;
}

/**
 * L2 norm of all tensors together (a released update is clipped as one vector). Never overflows:
 * squares of float32 values always fit in float64, but float64 data may not, so the sum is
 * redone with scaling (as BLAS nrm2 does) when the plain one overflows.
 */
export function globalL2(tensors: readonly { data: TensorData }[]): number {
  return l2Norm(tensors.map((t) => t.data));
}

export function l2Norm(parts: readonly ArrayLike<number>[]): number {
  let s = 0;
  for (const p of parts) for (let i = 0; i < p.length; i++) s += (p[i] as number) * (p[i] as number);
  if (Number.isFinite(s)) return Math.sqrt(s);
  let scale = 0;
  for (const p of parts) {
    for (let i = 0; i < p.length; i++) {
      const a = Math.abs(p[i] as number);
      if (Number.isNaN(a)) return NaN;
      if (a > scale) scale = a;
    }
  }
  if (scale === Infinity) return Infinity;
  let t = 0;
  for (const p of parts) for (let i = 0; i < p.length; i++) t += ((p[i] as number) / scale) ** 2;
  return scale * Math.sqrt(t);
}
