import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { pyFloat } from '../../../src/memoir/format/python-json.js';

const fixture = JSON.parse(
  readFileSync(new URL('../../fixtures/memoir/pydantic-floats.json', import.meta.url), 'utf8'),
) as { bits: string; pydantic: string }[];

function fromBits(hex: string): number {
  return Buffer.from(hex, 'hex').readDoubleLE(0);
}

describe('pyFloat: floats exactly as pydantic model_dump_json writes them', () => {
  it(`matches pydantic on ${fixture.length} recorded values (edge cases and random bit patterns)`, () => {
    const mismatches = fixture.filter((f) => pyFloat(fromBits(f.bits)) !== f.pydantic);
    expect(
      mismatches
        .slice(0, 5)
        .map((f) => ({ value: fromBits(f.bits), ours: pyFloat(fromBits(f.bits)), pydantic: f.pydantic })),
    ).toEqual([]);
  });

  it('writes the documented shapes', () => {
    expect(pyFloat(0)).toBe('0.0');
    expect(pyFloat(-0)).toBe('-0.0');
    expect(pyFloat(1)).toBe('1.0');
    expect(pyFloat(1e-7)).toBe('1e-7');
    expect(pyFloat(1e16)).toBe('1e+16');
    expect(pyFloat(1e15)).toBe('1000000000000000.0');
    expect(pyFloat(0.00001)).toBe('0.00001');
    expect(pyFloat(-0.051803)).toBe('-0.051803');
  });

  it('always round-trips and always carries a decimal point or an exponent', () => {
    fc.assert(
      fc.property(fc.double({ noNaN: true, noDefaultInfinity: true }), (x) => {
        const s = pyFloat(x);
        expect(Object.is(Number(s), x)).toBe(true);
        expect(/[.e]/.test(s)).toBe(true);
      }),
    );
  });

  it('refuses NaN and Infinity, which JSON cannot carry', () => {
    expect(() => pyFloat(Number.NaN)).toThrow(RangeError);
    expect(() => pyFloat(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});
