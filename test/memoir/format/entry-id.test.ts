import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ULID_RE, ulidGenerator, ulidTime } from '../../../src/memoir/format/entry-id.js';

/**
 * The byte-wise ULID generator that `ulidGenerator` replaced (for speed), kept as the reference:
 * for any clock and random source the two must produce the same ids.
 */
const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
function referenceGenerator(now: () => number, random: (n: number) => Uint8Array): () => string {
  const time = (ms: number): string => {
    let s = '';
    for (let i = 0, t = ms; i < 10; i++, t = Math.floor(t / 32)) s = CROCKFORD[t % 32] + s;
    return s;
  };
  const rand = (b: Uint8Array): string => {
    let bits = '';
    for (const x of b) bits += x.toString(2).padStart(8, '0');
    let s = '';
    for (let i = 0; i < 80; i += 5) s += CROCKFORD[parseInt(bits.slice(i, i + 5), 2)];
    return s;
  };
  let lastMs = -1;
  let last = new Uint8Array(10);
  return () => {
    let ms = now();
    if (ms <= lastMs) {
      ms = lastMs;
      last = Uint8Array.from(last);
      let i = 9;
      for (; i >= 0; i--) {
        last[i] = ((last[i] as number) + 1) & 0xff;
        if (last[i] !== 0) break;
      }
      if (i < 0) throw new RangeError('overflow');
    } else {
      lastMs = ms;
      last = Uint8Array.from(random(10));
    }
    return time(ms) + rand(last);
  };
}

describe('ulidGenerator', () => {
  it('writes the same ids as the byte-wise reference, for any clock and random bytes (property)', () => {
    const byte = fc.integer({ min: 0, max: 255 });
    // Random bytes near the carry boundaries (0xff runs) as well as anywhere.
    const bytes = fc.oneof(
      fc.uint8Array({ minLength: 10, maxLength: 10 }),
      fc.array(fc.constantFrom(0, 254, 255), { minLength: 10, maxLength: 10 }).map((a) => Uint8Array.from(a)),
      fc.array(byte, { minLength: 10, maxLength: 10 }).map((a) => Uint8Array.from(a)),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 2 ** 48 - 1 }), bytes), { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 0, max: 300 }),
        (steps, extra) => {
          // A clock that stays, goes back or moves on, step by step; then `extra` ids in one millisecond.
          let i = 0;
          const clock = () => (steps[Math.min(i, steps.length - 1)] as [number, Uint8Array])[0];
          const rnd = () => (steps[Math.min(i, steps.length - 1)] as [number, Uint8Array])[1];
          const a = ulidGenerator(clock, rnd);
          const b = referenceGenerator(clock, rnd);
          // Both refuse the same call once the random part would overflow within a millisecond.
          const same = (): boolean => {
            const run = (f: () => string): string => {
              try {
                return f();
              } catch (e) {
                expect(e).toBeInstanceOf(RangeError);
                return 'overflow';
              }
            };
            const got = run(() => a.next());
            expect(got).toBe(run(b));
            return got !== 'overflow';
          };
          for (; i < steps.length; i++) if (!same()) return;
          for (let k = 0; k < extra; k++) if (!same()) return;
        },
      ),
      { numRuns: 500 },
    );
  });

  it('ids of one generator sort in creation order, also within a millisecond and across a carry', () => {
    const g = ulidGenerator(
      () => Date.UTC(2026, 10, 23),
      () => Uint8Array.from([0, 0, 0, 0, 0, 255, 255, 255, 255, 250]),
    );
    const ids = Array.from({ length: 20 }, () => g.next());
    for (const id of ids) expect(id).toMatch(ULID_RE);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(20);
    expect(ulidTime(ids[19] as string)).toBe(Date.UTC(2026, 10, 23));
  });

  it('refuses to wrap around when all 80 random bits overflow within one millisecond', () => {
    const g = ulidGenerator(
      () => 5,
      () => new Uint8Array(10).fill(255),
    );
    expect(g.next()).toMatch(/Z{16}$/);
    expect(() => g.next()).toThrow(RangeError);
  });
});
