import { describe, expect, it } from 'vitest';
import { craftUpdate, flipLabels, type CraftInput } from '../../src/simulation/attacks.js';
import { mulberry32 } from '../../src/runtime/seeded-random.js';
import type { Example } from '../../src/train/examples/types.js';

const dim = 64;
function vec(seed: number, scale = 1): Float64Array {
  const r = mulberry32(seed);
  return Float64Array.from({ length: dim }, () => (r() - 0.3) * scale);
}
const dot = (a: ArrayLike<number>, b: ArrayLike<number>): number => {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += (a[i] as number) * (b[i] as number);
  return s;
};
// Independent of the module under test: a wrong norm/mean there must not pass its own checks.
const norm = (v: ArrayLike<number>): number => Math.sqrt(dot(v, v));
const capNorm = (v: Float64Array, s: number): Float64Array => {
  const n = norm(v);
  return n <= s ? Float64Array.from(v) : v.map((x) => (x * s) / n);
};
const mean = (vs: readonly ArrayLike<number>[], d: number): Float64Array => {
  const m = new Float64Array(d);
  for (const v of vs) for (let i = 0; i < d; i++) m[i] = (m[i] as number) + (v[i] as number) / vs.length;
  return m;
};
function input(over: Partial<CraftInput>): CraftInput {
  const honest = [1, 2, 3, 4].map((s) => capNorm(vec(s), 1));
  const r = mulberry32(9);
  return {
    attack: 'sign-flip',
    own: vec(11, 3),
    poisoned: vec(12, 3),
    honest,
    forges: 5,
    byzantine: 1,
    clipNorm: 1,
    bound: 40,
    normal: () => r() * 2 - 1,
    ...over,
  };
}

describe('crafted updates stay within what the council accepts and do what they are named for', () => {
  it('sign-flip: the negation of the clipped honest update', () => {
    const x = input({ attack: 'sign-flip' });
    const v = craftUpdate(x, dim);
    const clipped = capNorm(x.own as Float64Array, 1);
    expect(norm(v)).toBeLessThanOrEqual(1);
    expect(dot(v, clipped) / (norm(v) * norm(clipped))).toBeCloseTo(-1, 9);
  });

  it('scale: the poisoned update boosted N× until the norm bound', () => {
    const x = input({ attack: 'scale', bound: 5 });
    const v = craftUpdate(x, dim);
    expect(norm(v)).toBeLessThanOrEqual(5);
    expect(norm(v)).toBeGreaterThan(4.99);
    expect(dot(v, x.poisoned as Float64Array) / (norm(v) * norm(x.poisoned as Float64Array))).toBeCloseTo(1, 9);
    const small = craftUpdate({ ...x, poisoned: capNorm(vec(12), 0.1), bound: 1000 }, dim);
    expect(norm(small)).toBeCloseTo(0.1 * 5, 9);
  });

  it('noise: as large as the bound allows', () => {
    const v = craftUpdate(input({ attack: 'noise', bound: 7 }), dim);
    expect(norm(v)).toBeLessThanOrEqual(7);
    expect(norm(v)).toBeGreaterThan(6.99);
  });

  it('collude: every attacker sends the same vector, the negated honest mean at norm S', () => {
    const x = input({ attack: 'collude' });
    const a = craftUpdate(x, dim);
    const b = craftUpdate(x, dim);
    expect([...a]).toEqual([...b]);
    expect(norm(a)).toBeCloseTo(1, 4);
    const mu = mean(x.honest, dim);
    expect(dot(a, mu) / (norm(a) * norm(mu))).toBeCloseTo(-1, 9);
  });

  it('ipm: with a loose bound the plain mean of honest and attacking updates turns against the honest direction', () => {
    const x = input({
      attack: 'ipm',
      bound: 1000,
      forges: 10,
      byzantine: 2,
      honest: [1, 2, 3, 4, 5, 6, 7, 8].map((s) => capNorm(vec(s), 1)),
    });
    const v = craftUpdate(x, dim);
    const mu = mean(x.honest, dim);
    const all = mean([...x.honest, v, v], dim);
    expect(dot(all, mu)).toBeLessThan(0);
    // −(N − f)/N · μ exactly
    for (let i = 0; i < dim; i++) expect(all[i]).toBeCloseTo(-(8 / 10) * (mu[i] as number), 9);
  });
});

describe('label flipping reverses every label and keeps the entries', () => {
  it('pairs swap sides, binaries flip, graded targets mirror, routes move on', () => {
    const base = { agent: 'techne' as const, entryId: 'e', scene: 's', weight: 1, taskType: null };
    const ex: Example[] = [
      { ...base, kind: 'pair', chosen: 'a', rejected: 'b', chosenBy: 'choice' },
      { ...base, kind: 'binary', text: 't', label: 1 },
      { ...base, kind: 'graded', text: 'g', target: 0.25 },
      { ...base, agent: 'hephaestus', kind: 'route', text: 'r', label: 'metis' },
    ];
    const out = flipLabels(ex, ['metis', 'techne']);
    expect(out).toEqual([
      { ...base, kind: 'pair', chosen: 'b', rejected: 'a', chosenBy: 'choice' },
      { ...base, kind: 'binary', text: 't', label: 0 },
      { ...base, kind: 'graded', text: 'g', target: 0.75 },
      { ...base, agent: 'hephaestus', kind: 'route', text: 'r', label: 'techne' },
    ]);
  });
});
