import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { councilSigma } from '../../src/privacy/council-sigma.js';
import { releaseEpsilon, RELEASE_SHARE } from '../../src/privacy/privacy-floor.js';
import { epsilonFor } from '../../src/privacy/rdp-accountant.js';

describe('councilSigma', () => {
  it('publishes the larger of the observer’s σ and the σ a forge’s floor can afford, and names which bound', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.3, max: 32, noNaN: true }),
        fc.integer({ min: 1, max: 50 }),
        fc.constantFrom(1, 0.5, 0.1, 0.01),
        fc.constantFrom(2, 8, 16),
        (epsilon, rounds, sampleRate, agentEpsilon) => {
          const p = councilSigma({ epsilon, rounds, delta: 1e-5, sampleRate, agentEpsilon });
          expect(p.sigma).toBe(Math.max(p.observer, p.affordable));
          expect(p.binding).toBe(p.affordable > p.observer ? 'floor' : 'observer');
          // The observer's ε at σ is within the target; one release is within the floor's cap.
          const seen = epsilonFor({ noiseMultiplier: p.sigma, sampleRate, steps: rounds, delta: 1e-5 }).epsilon;
          expect(seen).toBeLessThanOrEqual(epsilon * (1 + 1e-9));
          expect(p.releaseCap).toBe(agentEpsilon * RELEASE_SHARE);
          expect(p.releaseEpsilon).toBe(releaseEpsilon(p.sigma, 1e-5));
          expect(p.releaseEpsilon).toBeLessThanOrEqual(p.releaseCap * (1 + 1e-9));
          // Both σ are the smallest that do their job (to the search's 1e-6).
          expect(releaseEpsilon(p.affordable * (1 - 1e-5), 1e-5)).toBeGreaterThan(p.releaseCap);
        },
      ),
      { numRuns: 12 },
    );
  });

  it('at 1,000 forges (ε 8, 4 rounds, q 0.1) the floor binds: σ 0.59 would cost a forge ε 8.78 per release', () => {
    const p = councilSigma({ epsilon: 8, rounds: 4, delta: 1e-5, sampleRate: 0.1, agentEpsilon: 8 });
    expect(p.observer).toBeCloseTo(0.59, 2);
    expect(releaseEpsilon(p.observer, 1e-5)).toBeCloseTo(8.78, 2);
    expect(p.binding).toBe('floor');
    expect(p.sigma).toBeCloseTo(4.05, 2);
    expect(p.releaseEpsilon).toBeLessThanOrEqual(1);
  });
});
