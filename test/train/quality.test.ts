import { describe, expect, it } from 'vitest';
import { BaseModel } from '../../src/train/base-model.js';
import { builtinBaseSpec } from '../../src/train/base-spec.js';
import { inputEncoder } from '../../src/train/encoder/inputs.js';
import type { Example } from '../../src/train/examples/types.js';
import { applied, Network } from '../../src/train/network.js';
import { DEFAULT_SETTINGS, train } from '../../src/train/trainer.js';
import { plantedExamples, plantedPairs, PREFERENCES, vocabularies } from './planted-fixture.js';

/**
 * The quality bar on the built-in base: a bond adapter learns a planted preference as a
 * pattern of form (≥ 90% on pairs made of words never seen in training), and with shuffled labels
 * the validation accuracy stays at chance (0.5 ± 0.07): nothing leaks from training into
 * validation. A deliberately leaky split (the same pairs in training and validation) is caught.
 */
const base = new BaseModel(builtinBaseSpec());
const enc = inputEncoder(base.spec);
const encode = (t: string) => enc(t, null);
const v = vocabularies();

function heldOutAccuracy(
  lora: Parameters<Network['forward']>[2][number]['lora'],
  pairs: { preferred: string; dispreferred: string }[],
): number {
  const net = new Network(base, 'score');
  const adapters = [applied(lora, DEFAULT_SETTINGS.alpha)];
  const ws = net.workspace(adapters);
  const z = new Float64Array(base.hidden);
  const score = (t: string): number => {
    const f = encode(t);
    base.project(f, z);
    return net.forward(f, z, adapters, ws)[0]!;
  };
  return pairs.filter((p) => score(p.preferred) > score(p.dispreferred)).length / pairs.length;
}

describe('planted preferences, unseen words', () => {
  for (const pref of Object.keys(PREFERENCES)) {
    it(`${pref}: ≥ 90% held-out pairwise accuracy`, { timeout: 120_000 }, () => {
      const examples = plantedExamples(pref, { seed: 3, n: 40, vocab: v.train });
      const out = train(base, encode, {
        agent: 'techne',
        kind: 'bond',
        examples,
        frozen: [],
        settings: DEFAULT_SETTINGS,
      });
      if (out.status !== 'trained') throw new Error(out.reason);
      const held = plantedPairs(pref, { seed: 99, n: 300, vocab: v.heldout });
      const heldWords = new Set(v.heldout);
      expect(v.train.some((w) => heldWords.has(w))).toBe(false);
      expect(heldOutAccuracy(out.lora, held)).toBeGreaterThanOrEqual(0.9);
    });
  }
});

describe('no leakage between training and validation', () => {
  /** Validation pairwise accuracy pooled over runs, as [hits, n]. */
  function pooledValidation(make: (seed: number) => Example[]): number {
    let hits = 0;
    let n = 0;
    for (const seed of [11, 12, 13, 14, 15, 16]) {
      // At most 12 epochs: with labels that carry nothing, the epoch kept comes early anyway.
      const out = train(base, encode, {
        agent: 'techne',
        kind: 'bond',
        examples: make(seed),
        frozen: [],
        settings: { ...DEFAULT_SETTINGS, epochs: 12, seed },
      });
      if (out.status !== 'trained') throw new Error(out.reason);
      const m = out.report.metrics.find((x) => x.kind === 'pair')!;
      hits += m.value * m.n;
      n += m.n;
    }
    expect(n).toBeGreaterThanOrEqual(200);
    return hits / n;
  }

  // CPU-bound (a dozen training runs): generous limits for a shared, loaded machine.
  it('shuffled labels: validation accuracy stays at chance (0.5 ± 0.07)', { timeout: 180_000 }, () => {
    const acc = pooledValidation((seed) =>
      plantedExamples(seed % 2 ? 'early_returns' : 'type_annotations', { seed, n: 260, vocab: v.train, shuffle: true }),
    );
    expect(Math.abs(acc - 0.5)).toBeLessThanOrEqual(0.07);
  });

  it(
    'the check has teeth: the same shuffled pairs in training and validation scenes score far above chance',
    { timeout: 180_000 },
    () => {
      const leaky = (seed: number): Example[] => {
        const ex = plantedExamples(seed % 2 ? 'early_returns' : 'type_annotations', {
          seed,
          n: 260,
          vocab: v.train,
          shuffle: true,
        });
        // Every pair also appears in a scene of its own: duplicates straddle training and validation.
        return [...ex, ...ex.map((e, i) => ({ ...e, entryId: `${e.entryId}-dup`, scene: `dup-${i}` }))];
      };
      expect(pooledValidation(leaky)).toBeGreaterThan(0.57);
    },
  );
});
