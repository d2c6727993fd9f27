import { describe, expect, it } from 'vitest';
import { BaseModel } from '../../src/train/base-model.js';
import { builtinBaseSpec, inputBlocks } from '../../src/train/base-spec.js';
import { inputEncoder } from '../../src/train/encoder/inputs.js';
import { wordFeatures } from '../../src/train/encoder/words.js';
import type { Features } from '../../src/train/features.js';

const norm = (f: Features): number => Math.sqrt(f.val.reduce((a, v) => a + v * v, 0));

describe('the word block', () => {
  it('is binary and case-blind: a word said twice or in capitals is the same input', () => {
    const a = wordFeatures('I cannot help with that request.', 1 << 13);
    const b = wordFeatures('I CANNOT help with that request, I cannot.', 1 << 13);
    expect(Array.from(b.idx)).toEqual(Array.from(a.idx));
    expect(Array.from(b.val)).toEqual(Array.from(a.val));
    expect(norm(a)).toBeCloseTo(1, 12);
  });

  it('keeps word identity that the n-gram block reduces to a shape', () => {
    const a = wordFeatures('kitten', 1 << 13);
    const b = wordFeatures('weapon', 1 << 13);
    expect(a.idx.length).toBe(1);
    expect(Array.from(a.idx)).not.toEqual(Array.from(b.idx));
    expect(wordFeatures('', 1 << 13).idx.length).toBe(0);
  });

  it('sits after the other blocks of x, ascending, and the frozen projection does not read it', () => {
    const spec = builtinBaseSpec();
    const { words, end } = inputBlocks(spec);
    const enc = inputEncoder(spec);
    const x = enc('Sure, here is how to bake bread.', 'How do I bake bread?');
    for (let k = 1; k < x.idx.length; k++) expect(x.idx[k]).toBeGreaterThan(x.idx[k - 1] as number);
    const tail = Array.from(x.idx).filter((j) => j >= words);
    expect(tail.length).toBeGreaterThan(0);
    expect(Math.max(...tail)).toBeLessThan(end);
    const n = x.idx.length - tail.length;
    const base = new BaseModel(spec);
    const full = new Float64Array(spec.hidden);
    const without = new Float64Array(spec.hidden);
    base.project(x, full);
    base.project({ idx: x.idx.slice(0, n), val: x.val.slice(0, n) }, without);
    expect(Array.from(full)).toEqual(Array.from(without));
    expect(Array.from(base.column(words)).every((v) => v === 0)).toBe(true);
  });
});
