import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { f32FromBase64 as fromBase64F32 } from '../../src/tensor/float-codec.js';
import type { NamedTensor } from '../../src/tensor/tensor.js';
import { GaussianSampler } from '../../src/privacy/gaussian-noise.js';
import { buildRelease, CouncilReleaseSchema, RELEASE_FIELDS } from '../../src/privacy/release.js';

const delta = (n: number, v: number): NamedTensor[] => [
  { name: 'layers.0.lora_A', shape: [n], data: new Float32Array(n).fill(v) },
  { name: 'layers.0.lora_B', shape: [n], data: new Float32Array(n).fill(-v) },
];

function leafPaths(v: unknown, prefix = ''): string[] {
  if (Array.isArray(v)) return v.length && typeof v[0] === 'object' ? leafPaths(v[0], `${prefix}[]`) : [prefix];
  if (v && typeof v === 'object')
    return Object.entries(v).flatMap(([k, x]) => leafPaths(x, prefix ? `${prefix}.${k}` : k));
  return [prefix];
}

describe('the release document (exactly what may leave)', () => {
  const built = buildRelease({
    round: '7',
    agent: 'aidos',
    baseFingerprint: 'sha256:test-base',
    delta: delta(50_000, 0.01),
    clipNorm: 0.5,
    noiseMultiplier: 2,
    sampler: new GaussianSampler(randomBytes),
  });

  // The README's table "What leaves the forge", written out by hand: the oracle is the documented
  // promise, not RELEASE_FIELDS from the module under test.
  const DOCUMENTED = [
    'format',
    'round',
    'agent',
    'base_fingerprint',
    'mechanism.name',
    'mechanism.clip_norm',
    'mechanism.noise_multiplier',
    'mechanism.sample_rate',
    'mechanism.accountant',
    'tensors[].name',
    'tensors[].shape',
    'tensors[].dtype',
    'tensors[].data',
  ];

  it('validates against the strict schema and carries exactly the documented fields', () => {
    expect(CouncilReleaseSchema.parse(built.release)).toEqual(built.release);
    expect(leafPaths(built.release).sort()).toEqual([...DOCUMENTED].sort());
    expect(built.release.format).toBe('kourai.council-release/3');
    expect(built.release.base_fingerprint).toBe('sha256:test-base');
    expect(built.release.round).toBe('7');
    expect(built.release.agent).toBe('aidos');
  });

  it('the strict schema refuses any field beyond the documented ones, at every level', () => {
    const t0 = built.release.tensors[0];
    expect(() => CouncilReleaseSchema.parse({ ...built.release, loss: 0.1 })).toThrow();
    expect(() =>
      CouncilReleaseSchema.parse({ ...built.release, mechanism: { ...built.release.mechanism, examples: 12 } }),
    ).toThrow();
    expect(() => CouncilReleaseSchema.parse({ ...built.release, tensors: [{ ...t0, norm: 1 }] })).toThrow();
  });

  it('every field the document carries is explained in RELEASE_FIELDS (what the docs are written from)', () => {
    expect(RELEASE_FIELDS.map((f) => f.field).sort()).toEqual([...DOCUMENTED].sort());
  });

  it('carries no counts, losses, norms or timestamps', () => {
    for (const path of leafPaths(built.release))
      expect(path).not.toMatch(
        /(^|[._])(count|counts|n_examples|examples|entries|loss|losses|time|timing|duration|[a-z]+_at|norm_before|released_norm|clipped_norm)$/i,
      );
    expect(() => CouncilReleaseSchema.parse({ ...built.release, examples: 12 })).toThrow();
  });

  it('is the clipped delta plus N(0, σ²S²) noise, all tensors clipped together', () => {
    // ||Δ|| = 0.01 * sqrt(100000) ≈ 3.16 > S = 0.5: scaled by 0.5 / 3.16; each coordinate ±0.0016
    expect(built.local.clipped).toBe(true);
    expect(built.local.clippedNorm).toBeLessThanOrEqual(0.5);
    const a = fromBase64F32(built.release.tensors[0]?.data ?? '');
    const b = fromBase64F32(built.release.tensors[1]?.data ?? '');
    const signal = 0.5 / Math.sqrt(100_000);
    let meanA = 0;
    let varA = 0;
    for (const x of a) meanA += x;
    meanA /= a.length;
    for (const x of a) varA += (x - meanA) ** 2;
    varA /= a.length - 1;
    let meanB = 0;
    for (const x of b) meanB += x;
    meanB /= b.length;
    const se = (2 * 0.5) / Math.sqrt(a.length); // σS / sqrt(n)
    expect(Math.abs(meanA - signal)).toBeLessThan(6 * se);
    expect(Math.abs(meanB + signal)).toBeLessThan(6 * se);
    expect(Math.abs(varA / (2 * 0.5) ** 2 - 1)).toBeLessThan(6 * Math.sqrt(2 / a.length));
    expect(built.release.mechanism).toEqual({
      name: 'gaussian',
      clip_norm: 0.5,
      noise_multiplier: 2,
      sample_rate: 1,
      accountant: 'rdp',
    });
    expect(built.release.tensors.map((t) => [t.name, t.shape, t.dtype])).toEqual([
      ['layers.0.lora_A', [50_000], 'F32'],
      ['layers.0.lora_B', [50_000], 'F32'],
    ]);
  });
});
