import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyCouncilPolicy } from '../../src/privacy/council-policy.js';
import { DEFAULT_PRIVACY_CONFIG } from '../../src/privacy/privacy-config.js';
import { epsilonFor } from '../../src/privacy/rdp-accountant.js';

const forge = { ...DEFAULT_PRIVACY_CONFIG, noiseMultiplier: 4, clipNorm: 1 };

describe("the council's privacy policy on the forge side", () => {
  it('no policy: the forge uses its own σ and S', () => {
    expect(applyCouncilPolicy(forge, null)).toEqual({ ok: true, source: 'forge', config: forge });
  });

  it('a policy at least as private (σ_council ≥ σ_forge) is followed, S included', () => {
    expect(applyCouncilPolicy(forge, { clipNorm: 0.5, noiseMultiplier: 4 })).toEqual({ ok: true, source: 'council', config: { ...forge, clipNorm: 0.5, noiseMultiplier: 4 } });
    expect(applyCouncilPolicy(forge, { clipNorm: 3, noiseMultiplier: 9 })).toMatchObject({ ok: true, config: { clipNorm: 3, noiseMultiplier: 9 } });
  });

  it('a less private policy sends nothing, and says which σ would be needed', () => {
    const d = applyCouncilPolicy(forge, { clipNorm: 1, noiseMultiplier: 2 });
    expect(d).toMatchObject({ ok: false, reason: 'less_private' });
    expect(d.ok === false && d.message).toMatch(/σ = 2, less private than this forge's σ = 4: nothing was sent/);
    expect(d.ok === false && d.hint).toMatch(/--noise-multiplier 2/);
  });

  it('a broken policy is refused (σ = 0, NaN, Infinity, S ≤ 0)', () => {
    for (const p of [{ clipNorm: 1, noiseMultiplier: 0 }, { clipNorm: 1, noiseMultiplier: NaN }, { clipNorm: Infinity, noiseMultiplier: 8 }, { clipNorm: 0, noiseMultiplier: 8 }]) {
      expect(applyCouncilPolicy(forge, p)).toMatchObject({ ok: false, reason: 'invalid' });
    }
  });

  it('property: whatever the council publishes, a followed policy never costs more ε per release than the forge’s own', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.3, max: 50, noNaN: true }), fc.double({ min: 0.01, max: 100, noNaN: true }), fc.double({ min: 0.3, max: 50, noNaN: true }), (sigmaForge, s, sigmaCouncil) => {
        const d = applyCouncilPolicy({ ...forge, noiseMultiplier: sigmaForge }, { clipNorm: s, noiseMultiplier: sigmaCouncil });
        if (!d.ok) return sigmaCouncil < sigmaForge;
        const eps = (sigma: number) => epsilonFor({ noiseMultiplier: sigma, sampleRate: 1, steps: 1, delta: 1e-5 }).epsilon;
        return eps(d.config.noiseMultiplier) <= eps(sigmaForge) + 1e-12;
      }),
      { numRuns: 200 },
    );
  });
});
