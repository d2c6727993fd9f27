import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../src/errors.js';
import {
  decodeBase64Strict,
  f32FromBase64,
  f32FromLE,
  f32ToBase64,
  f64FromLE,
  toLE,
} from '../../src/tensor/float-codec.js';
import { tensorFromJson, TensorJsonSchema, tensorToJson } from '../../src/tensor/json.js';
import { checkedNumel, globalL2, l2Norm } from '../../src/tensor/tensor.js';
import { matmul, matrix, solve, toNested, transpose } from '../../src/tensor/linalg.js';

describe('float codecs', () => {
  it('little-endian bytes: the IEEE 754 encodings, written out by hand', () => {
    expect([...toLE(Float32Array.of(1, -2))]).toEqual([0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0]);
    expect([...toLE(Float64Array.of(0.5))]).toEqual([0, 0, 0, 0, 0, 0, 0xe0, 0x3f]);
    expect(Array.from(f32FromLE(Uint8Array.of(0, 0, 0x80, 0x3f)))).toEqual([1]);
    expect(Array.from(f64FromLE(Uint8Array.of(0, 0, 0, 0, 0, 0, 0xe0, 0x3f)))).toEqual([0.5]);
    expect(f32ToBase64(Float32Array.of(1))).toBe('AACAPw==');
    expect(() => f32FromLE(new Uint8Array(3))).toThrow(/not a whole number of float32/);
  });

  it('base64 round-trips any float32 values bit for bit', () => {
    fc.assert(
      fc.property(fc.array(fc.float({ noDefaultInfinity: false })), (xs) => {
        const a = Float32Array.from(xs);
        expect(Buffer.from(f32FromBase64(f32ToBase64(a)).buffer)).toEqual(Buffer.from(a.buffer));
      }),
    );
  });

  it('decodes only the canonical spelling of the bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (bytes) => {
        const text = Buffer.from(bytes).toString('base64');
        expect(decodeBase64Strict(text)).toEqual(Buffer.from(bytes));
      }),
    );
    const clean = 'AACAPwAAAEA='; // 1, 2 as float32, one padding character
    const refusals: [string, RegExp][] = [
      ['AACAP!wAAAEA', /not canonical base64 at character 5/], // a junk character
      [`${clean}A`, /not padded to a multiple of 4/], // an extra trailing A
      ['AACAPwAAAEB=', /not canonical base64 at character 10/], // non-zero pad bits: same bytes as the clean text
      ['AACAPwAAAEA', /not padded/], // missing padding
      ['AACA PwAAAEA=', /not padded/],
      ['AACA\nPwAAAEA', /not canonical base64 at character 4/],
      ['AACAPwAAAE-_', /not canonical base64 at character 10/], // base64url is not base64
    ];
    for (const [text, msg] of refusals) {
      expect(() => decodeBase64Strict(text), text).toThrow(msg);
      expect(() => decodeBase64Strict(text)).toThrow(
        expect.objectContaining({ exitCode: ExitCode.invalidData, code: 'invalid_base64' }),
      );
    }
    expect(Array.from(f32FromBase64(clean))).toEqual([1, 2]);
    // Node alone would take the non-canonical spelling as the same bytes: the strict decoder exists because of that.
    expect(Buffer.from('AACAPwAAAEB=', 'base64')).toEqual(Buffer.from(clean, 'base64'));
  });

  it('checks canonical form past the first slice of a large tensor', () => {
    const big = f32ToBase64(new Float32Array(200_000).fill(0.25));
    expect(decodeBase64Strict(big).length).toBe(800_000);
    const at = 700_000;
    const bad = `${big.slice(0, at)}*${big.slice(at + 1)}`;
    expect(() => decodeBase64Strict(bad)).toThrow(`not canonical base64 at character ${at}`);
  });
});

