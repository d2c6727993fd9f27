import { describe, expect, it } from 'vitest';
import { cellKey, cellsOf, DEFAULT_EXPERIMENT, problemWith, type Experiment } from '../../src/simulation/experiment.js';
import { sigmaFor } from '../../src/simulation/sim-privacy.js';
import { epsilonFor } from '../../src/privacy/rdp-accountant.js';

describe('the grid', () => {
  it('the default experiment: strategies × attacks, the ε sweep and the random split, each cell once per seed', () => {
    const x = DEFAULT_EXPERIMENT;
    const cells = cellsOf(x);
    const perSeed = x.strategies.length * x.attacks.length + (x.epsilons.filter((e) => e !== x.epsilon).length) + 1;
    expect(cells.length).toBe(perSeed * x.seeds.length);
    expect(new Set(cells.map((c) => cellKey(c))).size).toBe(cells.length);
    expect(cells.filter((c) => c.split === 'random').map((c) => c.seed)).toEqual(x.seeds);
  });

  it('refuses what a strategy cannot do, naming the flag', () => {
    const bad = (o: Partial<Experiment>): string | null => problemWith({ ...DEFAULT_EXPERIMENT, ...o });
    expect(bad({ forges: 10 })).toMatch(/bulyan\+lora-fair with f=2 needs at least 11 forges/);
    expect(bad({ byzantine: 15 })).toMatch(/no honest forge/);
    expect(bad({ byzantine: 0 })).toMatch(/--byzantine/);
    expect(bad({})).toBeNull();
  });
});

describe('privacy levels', () => {
  it('σ for ε over R rounds is what the accountant says spends at most ε; ∞ means no noise', () => {
    expect(sigmaFor(Infinity, 4, 1e-5)).toBe(0);
    for (const eps of [0.5, 1, 4, 8]) {
      const sigma = sigmaFor(eps, 4, 1e-5);
      expect(epsilonFor({ noiseMultiplier: sigma, sampleRate: 1, steps: 4, delta: 1e-5 }).epsilon).toBeLessThanOrEqual(eps + 1e-9);
      expect(epsilonFor({ noiseMultiplier: sigma * 0.98, sampleRate: 1, steps: 4, delta: 1e-5 }).epsilon).toBeGreaterThan(eps);
    }
  });
});
