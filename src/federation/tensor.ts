/**
 * Named tensors: how LoRA factors and council deltas travel (privacy clipping, the council
 * protocol, offline aggregation). float32 on the wire, float64 where aggregation needs it.
 */
export interface NamedTensor {
  name: string;
  shape: number[];
  data: Float32Array;
}

export function numel(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** L2 norm of all tensors together (the released vector is clipped as a whole). */
export function globalL2(tensors: readonly NamedTensor[]): number {
  let s = 0;
  for (const t of tensors) for (let i = 0; i < t.data.length; i++) s += (t.data[i] as number) * (t.data[i] as number);
  return Math.sqrt(s);
}

/** Base64 of the little-endian float32 bytes (the wire encoding). */
export function toBase64F32(data: Float32Array): string {
  const buf = Buffer.alloc(data.length * 4);
  for (let i = 0; i < data.length; i++) buf.writeFloatLE(data[i] as number, i * 4);
  return buf.toString('base64');
}

export function fromBase64F32(b64: string): Float32Array {
  const buf = Buffer.from(b64, 'base64');
  if (buf.length % 4 !== 0) throw new RangeError(`tensor data is ${buf.length} bytes, not a multiple of 4`);
  const out = new Float32Array(buf.length / 4);
  for (let i = 0; i < out.length; i++) out[i] = buf.readFloatLE(i * 4);
  return out;
}