describe('the tensor JSON shape', () => {
  it('is {name, shape, dtype: "F32", data: base64} and nothing else', () => {
    const t = { name: 'w', shape: [2], data: Float32Array.of(1, 2) };
    expect(tensorToJson(t)).toEqual({ name: 'w', shape: [2], dtype: 'F32', data: 'AACAPwAAAEA=' });
    expect(TensorJsonSchema.safeParse({ name: 'w', shape: [2], dtype: 'float32', data: '' }).success).toBe(false);
    expect(TensorJsonSchema.safeParse({ name: 'w', shape: [2], dtype: 'F32', data_b64: '' }).success).toBe(false);
    expect(TensorJsonSchema.safeParse({ ...tensorToJson(t), extra: 1 }).success).toBe(false);
    expect(Array.from(tensorFromJson(tensorToJson(t)).data)).toEqual([1, 2]);
  });

  it('refuses data that does not fill the shape, or a shape too large to exist', () => {
    expect(() => tensorFromJson({ name: 'w', shape: [3], dtype: 'F32', data: 'AACAPwAAAEA=' })).toThrow(
      /tensor "w" carries 8 bytes; shape \[3\] of float32 needs 12/,
    );
    expect(() => tensorFromJson({ name: 'w', shape: [2 ** 53 - 1, 2], dtype: 'F32', data: '' })).toThrow(
      /not a valid shape/,
    );
  });
});

describe('shapes and norms', () => {
  it('checkedNumel refuses shapes whose size is not a safe integer', () => {
    expect(checkedNumel([2, 3, 4])).toBe(24);
    expect(checkedNumel([])).toBe(1);
    expect(checkedNumel([0, 2 ** 60])).toBe(0);
    expect(checkedNumel([2 ** 53 - 1])).toBe(2 ** 53 - 1);
    expect(checkedNumel([2 ** 53 - 1, 2])).toBeNull();
    expect(checkedNumel(Array(8).fill(65536))).toBeNull();
    expect(checkedNumel([1.5])).toBeNull();
    expect(checkedNumel([-1])).toBeNull();
    expect(checkedNumel([4], 3)).toBeNull();
  });

  it('the L2 norm never overflows: values near the float64 limit give the exact norm', () => {
    expect(l2Norm([Float64Array.of(3e300, 4e300)])).toBeCloseTo(5e300, -290);
    expect(l2Norm([Float64Array.of(1e308), Float64Array.of(1e308)]) / 1e308).toBeCloseTo(Math.SQRT2, 12);
    expect(globalL2([{ data: Float32Array.of(3.4e38, 3.4e38) }]) / 3.4e38).toBeCloseTo(Math.SQRT2, 6);
    expect(l2Norm([Float64Array.of(Infinity, 1)])).toBe(Infinity);
    expect(l2Norm([Float64Array.of(NaN, 1e308, 1e308)])).toBeNaN();
    expect(l2Norm([Float32Array.of(3, 4)])).toBe(5);
  });
});

describe('dense linear algebra', () => {
  it('matmul, transpose and solve on small matrices computed by hand', () => {
    const A = matrix(2, 3, [1, 2, 3, 4, 5, 6]);
    const B = matrix(3, 2, [7, 8, 9, 10, 11, 12]);
    expect(toNested(matmul(A, B))).toEqual([
      [58, 64],
      [139, 154],
    ]);
    expect(toNested(matmul(A, A, false, true))).toEqual([
      [14, 32],
      [32, 77],
    ]);
    expect(toNested(transpose(A))).toEqual([
      [1, 4],
      [2, 5],
      [3, 6],
    ]);
    // [[0, 2], [3, 1]] x = [4, 5] needs a pivot swap: x = [1, 2]
    const x = solve(matrix(2, 2, [0, 2, 3, 1]), matrix(2, 1, [4, 5]));
    expect(Array.from(x?.data ?? [])).toEqual([1, 2]);
    expect(solve(matrix(2, 2, [1, 2, 2, 4]), matrix(2, 1, [1, 1]))).toBeNull();
  });
});
