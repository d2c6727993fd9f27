import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { GaussianSampler } from '../../src/privacy/gaussian-noise.js';
import {
  buildRelease,
  COUNCIL_RELEASE_FORMAT,
  parseStoredRelease,
  releaseFromSafetensors,
  releaseJson,
  releaseToSafetensors,
} from '../../src/privacy/release.js';
import { readSafetensors, writeSafetensors } from '../../src/tensor/safetensors.js';

const FP = 'sha256:test-base';
const mechanism = { name: 'gaussian', clip_norm: 1, noise_multiplier: 8, sample_rate: 1, accountant: 'rdp' };

describe('release documents stored by earlier versions', () => {
  it('a version-1 document (dtype "float32", data_b64) reads as the current shape with the same values and the given base', () => {
    const v1 = {
      format: 'kourai.council-release/1',
      round: '3',
      agent: 'metis',
      mechanism,
      tensors: [{ name: 'a', shape: [1], dtype: 'float32', data_b64: 'AACAPw==' }],
    };
    expect(parseStoredRelease(v1, { baseFingerprint: FP })).toEqual({
      format: COUNCIL_RELEASE_FORMAT,
      round: '3',
      agent: 'metis',
      base_fingerprint: FP,
      mechanism,
      tensors: [{ name: 'a', shape: [1], dtype: 'F32', data: 'AACAPw==' }],
    });
    expect(COUNCIL_RELEASE_FORMAT).toBe('kourai.council-release/3');
  });

  it('a version-2 document gains the base fingerprint, nothing else changes', () => {
    const v2 = {
      format: 'kourai.council-release/2',
      round: '3',
      agent: 'metis',
      mechanism,
      tensors: [{ name: 'a', shape: [1], dtype: 'F32', data: 'AACAPw==' }],
    };
    expect(parseStoredRelease(v2, { baseFingerprint: FP })).toEqual({
      ...v2,
      format: COUNCIL_RELEASE_FORMAT,
      base_fingerprint: FP,
    });
    expect(() => parseStoredRelease(v2)).toThrow(); // without a fingerprint it cannot be sent
  });

  it('anything else malformed is refused', () => {
    expect(() =>
      parseStoredRelease(
        {
          format: 'kourai.council-release/1',
          round: '3',
          agent: 'metis',
          mechanism,
          tensors: [{ name: 'a', shape: [1], dtype: 'float64', data_b64: '' }],
        },
        { baseFingerprint: FP },
      ),
    ).toThrow();
    expect(() =>
      parseStoredRelease({
        format: COUNCIL_RELEASE_FORMAT,
        round: '3',
        agent: 'metis',
        base_fingerprint: FP,
        mechanism,
        tensors: [{ name: 'a', shape: [1], dtype: 'float32', data_b64: 'AACAPw==' }],
      }),
    ).toThrow();
  });
});

describe('the safetensors form of a release', () => {
  const built = buildRelease({
    round: 'c0123456789abcde#4',
    agent: 'aidos',
    baseFingerprint: FP,
    delta: [
      { name: 'x.lora_A.weight', shape: [2, 3], data: Float32Array.of(1, 2, 3, 4, 5, 6) },
      { name: 'x.lora_B.weight', shape: [3, 2], data: Float32Array.of(-1, 0, 1, 0.5, 0.25, 2) },
    ],
    clipNorm: 1,
    noiseMultiplier: 2,
    sampler: new GaussianSampler(randomBytes),
  }).release;

  it('decodes to the same document (and the same JSON bytes)', () => {
    const bytes = releaseToSafetensors(built);
    expect(releaseJson(releaseFromSafetensors(bytes))).toBe(releaseJson(built));
    // the tensors are raw float32, in document order; the envelope is the only metadata
    const st = readSafetensors(bytes);
    expect(st.tensors.map((t) => [t.name, t.shape])).toEqual(built.tensors.map((t) => [t.name, t.shape]));
    expect(Object.keys(st.metadata)).toEqual(['kourai.release']);
    expect(JSON.parse(st.metadata['kourai.release'] as string)).not.toHaveProperty('tensors');
  });

  it('is about three quarters of the JSON size for an adapter-sized release (no base64)', () => {
    const n = 131_072;
    const big = buildRelease({
      round: '1',
      agent: 'metis',
      baseFingerprint: FP,
      delta: [{ name: 'w', shape: [n], data: new Float32Array(n).fill(0.001) }],
      clipNorm: 1,
      noiseMultiplier: 1,
      sampler: new GaussianSampler(randomBytes),
    }).release;
    const ratio = releaseToSafetensors(big).byteLength / Buffer.byteLength(releaseJson(big));
    expect(ratio).toBeGreaterThan(0.74);
    expect(ratio).toBeLessThan(0.76);
  });

  it('refuses a body that is not exactly a release: extra metadata, no envelope, F64 tensors, bad fields', () => {
    const t = [{ name: 'w', shape: [1], data: Float32Array.of(1) }];
    const env = JSON.stringify({
      format: COUNCIL_RELEASE_FORMAT,
      round: '1',
      agent: 'aidos',
      base_fingerprint: FP,
      mechanism,
    });
    expect(() => releaseFromSafetensors(writeSafetensors(t, { 'kourai.release': env, note: 'hi' }))).toThrow(
      /nothing but "kourai.release"/,
    );
    expect(() => releaseFromSafetensors(writeSafetensors(t, {}))).toThrow(/no "kourai.release" envelope/);
    expect(() =>
      releaseFromSafetensors(
        writeSafetensors([{ name: 'w', shape: [1], data: Float64Array.of(1) }], { 'kourai.release': env }),
      ),
    ).toThrow(/F32 tensors only/);
    expect(() =>
      releaseFromSafetensors(writeSafetensors(t, { 'kourai.release': env.replace('aidos', 'cupid') })),
    ).toThrow(/not a valid release: agent/);
    expect(() => releaseFromSafetensors(writeSafetensors(t, { 'kourai.release': '{' }))).toThrow(/not valid JSON/);
    expect(() => releaseFromSafetensors(Buffer.from('junk'))).toThrow(/truncated/);
  });
});
