import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidDataError } from '../../src/errors.js';
import { globalL2, type NamedTensor } from '../../src/tensor/tensor.js';
import { checkTensors, clipToNorm } from '../../src/privacy/clip.js';

const tensorsArb = fc
  .array(
    fc.array(fc.float({ min: -1e4, max: 1e4, noNaN: true, noDefaultInfinity: true }), { minLength: 1, maxLength: 40 }),
    { minLength: 1, maxLength: 5 },
  )
  .map((arrs) =>
    arrs.map((a, i): NamedTensor => ({ name: `layer.${i}.lora_A`, shape: [a.length], data: Float32Array.from(a) })),
  );
const clipArb = fc.double({ min: 1e-3, max: 1e3, noNaN: true });

describe('clipping the whole delta to L2 norm S', () => {
  it('the clipped delta has norm <= S, whatever the input', () => {
    fc.assert(
      fc.property(tensorsArb, clipArb, (ts, s) => {
        const c = clipToNorm(ts, s);
        expect(globalL2(c.tensors)).toBeLessThanOrEqual(s);
        expect(c.normAfter).toBeLessThanOrEqual(s);
      }),
      { numRuns: 500 },
    );
  });

  it('preserves the direction: every coordinate is scaled by the same factor in [0, 1]', () => {
    fc.assert(
      fc.property(tensorsArb, clipArb, (ts, s) => {
        const c = clipToNorm(ts, s);
        expect(c.scale).toBeGreaterThan(0);
        expect(c.scale).toBeLessThanOrEqual(1);
        ts.forEach((t, k) => {
          const out = c.tensors[k] as NamedTensor;
          expect(out.name).toBe(t.name);
          expect(out.shape).toEqual(t.shape);
          for (let i = 0; i < t.data.length; i++) {
            expect(out.data[i]).toBe(Math.fround((t.data[i] as number) * c.scale));
          }
        });
        // cosine similarity 1 (up to float32 rounding)
        let dot = 0;
        ts.forEach((t, k) => t.data.forEach((v, i) => (dot += v * ((c.tensors[k] as NamedTensor).data[i] as number))));
        const n1 = globalL2(ts);
        const n2 = globalL2(c.tensors);
        if (n1 > 0 && n2 > 0) expect(dot / (n1 * n2)).toBeCloseTo(1, 5);
      }),
      { numRuns: 300 },
    );
  });

  it('is a no-op (an exact copy) at or below S', () => {
    fc.assert(
      fc.property(tensorsArb, (ts) => {
        const n = globalL2(ts);
        const c = clipToNorm(ts, n === 0 ? 1 : n * 1.5);
        expect(c.clipped).toBe(false);
        expect(c.scale).toBe(1);
        ts.forEach((t, k) => expect(Array.from((c.tensors[k] as NamedTensor).data)).toEqual(Array.from(t.data)));
        expect((c.tensors[0] as NamedTensor).data).not.toBe((ts[0] as NamedTensor).data); // a copy, input untouched
      }),
    );
  });

  it('clips all tensors together, not one by one', () => {
    const ts: NamedTensor[] = [
      { name: 'a', shape: [1], data: Float32Array.of(3) },
      { name: 'b', shape: [1], data: Float32Array.of(4) },
    ];
    const c = clipToNorm(ts, 1);
    expect(c.normBefore).toBe(5);
    expect(c.tensors[0]?.data[0]).toBeCloseTo(0.6, 6);
    expect(c.tensors[1]?.data[0]).toBeCloseTo(0.8, 6);
    expect(c.clipped).toBe(true);
  });

  it('refuses non-finite values, shape mismatches, duplicate names and S <= 0', () => {
    const ok: NamedTensor = { name: 'x', shape: [2], data: Float32Array.of(1, 2) };
    expect(() => checkTensors([{ ...ok, data: Float32Array.of(1, NaN) }])).toThrow(InvalidDataError);
    expect(() => checkTensors([{ ...ok, data: Float32Array.of(1, Infinity) }])).toThrow(/non-finite value at index 1/);
    expect(() => checkTensors([{ ...ok, shape: [3] }])).toThrow(/shape \[3\]/);
    expect(() => checkTensors([ok, ok])).toThrow(/appears twice/);
    expect(() => clipToNorm([ok], 0)).toThrow(RangeError);
    expect(() => clipToNorm([ok], -1)).toThrow(RangeError);
  });
});
