import { describe, expect, it } from 'vitest';
import {
  cellKey,
  cellsOf,
  cohortByzantine,
  DEFAULT_EXPERIMENT,
  problemWith,
  type Experiment,
} from '../../src/simulation/experiment.js';
import { cellPrivacy } from '../../src/simulation/cell.js';
import { councilSigma } from '../../src/privacy/council-sigma.js';
import { epsilonFor } from '../../src/privacy/rdp-accountant.js';

describe('the grid', () => {
  it('the default experiment: strategies × attacks, the ε sweep (local, distributed, small adapter) and the two split controls, each cell once per seed', () => {
    const x = DEFAULT_EXPERIMENT;
    const cells = cellsOf(x);
    const finite = x.epsilons.filter((e) => e !== Infinity).length;
    // ε = ∞ on the full adapter is the reference's clean Byzantine cell, and the semantic split is too.
    const perSeed = x.strategies.length * x.attacks.length + x.epsilons.length * 2 - 1 + finite * 2 + 2;
    expect(cells.length).toBe(perSeed * x.seeds.length);
    expect(new Set(cells.map((c) => cellKey(c))).size).toBe(cells.length);
    expect(cells.filter((c) => c.split === 'param-random').map((c) => c.seed)).toEqual(x.seeds);
    expect(cells.filter((c) => c.split === 'fedsa').map((c) => c.seed)).toEqual(x.seeds);
    const distributed = cells.filter((c) => c.noise === 'distributed');
    expect(distributed.every((c) => c.strategy === 'fedavg' && c.epsilon !== Infinity && c.attack === 'none')).toBe(
      true,
    );
    expect(distributed).toHaveLength(2 * finite * x.seeds.length);
    expect(cells.filter((c) => c.share === 'small')).toHaveLength((x.epsilons.length + finite) * x.seeds.length);
    expect(cells.some((c) => c.strategy === 'fedavg-naive' && c.attack === 'scale')).toBe(true);
  });

  it('refuses what a strategy cannot do, naming the flag', () => {
    const bad = (o: Partial<Experiment>): string | null => problemWith({ ...DEFAULT_EXPERIMENT, ...o });
    expect(bad({ forges: 10, cohort: 10 })).toMatch(/bulyan\+lora-fair with f=2 needs at least 11 forges/);
    expect(bad({ byzantine: 15, forges: 15, cohort: 15 })).toMatch(/no honest forge/);
    expect(bad({ byzantine: 0 })).toMatch(/--byzantine/);
    expect(bad({})).toBeNull();
  });

  it('refuses a cohort larger than the federation, a cohort too small for the rule, no forges, and ε ≤ 0', () => {
    const bad = (o: Partial<Experiment>): string | null => problemWith({ ...DEFAULT_EXPERIMENT, ...o });
    expect(bad({ forges: 100, byzantine: 20, cohort: 101 })).toBe('--cohort 101 is larger than --forges 100');
    // 20 of 100 Byzantine, cohorts of 50 at ε = ∞: f = 16 (hypergeometric, δ 1e-3); Bulyan needs 67.
    expect(bad({ forges: 100, byzantine: 20, cohort: 50, epsilons: [Infinity] })).toBe(
      'bulyan+lora-fair with f=16 needs at least 67 forges per cohort (n ≥ 4f+3); got --cohort 50 ' +
        '(f = 16: at most 16 of the 20 Byzantine forges among 100 land in one cohort, except with probability 0.001 per round); ' +
        'the smallest cohort that holds it is 83',
    );
    expect(
      bad({ forges: 100, byzantine: 20, cohort: 50, epsilons: [Infinity], strategies: ['multikrum+lora-fair'] }),
    ).toBeNull();
    // The reference also runs at every ε of the sweep: Poisson cohorts there, and a larger f (binomial tail).
    expect(bad({ forges: 100, byzantine: 20, cohort: 20, strategies: ['multikrum+lora-fair'] })).toMatch(
      /^multikrum\+lora-fair with f=10 needs at least 23 forges per cohort .*Poisson cohorts/,
    );
    expect(bad({ forges: 0, cohort: 0 })).toMatch(/^--forges 0: a federation needs at least one forge/);
    expect(bad({ epsilons: [4, 0] })).toMatch(/^ε 0: give a positive ε/);
    expect(bad({ epsilon: -1 })).toMatch(/^ε -1/);
  });

  it('f of a sampled cohort bounds the Byzantine forges one cohort holds, not their mean', () => {
    // scipy.stats.hypergeom(1000, 200, 100).sf(31) > 1e-3 ≥ sf(32); binom(200, 0.1).sf(f) likewise at 34.
    expect(cohortByzantine({ forges: 1000, cohort: 100, byzantine: 200 })).toBe(32);
    expect(cohortByzantine({ forges: 1000, cohort: 100, byzantine: 200 }, 'poisson')).toBe(34);
    expect(cohortByzantine({ forges: 11, cohort: 11, byzantine: 2 })).toBe(2);
  });
});

describe('privacy levels', () => {
  it('σ for ε over R rounds is what the accountant says spends at most ε; ∞ means no noise', () => {
    // a cell at ε = ∞ sets its council up to clip only: σ 0, no target to derive σ from
    expect(cellPrivacy({ ...DEFAULT_EXPERIMENT, rounds: 4 }, { epsilon: Infinity, noise: 'local' }, 1)).toEqual({
      clipNorm: 1,
      noiseMultiplier: 0,
    });
    for (const eps of [0.5, 1, 4, 8]) {
      // the observer's σ the council derives for a cell at ε over 4 rounds, every forge every round
      const sigma = councilSigma({ epsilon: eps, rounds: 4, delta: 1e-5, sampleRate: 1, agentEpsilon: 8 }).observer;
      expect(epsilonFor({ noiseMultiplier: sigma, sampleRate: 1, steps: 4, delta: 1e-5 }).epsilon).toBeLessThanOrEqual(
        eps + 1e-9,
      );
      expect(
        epsilonFor({ noiseMultiplier: sigma * 0.98, sampleRate: 1, steps: 4, delta: 1e-5 }).epsilon,
      ).toBeGreaterThan(eps);
    }
  });
});
