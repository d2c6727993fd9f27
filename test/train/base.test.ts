import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { BaseModel } from '../../src/train/base-model.js';
import { builtinBaseSpec, embeddingsBaseSpec } from '../../src/train/base-spec.js';
import { counterBits, counterUniform } from '../../src/train/counter-random.js';
import { BUILTIN_FINGERPRINT, fingerprintOf } from '../../src/train/fingerprint.js';

describe('the frozen base', () => {
  it('regenerates the published fingerprint from the specification', () => {
    const base = new BaseModel(builtinBaseSpec());
    expect(base.computeFingerprint()).toBe(BUILTIN_FINGERPRINT);
    expect(fingerprintOf(new BaseModel(builtinBaseSpec()))).toBe(BUILTIN_FINGERPRINT);
  });

  it('a different specification has a different fingerprint (embeddings model and dimension count)', () => {
    const a = fingerprintOf(new BaseModel(embeddingsBaseSpec('nomic-embed-text', 32)));
    const b = fingerprintOf(new BaseModel(embeddingsBaseSpec('nomic-embed-text', 64)));
    const c = fingerprintOf(new BaseModel(embeddingsBaseSpec('all-minilm', 32)));
    expect(new Set([a, b, c, BUILTIN_FINGERPRINT]).size).toBe(4);
    expect(fingerprintOf(new BaseModel(embeddingsBaseSpec('all-minilm', 32)))).toBe(c);
  });

  it('columns made on demand, in any order, equal the generator', () => {
    const spec = builtinBaseSpec();
    const one = new BaseModel(spec);
    const two = new BaseModel(spec);
    const cols = [16383, 0, 77, 4096];
    for (const j of cols) one.column(j);
    for (const j of [...cols].reverse()) expect(Array.from(two.column(j))).toEqual(Array.from(one.column(j)));
    const H = spec.hidden;
    expect(one.column(77)[5]).toBe(
      Math.fround(spec.init.dense.scale * counterUniform(spec.seed, spec.init.dense.stream, 77 * H + 5)),
    );
  });

  it('the generator is the published arithmetic (an independent NumPy rendering agrees bit for bit)', () => {
    const py = `
import numpy as np
def fmix(h):
    h = h ^ (h >> np.uint32(16)); h = h * np.uint32(0x85ebca6b); h = h ^ (h >> np.uint32(13)); h = h * np.uint32(0xc2b2ae35); return h ^ (h >> np.uint32(16))
seed, stream = np.uint32(${builtinBaseSpec().seed}), np.uint32(1)
i = np.arange(0, 5000, dtype=np.uint32) * np.uint32(997)
with np.errstate(over='ignore'):
    h = fmix(seed ^ (stream * np.uint32(0x9e3779b1)))
    h = fmix(h ^ i)
    h = fmix(h + np.uint32(0x632be5ab))
print(' '.join(str(int(x)) for x in h))
`;
    const r = spawnSync('python3', ['-c', py], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(r.stderr);
    const want = r.stdout.trim().split(' ').map(Number);
    const got = want.map((_, k) => counterBits(builtinBaseSpec().seed, 1, k * 997));
    expect(got).toEqual(want);
  });
});
