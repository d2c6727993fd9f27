import { endianness } from 'node:os';

/**
 * Little-endian float32/float64 <-> bytes, fast: a typed-array view or copy on little-endian
 * hosts (all mainstream ones), per-element DataView access otherwise.
 */
const LE = endianness() === 'LE';

/** Decodes little-endian float32 bytes (length must be a multiple of 4). Always a copy. */
export function f32FromLE(bytes: Uint8Array): Float32Array {
  if (bytes.byteLength % 4 !== 0) throw new RangeError(`${bytes.byteLength} bytes is not a whole number of float32 values`);
  const out = new Float32Array(bytes.byteLength / 4);
  if (LE) new Uint8Array(out.buffer).set(bytes);
  else {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < out.length; i++) out[i] = dv.getFloat32(i * 4, true);
  }
  return out;
}

export function f64FromLE(bytes: Uint8Array): Float64Array {
  if (bytes.byteLength % 8 !== 0) throw new RangeError(`${bytes.byteLength} bytes is not a whole number of float64 values`);
  const out = new Float64Array(bytes.byteLength / 8);
  if (LE) new Uint8Array(out.buffer).set(bytes);
  else {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < out.length; i++) out[i] = dv.getFloat64(i * 8, true);
  }
  return out;
}

/** Little-endian bytes of a float array (a view on little-endian hosts: do not mutate the source meanwhile). */
export function toLE(data: Float32Array | Float64Array): Buffer {
  if (LE) return Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  const el = data.BYTES_PER_ELEMENT;
  const buf = Buffer.alloc(data.length * el);
  for (let i = 0; i < data.length; i++) {
    if (el === 4) buf.writeFloatLE(data[i] as number, i * 4);
    else buf.writeDoubleLE(data[i] as number, i * 8);
  }
  return buf;
}

export function f32ToBase64(data: Float32Array): string {
  return toLE(data).toString('base64');
}

export function f32FromBase64(b64: string): Float32Array {
  return f32FromLE(Buffer.from(b64, 'base64'));
}
