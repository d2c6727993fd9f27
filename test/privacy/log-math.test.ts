import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { erfc, logAdd, logErfc, logNdtr, logSub, ndtr } from '../../src/privacy/log-math.js';

const mp = JSON.parse(readFileSync(new URL('../fixtures/privacy/log-erfc-mpmath.json', import.meta.url), 'utf8')) as {
  rows: { x: number; erfc: number; log_erfc: number }[];
};

describe('erfc and logErfc against mpmath (60 digits)', () => {
  it('erfc is within 1e-13 relative wherever it is representable', () => {
    for (const r of mp.rows) {
      const got = erfc(r.x);
      if (r.erfc === 0 || r.erfc < 1e-300) expect(got).toBeLessThan(1e-300);
      else expect(Math.abs(got - r.erfc) / r.erfc, `x = ${r.x}`).toBeLessThan(1e-13);
    }
  });

  it('logErfc is within 1e-13 relative (absolute near 0), including where erfc underflows', () => {
    for (const r of mp.rows) {
      const got = logErfc(r.x);
      const err =
        Math.abs(r.log_erfc) < 1e-3 ? Math.abs(got - r.log_erfc) : Math.abs(got - r.log_erfc) / Math.abs(r.log_erfc);
      expect(err, `x = ${r.x}`).toBeLessThan(1e-13);
    }
    expect(logErfc(1e4)).toBeCloseTo(-1e8 - 0.5 * Math.log(Math.PI) - Math.log(1e4), 6);
    expect(logErfc(Infinity)).toBe(-Infinity);
    expect(logErfc(-Infinity)).toBe(Math.LN2);
  });

  it('logNdtr and ndtr are the normal CDF', () => {
    expect(ndtr(0)).toBeCloseTo(0.5, 15);
    expect(ndtr(1.959963984540054)).toBeCloseTo(0.975, 14);
    expect(logNdtr(-40)).toBeCloseTo(-804.6084420137538, 9);
  });
});

describe('log-space add and sub', () => {
  it('logAdd(log a, log b) = log(a + b) and treats -Infinity as 0', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1e-100, max: 1e100, noNaN: true }),
        fc.double({ min: 1e-100, max: 1e100, noNaN: true }),
        (a, b) => {
          expect(logAdd(Math.log(a), Math.log(b))).toBeCloseTo(Math.log(a + b), 9);
        },
      ),
    );
    expect(logAdd(-Infinity, 3)).toBe(3);
    expect(logAdd(3, -Infinity)).toBe(3);
  });

  it('logSub(log a, log b) = log(a - b), -Infinity at equality, and refuses a negative result', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 1, max: 1e50, noNaN: true }),
        fc.double({ min: 0.01, max: 0.99, noNaN: true }),
        (a, f) => {
          const b = a * f;
          expect(logSub(Math.log(a), Math.log(b))).toBeCloseTo(Math.log(a - b), 8);
        },
      ),
    );
    expect(logSub(2, 2)).toBe(-Infinity);
    expect(logSub(2, -Infinity)).toBe(2);
    expect(logSub(1000, 1)).toBe(1000); // expm1 overflows: Opacus returns logx
    expect(() => logSub(1, 2)).toThrow(RangeError);
  });
});
