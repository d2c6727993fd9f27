import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { account, cohortSeed, federatedMask, noisedRelease } from '../../src/simulation/cell.js';
import { seededSampler } from '../../src/simulation/sim-privacy.js';
import { sigmaForEpsilon } from '../../src/privacy/rdp-accountant.js';
import { poissonCohort, sampleCohort } from '../../src/protocol/cohort.js';
import { loraSize } from '../../src/train/lora.js';

interface OpacusRow {
  sigma: number;
  q: number;
  steps: number;
  eps_rdp: number;
}
const ref = JSON.parse(readFileSync(new URL('../fixtures/privacy/opacus-rdp.json', import.meta.url), 'utf8')) as {
  eps_table_subsampled_sigma_not_1: { rows: OpacusRow[] };
};

const dims = { inDim: 64, hidden: 16, out: 1, rank: 4 };

describe('what a forge federates', () => {
  it('full: everything; small: all but the input-side A factors; fedsa: the A factors; param-random: half, the same at every forge and seed-dependent', () => {
    const n = loraSize(dims);
    const count = (m: Uint8Array | null): number => (m ? m.reduce((a, b) => a + b, 0) : n);
    expect(federatedMask({ split: 'semantic', share: 'full' }, dims, 1)).toBeNull();
    const small = federatedMask({ split: 'semantic', share: 'small' }, dims, 1) as Uint8Array;
    expect(count(small)).toBe(n - 2 * dims.inDim * dims.rank);
    expect(small[0]).toBe(0);
    const fedsa = federatedMask({ split: 'fedsa', share: 'full' }, dims, 1) as Uint8Array;
    expect(count(fedsa)).toBe(2 * dims.inDim * dims.rank + dims.rank * dims.hidden);
    expect(fedsa[dims.inDim * dims.rank]).toBe(0); // dense B stays local
    const half = federatedMask({ split: 'param-random', share: 'full' }, dims, 1) as Uint8Array;
    expect(count(half)).toBe(n >> 1);
    expect(federatedMask({ split: 'param-random', share: 'full' }, dims, 1)).toEqual(half);
    expect(federatedMask({ split: 'param-random', share: 'full' }, dims, 2)).not.toEqual(half);
  });

  it('a release is clipped to S and noised on the federated values only: the others are not sent (zero)', () => {
    const n = loraSize(dims);
    const mask = federatedMask({ split: 'fedsa', share: 'full' }, dims, 1) as Uint8Array;
    const update = Float64Array.from({ length: n }, (_, i) => (mask[i] ? 0.5 : 0));
    const out = noisedRelease(update, mask, 1, 2, seededSampler('t'));
    for (let i = 0; i < n; i++) if (!mask[i]) expect(out[i]).toBe(0);
    // The noise on the federated values has sd σS = 2.
    const noise = Array.from(out)
      .filter((_, i) => mask[i] === 1)
      .map((v) => v - 0.5 / Math.sqrt(mask.reduce((a, b) => a + b, 0)));
    const sd = Math.sqrt(noise.reduce((a, b) => a + b * b, 0) / noise.length);
    expect(sd).toBeGreaterThan(1.7);
    expect(sd).toBeLessThan(2.3);
  });
});

describe('privacy at scale', () => {
  it('the amplified guarantee toward observers reproduces Opacus’s sampled-Gaussian ε (eps_table_subsampled_sigma_not_1)', () => {
    for (const row of ref.eps_table_subsampled_sigma_not_1.rows) {
      const a = account(row.sigma, row.sigma, row.q, row.steps, 1e-5, new Uint32Array([row.steps]), 1);
      expect(a.observerEpsilon).toBeCloseTo(row.eps_rdp, 6);
    }
  });

  it('σ for ε at q = K/N spends at most ε toward observers; a forge’s own ledger charges its releases unamplified', () => {
    const sigmaAt = (sampleRate: number) =>
      sigmaForEpsilon({ epsilon: 4, delta: 1e-5, steps: 20, sampleRate, tolerance: 1e-6 }).noiseMultiplier;
    const sigma = sigmaAt(0.1);
    expect(sigma).toBeLessThan(sigmaAt(1));
    const releases = new Uint32Array([0, 2, 5, 1]);
    const a = account(sigma, sigma, 0.1, 20, 1e-5, releases, 100);
    expect(a.observerEpsilon).toBeLessThanOrEqual(4 + 1e-6);
    expect(a.observerEpsilon).toBeGreaterThan(3.9);
    expect(a.releases).toEqual({ max: 5, mean: 2, never: 1 });
    // Five unsampled releases at this σ cost far more than the amplified 4 …
    expect(a.forgeLedgerEpsilon).toBeGreaterThan(a.observerEpsilon);
    // … and exactly what five rounds at q = 1 cost.
    expect(a.forgeLedgerEpsilon).toBeCloseTo(
      account(sigma, sigma, 1, 5, 1e-5, new Uint32Array([5]), 100).observerEpsilon,
      12,
    );
    // A forge that never released spent nothing.
    expect(account(sigma, sigma, 0.1, 20, 1e-5, new Uint32Array([0, 0]), 100).forgeLedgerEpsilon).toBe(0);
  });

  it('cohorts come from the protocol’s sampler: seeded by the experiment seed alone, K forges, or Poisson at rate K/N', () => {
    const names = Array.from({ length: 1000 }, (_, i) => `forge-${i}`);
    const a = sampleCohort(names, { round: 3, seed: cohortSeed(7), size: 100 });
    expect(a).toHaveLength(100);
    expect(sampleCohort(names, { round: 3, seed: cohortSeed(7), size: 100 })).toEqual(a);
    expect(sampleCohort(names, { round: 4, seed: cohortSeed(7), size: 100 })).not.toEqual(a);
    const p = poissonCohort(names, { round: 3, seed: cohortSeed(7), rate: 0.1 });
    expect(p.length).toBeGreaterThan(60);
    expect(p.length).toBeLessThan(140);
  });
});
