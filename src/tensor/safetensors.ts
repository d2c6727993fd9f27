import { createHash } from 'node:crypto';
import { SafetensorsError } from './errors.js';
import { f32FromLE, f64FromLE, toLE } from './float-codec.js';
import { bytesPerElement, checkedNumel, dtypeOf, type Dtype, type NamedTensor, type TensorData } from './tensor.js';

/**
 * Safetensors (https://github.com/huggingface/safetensors), the format adapters are stored and
 * exchanged in: 8 bytes little-endian u64 N, N bytes of JSON header
 *   { "<name>": { "dtype": "F32", "shape": [..], "data_offsets": [begin, end] }, "__metadata__": {..} }
 * then the raw little-endian data, offsets relative to its start. F32 and F64 only.
 *
 * Reading is strict, because a truncated or damaged adapter must never be loaded as if it were
 * whole: the header length must fit the file, the header must be a JSON object, every dtype,
 * shape and offset must be valid, the tensors must tile the data section exactly (no overlap, no
 * hole, nothing after the last tensor — the format's own rule), and when the file records the
 * sha256 of its data section (kourai's writer does, under `__metadata__`), it must match.
 */
export const DATA_DIGEST_KEY = 'kourai.data_sha256';
const MAX_HEADER = 100 * 1024 * 1024;

export interface SafetensorsContents {
  /** In data order. */
  tensors: NamedTensor<TensorData>[];
  /** `__metadata__` without kourai's data digest. */
  metadata: Record<string, string>;
  /** Whether the file recorded a data digest (then it was verified, unless the caller vouched for the bytes). */
  digest: 'verified' | 'absent' | 'unchecked';
}

