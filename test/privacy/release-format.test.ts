import { describe, expect, it } from 'vitest';
import { COUNCIL_RELEASE_FORMAT, parseStoredRelease } from '../../src/privacy/release.js';

describe('release documents stored by earlier versions', () => {
  const mechanism = { name: 'gaussian', clip_norm: 1, noise_multiplier: 8, sample_rate: 1, accountant: 'rdp' };

  it('a version-1 document (dtype "float32", data_b64) reads as the current shape with the same values', () => {
    const v1 = { format: 'kourai.council-release/1', round: '3', agent: 'metis', mechanism, tensors: [{ name: 'a', shape: [1], dtype: 'float32', data_b64: 'AACAPw==' }] };
    expect(parseStoredRelease(v1)).toEqual({ ...v1, format: COUNCIL_RELEASE_FORMAT, tensors: [{ name: 'a', shape: [1], dtype: 'F32', data: 'AACAPw==' }] });
    expect(COUNCIL_RELEASE_FORMAT).toBe('kourai.council-release/2');
  });

  it('anything else malformed is refused', () => {
    expect(() => parseStoredRelease({ format: 'kourai.council-release/1', round: '3', agent: 'metis', mechanism, tensors: [{ name: 'a', shape: [1], dtype: 'float64', data_b64: '' }] })).toThrow();
    expect(() => parseStoredRelease({ format: COUNCIL_RELEASE_FORMAT, round: '3', agent: 'metis', mechanism, tensors: [{ name: 'a', shape: [1], dtype: 'float32', data_b64: 'AACAPw==' }] })).toThrow();
  });
});
