import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { krum, multiKrum } from '../../src/aggregation/krum.js';
import { layoutOf } from '../../src/tensor/layout.js';
import { aggregateUpdates, inMemorySource } from '../../src/aggregation/strategy.js';

/**
 * Exactly tied Krum scores (krum-ties.json, written by make-krum-ties.py with NumPy): Krum must pick
 * the first of the tied updates, as Flower's np.argmin does, and Multi-Krum must cut a tie by the
 * lower index. The property tests exclude ties, so only a fixture like this one guards the rule.
 */
interface Ties {
  n: number;
  f: number;
  m: number;
  inputs: number[][];
  krum_neighbours: number;
  krum_scores: number[];
  krum_index: number;
  multikrum_indices: number[];
  multikrum_mean: number[];
}
const ref = JSON.parse(
  readFileSync(new URL('../fixtures/aggregation/krum-ties.json', import.meta.url), 'utf8'),
) as Ties;

describe('Krum on tied scores (krum-ties.json)', () => {
  const rows64 = ref.inputs.map((r) => Float64Array.from(r));
  const rows32 = ref.inputs.map((r) => Float32Array.from(r));

  it('the fixture really ties: five updates share the lowest score, and the first of them is not index 0', () => {
    const low = Math.min(...ref.krum_scores);
    expect(ref.krum_scores.filter((s) => s === low)).toHaveLength(5);
    expect(ref.krum_index).toBe(1);
    expect(ref.krum_scores.lastIndexOf(low)).toBe(6);
  });

  it.each([
    ['float64', rows64],
    ['float32', rows32],
  ])('Krum (%s) picks the first tied update, index 1, and says the choice was a tie', (_, rows) => {
    const r = krum(rows, ref.f);
    expect(r.neighbours).toBe(ref.krum_neighbours);
    expect(r.scores).toEqual(ref.krum_scores);
    expect(r.index).toBe(1);
    expect(r.tied).toBe(true);
    expect(Array.from(r.aggregate)).toEqual(ref.inputs[1]);
  });

  it('Multi-Krum (m=3) cuts the tie by the lower index: 1, 3, 4', () => {
    const r = multiKrum(rows64, ref.f, { m: ref.m });
    expect(r.indices).toEqual([1, 3, 4]);
    expect(r.indices).toEqual(ref.multikrum_indices);
    expect(r.tied).toBe(true);
    expect(Array.from(r.aggregate)).toEqual(ref.multikrum_mean);
  });

  it('the streaming driver (what the council runs) makes the same choices', () => {
    const src = inMemorySource(rows64, layoutOf([{ name: 'w', shape: [3] }]));
    expect(aggregateUpdates(src, { strategy: 'krum', f: ref.f }, { chunk: 2 }).used).toEqual([1]);
    expect(aggregateUpdates(src, { strategy: 'multikrum', f: ref.f, m: ref.m }, { chunk: 2 }).used).toEqual([1, 3, 4]);
  });
});
