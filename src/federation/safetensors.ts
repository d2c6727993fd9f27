import { f32FromLE, f64FromLE, toLE } from './float-bytes.js';

/**
 * A small safetensors reader and writer (https://github.com/huggingface/safetensors):
 * 8 bytes little-endian u64 N, then N bytes of JSON header
 *   { "<name>": { "dtype": "F32", "shape": [..], "data_offsets": [begin, end] }, "__metadata__": {..} }
 * then the raw little-endian data, offsets relative to its start. F32 and F64 only.
 */
export type SafeDtype = 'F32' | 'F64';

export interface SafeTensor {
  name: string;
  shape: number[];
  dtype: SafeDtype;
  data: Float32Array | Float64Array;
}

export class SafetensorsError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SafetensorsError';
  }
}

const MAX_HEADER = 100 * 1024 * 1024;

/** Parses a whole file's bytes. Tensors come back in data order. */
export function readSafetensors(bytes: Uint8Array): { tensors: SafeTensor[]; metadata: Record<string, string> } {
  if (bytes.byteLength < 8) throw new SafetensorsError(`file is ${bytes.byteLength} bytes: too short for a safetensors header`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const n = Number(dv.getBigUint64(0, true));
  if (n > MAX_HEADER || 8 + n > bytes.byteLength) throw new SafetensorsError(`header length ${n} does not fit in a ${bytes.byteLength}-byte file`);
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(bytes.buffer, bytes.byteOffset + 8, n).toString('utf8'));
  } catch (err) {
    throw new SafetensorsError(`header is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header)) throw new SafetensorsError('header is not a JSON object');
  const dataStart = 8 + n;
  const dataLen = bytes.byteLength - dataStart;
  let metadata: Record<string, string> = {};
  const tensors: (SafeTensor & { begin: number })[] = [];
  for (const [name, raw] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (raw && typeof raw === 'object') metadata = Object.fromEntries(Object.entries(raw).map(([k, v]) => [k, String(v)]));
      continue;
    }
    const info = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (info.dtype !== 'F32' && info.dtype !== 'F64') throw new SafetensorsError(`tensor "${name}": dtype ${JSON.stringify(info.dtype)} is not supported (F32 or F64)`);
    if (!Array.isArray(info.shape) || !info.shape.every((d) => Number.isInteger(d) && d >= 0)) throw new SafetensorsError(`tensor "${name}": bad shape ${JSON.stringify(info.shape)}`);
    const off = info.data_offsets;
    if (!Array.isArray(off) || off.length !== 2 || !off.every((x) => Number.isInteger(x) && x >= 0)) throw new SafetensorsError(`tensor "${name}": bad data_offsets ${JSON.stringify(off)}`);
    const [begin, end] = off as [number, number];
    const el = info.dtype === 'F32' ? 4 : 8;
    const numel = (info.shape as number[]).reduce((a, b) => a * b, 1);
    if (end < begin || end > dataLen) throw new SafetensorsError(`tensor "${name}": data_offsets [${begin}, ${end}] outside the ${dataLen}-byte data section`);
    if (end - begin !== numel * el) throw new SafetensorsError(`tensor "${name}": ${end - begin} bytes for shape [${(info.shape as number[]).join(', ')}] of ${info.dtype} (expected ${numel * el})`);
    const slice = bytes.subarray(dataStart + begin, dataStart + end);
    tensors.push({ name, shape: [...(info.shape as number[])], dtype: info.dtype, data: info.dtype === 'F32' ? f32FromLE(slice) : f64FromLE(slice), begin });
  }
  tensors.sort((a, b) => a.begin - b.begin);
  for (let i = 1; i < tensors.length; i++) {
    const prev = tensors[i - 1] as SafeTensor & { begin: number };
    if ((tensors[i] as { begin: number }).begin < prev.begin + prev.data.byteLength) throw new SafetensorsError(`tensors "${prev.name}" and "${(tensors[i] as SafeTensor).name}" overlap`);
  }
  return { tensors: tensors.map(({ begin: _b, ...t }) => t), metadata };
}

/** Serialises tensors in the given order (header padded with spaces to 8 bytes, as the reference writer). */
export function writeSafetensors(tensors: readonly SafeTensor[], metadata: Record<string, string> = {}): Buffer {
  // A null-prototype object: a tensor may be called "__proto__" (it must become a key, not a prototype).
  const header = Object.create(null) as Record<string, unknown>;
  if (Object.keys(metadata).length) header.__metadata__ = metadata;
  let offset = 0;
  for (const t of tensors) {
    if (t.name === '__metadata__' || Object.hasOwn(header, t.name)) throw new SafetensorsError(`duplicate or reserved tensor name "${t.name}"`);
    const numel = t.shape.reduce((a, b) => a * b, 1);
    if (numel !== t.data.length) throw new SafetensorsError(`tensor "${t.name}": shape [${t.shape.join(', ')}] holds ${numel} values, data has ${t.data.length}`);
    const bytes = t.data.length * (t.dtype === 'F32' ? 4 : 8);
    header[t.name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  while ((8 + Buffer.byteLength(json)) % 8 !== 0) json += ' ';
  const head = Buffer.alloc(8);
  head.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  const parts: Buffer[] = [head, Buffer.from(json, 'utf8')];
  for (const t of tensors) {
    const want = t.dtype === 'F32' ? (t.data instanceof Float32Array ? t.data : Float32Array.from(t.data)) : t.data instanceof Float64Array ? t.data : Float64Array.from(t.data);
    parts.push(toLE(want));
  }
  return Buffer.concat(parts);
}
