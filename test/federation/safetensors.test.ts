import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { readSafetensors, SafetensorsError, writeSafetensors, type SafeTensor } from '../../src/federation/safetensors.js';
import { f32FromBase64, f32FromLE, f32ToBase64, toLE } from '../../src/federation/float-bytes.js';
import { fromBase64F32, toBase64F32 } from '../../src/federation/tensor.js';

const tensorArb = fc.record({
  name: fc.string({ minLength: 1, maxLength: 20 }).filter((s) => s !== '__metadata__'),
  shape: fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 3 }),
  dtype: fc.constantFrom('F32' as const, 'F64' as const),
});

describe('safetensors', () => {
  it('round-trips names, shapes, dtypes, values (incl. NaN, ±0, ±Inf) and metadata', () => {
    fc.assert(
      fc.property(fc.uniqueArray(tensorArb, { selector: (t) => t.name, maxLength: 5 }), fc.dictionary(fc.string(), fc.string()), (specs, metadata) => {
        const tensors: SafeTensor[] = specs.map((s, i) => {
          const n = s.shape.reduce((a, b) => a * b, 1);
          const vals = Array.from({ length: n }, (_, k) => [NaN, -0, Infinity, -Infinity, 1.5, i + k / 7][k % 6] as number);
          return { ...s, data: s.dtype === 'F32' ? Float32Array.from(vals) : Float64Array.from(vals) };
        });
        const bytes = writeSafetensors(tensors, metadata);
        expect(Number(bytes.readBigUInt64LE(0)) % 8).toBe(0);
        const back = readSafetensors(bytes);
        expect(back.metadata).toEqual(Object.keys(metadata).length ? metadata : {});
        expect(back.tensors.map((t) => [t.name, t.shape, t.dtype])).toEqual(tensors.map((t) => [t.name, t.shape, t.dtype]));
        back.tensors.forEach((t, i) => expect(Array.from(t.data)).toEqual(Array.from(tensors[i]!.data)));
      }),
      { numRuns: 100 },
    );
  });

  it('reads the layout the Python library writes (header JSON, data_offsets relative to the data)', () => {
    const header = JSON.stringify({ __metadata__: { format: 'pt' }, b: { dtype: 'F64', shape: [1], data_offsets: [8, 16] }, a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] } });
    const head = Buffer.alloc(8);
    head.writeBigUInt64LE(BigInt(header.length));
    const data = Buffer.concat([toLE(Float32Array.of(1, 2)), toLE(Float64Array.of(3))]);
    const { tensors, metadata } = readSafetensors(Buffer.concat([head, Buffer.from(header), data]));
    expect(metadata).toEqual({ format: 'pt' });
    expect(tensors.map((t) => [t.name, Array.from(t.data)])).toEqual([
      ['a', [1, 2]],
      ['b', [3]],
    ]);
  });

  it('refuses malformed files with a precise message', () => {
    const mk = (h: unknown, dataBytes = 8): Buffer => {
      const json = JSON.stringify(h);
      const head = Buffer.alloc(8);
      head.writeBigUInt64LE(BigInt(json.length));
      return Buffer.concat([head, Buffer.from(json), Buffer.alloc(dataBytes)]);
    };
    const cases: [Buffer, RegExp][] = [
      [Buffer.alloc(4), /too short/],
      [Buffer.concat([Buffer.from([255, 255, 255, 255, 0, 0, 0, 0]), Buffer.alloc(10)]), /header length .* does not fit/],
      [mk({ a: { dtype: 'I8', shape: [1], data_offsets: [0, 1] } }), /dtype "I8" is not supported/],
      [mk({ a: { dtype: 'F32', shape: [3], data_offsets: [0, 8] } }), /8 bytes for shape \[3\] of F32 \(expected 12\)/],
      [mk({ a: { dtype: 'F32', shape: [4], data_offsets: [0, 16] } }), /outside the 8-byte data section/],
      [mk({ a: { dtype: 'F32', shape: [2], data_offsets: [0, 8] }, b: { dtype: 'F32', shape: [1], data_offsets: [4, 8] } }), /overlap/],
      [mk([1, 2]), /not a JSON object/],
    ];
    for (const [bytes, msg] of cases) expect(() => readSafetensors(bytes)).toThrow(msg);
    expect(() => readSafetensors(Buffer.alloc(4))).toThrow(SafetensorsError);
    expect(() => writeSafetensors([{ name: 'x', shape: [2], dtype: 'F32', data: new Float32Array(3) }])).toThrow(/holds 2 values, data has 3/);
  });
});

describe('little-endian float codecs', () => {
  it('agree with the shared NamedTensor helpers (base64 LE float32)', () => {
    fc.assert(
      fc.property(fc.array(fc.float({ noDefaultInfinity: false })), (xs) => {
        const a = Float32Array.from(xs);
        expect(f32ToBase64(a)).toBe(toBase64F32(a));
        expect(Array.from(f32FromBase64(toBase64F32(a)))).toEqual(Array.from(fromBase64F32(toBase64F32(a))));
      }),
    );
    expect(() => f32FromLE(new Uint8Array(3))).toThrow(/not a whole number of float32/);
  });
});
