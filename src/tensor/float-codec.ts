import { endianness } from 'node:os';
import { TensorError } from './errors.js';

/**
 * Float values <-> little-endian bytes <-> base64, the one codec of the code base: safetensors
 * data, council storage chunks and the tensor JSON shape all use it. A typed-array copy on
 * little-endian hosts (all mainstream ones), per-element DataView access otherwise.
 */
const LE = endianness() === 'LE';

/** Decodes little-endian float32 bytes (length must be a multiple of 4). Always a copy. */
export function f32FromLE(bytes: Uint8Array): Float32Array {
  if (bytes.byteLength % 4 !== 0)
    throw new TensorError(`${bytes.byteLength} bytes is not a whole number of float32 values`);
  const out = new Float32Array(bytes.byteLength / 4);
  if (LE) new Uint8Array(out.buffer).set(bytes);
  else {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < out.length; i++) out[i] = dv.getFloat32(i * 4, true);
  }
  return out;
}

export function f64FromLE(bytes: Uint8Array): Float64Array {
  if (bytes.byteLength % 8 !== 0)
    throw new TensorError(`${bytes.byteLength} bytes is not a whole number of float64 values`);
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

/** Base64 (strict, see decodeBase64Strict) of little-endian float32 values. */
export function f32FromBase64(b64: string): Float32Array {
  return f32FromLE(decodeBase64Strict(b64));
}

const SLICE = 3 * 65536;

/**
 * Decodes standard base64 (RFC 4648 §4, padded) and refuses anything but the one canonical
 * encoding of the bytes: Node's decoder silently skips characters outside the alphabet, accepts
 * missing padding and ignores non-zero pad bits, so "the same bytes" could arrive under many
 * spellings (and a digest over the text would tell them apart). Canonical means: re-encoding the
 * bytes gives the text back — compared slice by slice to keep memory flat on large tensors.
 */
export function decodeBase64Strict(text: string): Buffer {
  const bad = (at: number): TensorError =>
    new TensorError(`not canonical base64 at character ${at} (${JSON.stringify(text.slice(at, at + 4))})`, {
      code: 'invalid_base64',
    });
  if (text.length % 4 !== 0)
    throw new TensorError(`base64 text of ${text.length} characters is not padded to a multiple of 4`, {
      code: 'invalid_base64',
    });
  const bytes = Buffer.from(text, 'base64');
  if (Math.ceil(bytes.length / 3) * 4 !== text.length) {
    const m = /[^A-Za-z0-9+/=]|=[^=]/.exec(text);
    throw bad(m ? m.index : 0);
  }
  for (let b = 0, c = 0; b < bytes.length; b += SLICE, c += (SLICE / 3) * 4) {
    const want = bytes.toString('base64', b, Math.min(bytes.length, b + SLICE));
    const got = text.slice(c, c + want.length);
    if (want !== got) throw bad(c + firstDifference(want, got));
  }
  return bytes;
}

function firstDifference(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return i;
  return n;
}
