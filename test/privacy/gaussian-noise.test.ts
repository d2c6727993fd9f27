import { createHash, randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GaussianSampler } from '../../src/privacy/gaussian-noise.js';
import { ndtr } from '../../src/privacy/log-math.js';

/**
 * Empirical distribution of the noise on N = 2,000,000 draws from node:crypto. Every tolerance
 * is 6 standard errors of its statistic, so a correct sampler fails a check with probability
 * about 2e-9 per check; a sampler off by a visible amount (a wrong variance, a missing tail)
 * fails with certainty.
 */
const N = 2_000_000;
const Z = 6;

describe('Gaussian noise from node:crypto', () => {
  const draws = new Float64Array(N);
  new GaussianSampler(randomBytes).fill(draws);

  it('has mean 0 and variance 1', () => {
    let s = 0;
    for (const x of draws) s += x;
    const mean = s / N;
    let ss = 0;
    let s4 = 0;
    for (const x of draws) {
      ss += (x - mean) ** 2;
      s4 += x ** 4;
    }
    const variance = ss / (N - 1);
    expect(Math.abs(mean)).toBeLessThan(Z / Math.sqrt(N)); // SE of the mean: 1/sqrt(N)
    expect(Math.abs(variance - 1)).toBeLessThan(Z * Math.sqrt(2 / N)); // SE of s²: sqrt(2/N)
    expect(Math.abs(s4 / N - 3)).toBeLessThan(Z * Math.sqrt(96 / N)); // E z⁴ = 3, Var z⁴ = 105 - 9
  });

  it.each([1, 2, 3, 4])('puts the right mass beyond %i σ (two-sided)', (k) => {
    const p = 2 * ndtr(-k);
    let n = 0;
    for (const x of draws) if (Math.abs(x) > k) n++;
    const se = Math.sqrt((p * (1 - p)) / N);
    expect(Math.abs(n / N - p), `observed ${n / N}, expected ${p}`).toBeLessThan(Z * se);
  });

  it('is symmetric: as many draws above +2σ as below -2σ', () => {
    let hi = 0;
    let lo = 0;
    for (const x of draws) {
      if (x > 2) hi++;
      else if (x < -2) lo++;
    }
    // hi - lo has mean 0 and variance about hi + lo
    expect(Math.abs(hi - lo)).toBeLessThan(Z * Math.sqrt(hi + lo));
  });

  it('passes a Kolmogorov–Smirnov test against N(0, 1)', () => {
    const sorted = Float64Array.from(draws.subarray(0, 500_000)).sort();
    let d = 0;
    for (let i = 0; i < sorted.length; i++) {
      const f = ndtr(sorted[i] as number);
      d = Math.max(d, Math.abs(f - i / sorted.length), Math.abs((i + 1) / sorted.length - f));
    }
    // P(D > c) ≈ 2 exp(-2 n c²): c for 1e-9
    const c = Math.sqrt(-Math.log(1e-9 / 2) / (2 * sorted.length));
    expect(d).toBeLessThan(c);
  });

  it('scales by the standard deviation and adds in place', () => {
    const s = new GaussianSampler(randomBytes);
    const data = new Float32Array(200_000).fill(5);
    s.addTo(data, 3);
    let m = 0;
    for (const x of data) m += x;
    m /= data.length;
    let v = 0;
    for (const x of data) v += (x - m) ** 2;
    v /= data.length - 1;
    expect(Math.abs(m - 5)).toBeLessThan((Z * 3) / Math.sqrt(data.length));
    expect(Math.abs(v / 9 - 1)).toBeLessThan(Z * Math.sqrt(2 / data.length));
  });
});

describe('the sampler uses only its byte source', () => {
  afterEach(() => vi.restoreAllMocks());

  it('never calls Math.random', () => {
    const spy = vi.spyOn(Math, 'random').mockImplementation(() => {
      throw new Error('Math.random must not be used for privacy noise');
    });
    const s = new GaussianSampler(randomBytes);
    const out = new Float64Array(10_000);
    s.fill(out);
    expect(spy).not.toHaveBeenCalled();
    expect(out.some((x) => x !== 0)).toBe(true);
  });

  it('is a pure function of the bytes it is given (a counter-mode stream reproduces it)', () => {
    const stream = (): ((n: number) => Buffer) => {
      let counter = 0;
      return (n) => {
        const parts: Buffer[] = [];
        let len = 0;
        while (len < n) {
          const b = createHash('sha256').update(String(counter++)).digest();
          parts.push(b);
          len += b.length;
        }
        return Buffer.concat(parts).subarray(0, n);
      };
    };
    const a = new Float64Array(1000);
    const b = new Float64Array(1000);
    new GaussianSampler(stream(), { blockBytes: 1024 }).fill(a);
    new GaussianSampler(stream(), { blockBytes: 1024 }).fill(b);
    expect(Array.from(a)).toEqual(Array.from(b));
  });

  it('draws uniforms with 53 bits in [0, 1)', () => {
    expect(new GaussianSampler((n) => Buffer.alloc(n, 0xff)).uniform()).toBe(1 - 2 ** -53);
    expect(new GaussianSampler((n) => Buffer.alloc(n, 0)).uniform()).toBe(0);
    const s = new GaussianSampler(randomBytes);
    let odd = 0;
    for (let i = 0; i < 10_000; i++) {
      const u = s.uniform();
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
      if ((u * 2 ** 53) % 2 === 1) odd++; // the lowest of the 53 bits is random too
    }
    expect(odd).toBeGreaterThan(4000);
    expect(odd).toBeLessThan(6000);
  });
});
