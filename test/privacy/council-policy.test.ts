import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyCouncilPolicy, roundCost } from '../../src/privacy/council-policy.js';
import { DEFAULT_PRIVACY_CONFIG } from '../../src/privacy/privacy-config.js';
import { epsilonFor } from '../../src/privacy/rdp-accountant.js';

const forge = { ...DEFAULT_PRIVACY_CONFIG, noiseMultiplier: 4, clipNorm: 1 };

describe("the council's privacy policy on the forge side", () => {
  it('no policy: the forge uses its own σ and S', () => {
    expect(applyCouncilPolicy(forge, null)).toEqual({ ok: true, source: 'forge', config: forge });
  });

  it('the council decides S and σ: a more private policy is followed, and so is a less private one the Whisper Limit can afford', () => {
    expect(applyCouncilPolicy(forge, { clipNorm: 0.5, noiseMultiplier: 4 })).toEqual({ ok: true, source: 'council', config: { ...forge, clipNorm: 0.5, noiseMultiplier: 4 } });
    expect(applyCouncilPolicy(forge, { clipNorm: 3, noiseMultiplier: 9 })).toMatchObject({ ok: true, config: { clipNorm: 3, noiseMultiplier: 9 } });
    // σ = 2 costs more ε per release than the forge's σ = 4, but one release still fits in ε = 8.
    expect(roundCost(2, forge.delta)).toBeLessThan(8);
    expect(applyCouncilPolicy(forge, { clipNorm: 1, noiseMultiplier: 2 })).toMatchObject({ ok: true, source: 'council', config: { noiseMultiplier: 2 } });
  });

  it('a σ the Whisper Limit cannot afford even once sends nothing and says why (σ = 0 included)', () => {
    for (const sigma of [0, 0.3]) {
      const d = applyCouncilPolicy(forge, { clipNorm: 1, noiseMultiplier: sigma });
      expect(d).toMatchObject({ ok: false, reason: 'unaffordable' });
      expect(d.ok === false && d.message).toMatch(new RegExp(`σ = ${sigma}: one release costs ε .* more than the Whisper Limit allows \\(ε 8\\): nothing was sent`));
    }
    // A smaller budget makes a σ unaffordable that the default budget affords.
    expect(applyCouncilPolicy({ ...forge, agentEpsilon: 0.5 }, { clipNorm: 1, noiseMultiplier: 2 })).toMatchObject({ ok: false, reason: 'unaffordable' });
  });

  it('a broken policy is refused (NaN, Infinity, S ≤ 0, σ < 0)', () => {
    for (const p of [{ clipNorm: 1, noiseMultiplier: -1 }, { clipNorm: 1, noiseMultiplier: NaN }, { clipNorm: Infinity, noiseMultiplier: 8 }, { clipNorm: 0, noiseMultiplier: 8 }]) {
      expect(applyCouncilPolicy(forge, p)).toMatchObject({ ok: false, reason: 'invalid' });
    }
  });

  it('property: a followed policy is exactly the council’s, and it is followed iff one release fits the smaller budget', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.3, max: 50, noNaN: true }), fc.double({ min: 0.01, max: 100, noNaN: true }), fc.double({ min: 0, max: 50, noNaN: true }), fc.double({ min: 0.1, max: 20, noNaN: true }), (sigmaForge, s, sigmaCouncil, budget) => {
        const config = { ...forge, noiseMultiplier: sigmaForge, agentEpsilon: budget };
        const d = applyCouncilPolicy(config, { clipNorm: s, noiseMultiplier: sigmaCouncil });
        const eps = sigmaCouncil > 0 ? epsilonFor({ noiseMultiplier: sigmaCouncil, sampleRate: 1, steps: 1, delta: 1e-5 }).epsilon : Infinity;
        if (!d.ok) return d.reason === 'unaffordable' && !(eps <= Math.min(budget, config.forgeEpsilon));
        return d.config.noiseMultiplier === sigmaCouncil && d.config.clipNorm === s && eps <= Math.min(budget, config.forgeEpsilon);
      }),
      { numRuns: 200 },
    );
  });
});