/** Parses a whole file's bytes; SafetensorsError (exit 5) names what is wrong. */
export function readSafetensors(bytes: Uint8Array, opts: { checkDigest?: boolean } = {}): SafetensorsContents {
  if (bytes.byteLength < 8)
    throw new SafetensorsError(`truncated: ${bytes.byteLength} bytes is too short for a safetensors header`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const big = dv.getBigUint64(0, true);
  if (big > BigInt(MAX_HEADER) || 8 + Number(big) > bytes.byteLength) {
    throw new SafetensorsError(
      `truncated or not safetensors: header length ${big} does not fit in a ${bytes.byteLength}-byte file`,
    );
  }
  const n = Number(big);
  const text = Buffer.from(bytes.buffer, bytes.byteOffset + 8, n).toString('utf8');
  const dataStart = 8 + n;
  const { entries, metadata } = parseSafetensorsHeader(text, bytes.byteLength - dataStart);
  const data = bytes.subarray(dataStart);
  let digest: SafetensorsContents['digest'] = 'absent';
  const recorded = metadata[DATA_DIGEST_KEY];
  if (recorded !== undefined && opts.checkDigest === false) {
    // The caller checks the whole file against a hash of its own (the adapter registry's).
    digest = 'unchecked';
    delete metadata[DATA_DIGEST_KEY];
  } else if (recorded !== undefined) {
    const actual = createHash('sha256').update(data).digest('hex');
    if (actual !== recorded)
      throw new SafetensorsError(
        `corrupt: the data section does not match the sha256 the file records (${recorded.slice(0, 12)}…, found ${actual.slice(0, 12)}…)`,
      );
    digest = 'verified';
    delete metadata[DATA_DIGEST_KEY];
  }
  const tensors = entries.map((e): NamedTensor<TensorData> => {
    const slice = data.subarray(e.begin, e.end);
    return { name: e.name, shape: e.shape, data: e.dtype === 'F32' ? f32FromLE(slice) : f64FromLE(slice) };
  });
  return { tensors, metadata, digest };
}

/** One tensor of a safetensors header: where its bytes lie in the data section. */
export interface SafetensorsEntry {
  name: string;
  shape: number[];
  dtype: Dtype;
  begin: number;
  end: number;
}

/**
 * Checks a header (its JSON text) against a data section of `dataLen` bytes: the entries in data
 * order and `__metadata__`. What readSafetensors checks before it looks at any tensor byte, so a
 * body read as it arrives is held to the same rules.
 */
export function parseSafetensorsHeader(
  text: string,
  dataLen: number,
): { entries: SafetensorsEntry[]; metadata: Record<string, string> } {
  if (!text.startsWith('{')) throw new SafetensorsError('corrupt: the header does not start with "{"');
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch (err) {
    throw new SafetensorsError(`corrupt: the header is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof header !== 'object' || header === null || Array.isArray(header))
    throw new SafetensorsError('corrupt: the header is not a JSON object');
  let metadata: Record<string, string> = {};
  const entries: SafetensorsEntry[] = [];
  for (const [name, raw] of Object.entries(header as Record<string, unknown>)) {
    if (name === '__metadata__') {
      if (
        typeof raw !== 'object' ||
        raw === null ||
        Array.isArray(raw) ||
        !Object.values(raw).every((v) => typeof v === 'string')
      ) {
        throw new SafetensorsError('corrupt: __metadata__ must map strings to strings');
      }
      metadata = { ...(raw as Record<string, string>) };
      continue;
    }
    if (typeof raw !== 'object' || raw === null)
      throw new SafetensorsError(`corrupt: tensor "${name}" has no description`);
    const info = raw as { dtype?: unknown; shape?: unknown; data_offsets?: unknown };
    if (info.dtype !== 'F32' && info.dtype !== 'F64')
      throw new SafetensorsError(`tensor "${name}": dtype ${JSON.stringify(info.dtype)} is not supported (F32 or F64)`);
    const numel = Array.isArray(info.shape) ? checkedNumel(info.shape) : null;
    if (numel === null)
      throw new SafetensorsError(`corrupt: tensor "${name}" has an invalid shape ${JSON.stringify(info.shape)}`);
    const off = info.data_offsets;
    if (!Array.isArray(off) || off.length !== 2 || !off.every((x) => Number.isSafeInteger(x) && (x as number) >= 0)) {
      throw new SafetensorsError(`corrupt: tensor "${name}" has invalid data_offsets ${JSON.stringify(off)}`);
    }
    const [begin, end] = off as [number, number];
    const shape = info.shape as number[];
    const want = numel * bytesPerElement(info.dtype);
    if (end < begin)
      throw new SafetensorsError(
        `corrupt: tensor "${name}" has data_offsets [${begin}, ${end}] that end before they begin`,
      );
    if (end - begin !== want)
      throw new SafetensorsError(
        `corrupt: tensor "${name}" spans ${end - begin} bytes, but shape [${shape.join(', ')}] of ${info.dtype} needs ${want}`,
      );
    if (end > dataLen)
      throw new SafetensorsError(
        `truncated: tensor "${name}" ends at byte ${end} of the data section, which holds only ${dataLen} bytes`,
      );
    entries.push({ name, shape: [...shape], dtype: info.dtype, begin, end });
  }
  entries.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let at = 0;
  for (const e of entries) {
    if (e.begin < at) throw new SafetensorsError(`corrupt: tensor "${e.name}" overlaps the tensor before it`);
    if (e.begin > at)
      throw new SafetensorsError(`corrupt: bytes ${at}–${e.begin} of the data section belong to no tensor`);
    at = e.end;
  }
  if (at !== dataLen)
    throw new SafetensorsError(
      `corrupt: ${dataLen - at} bytes after the last tensor (the data section must hold exactly the tensors)`,
    );
  return { entries, metadata };
}

/**
 * Serialises tensors in the given order, each in its array's dtype (header padded with spaces to
 * 8 bytes, as the reference writer does). Records the data section's sha256 in the metadata
 * unless `digest: false`, so a reader can tell a damaged file from a whole one.
 */
export function writeSafetensors(
  tensors: readonly NamedTensor<TensorData>[],
  metadata: Record<string, string> = {},
  opts: { digest?: boolean } = {},
): Buffer {
  // A null-prototype object: a tensor may be called "__proto__" (it must become a key, not a prototype).
  const header = Object.create(null) as Record<string, unknown>;
  const names = new Set<string>();
  let offset = 0;
  const specs: [string, unknown][] = [];
  for (const t of tensors) {
    if (t.name === '__metadata__' || names.has(t.name))
      throw new SafetensorsError(`duplicate or reserved tensor name "${t.name}"`);
    names.add(t.name);
    const numel = checkedNumel(t.shape);
    if (numel !== t.data.length)
      throw new SafetensorsError(
        `tensor "${t.name}": shape [${t.shape.join(', ')}] holds ${numel ?? 'an invalid number of'} values, data has ${t.data.length}`,
      );
    const bytes = t.data.byteLength;
    specs.push([t.name, { dtype: dtypeOf(t.data), shape: t.shape, data_offsets: [offset, offset + bytes] }]);
    offset += bytes;
  }
  const parts = tensors.map((t) => toLE(t.data));
  const meta: Record<string, string> = { ...metadata };
  if (opts.digest ?? true) {
    const h = createHash('sha256');
    for (const p of parts) h.update(p);
    meta[DATA_DIGEST_KEY] = h.digest('hex');
  } else delete meta[DATA_DIGEST_KEY];
  if (Object.keys(meta).length) header.__metadata__ = meta;
  for (const [name, spec] of specs) header[name] = spec;
  let json = JSON.stringify(header);
  while ((8 + Buffer.byteLength(json)) % 8 !== 0) json += ' ';
  const head = Buffer.alloc(8);
  head.writeBigUInt64LE(BigInt(Buffer.byteLength(json)));
  return Buffer.concat([head, Buffer.from(json, 'utf8'), ...parts]);
}
