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

  it('the council decides S and σ inside the player’s floor: a more private policy is followed', () => {
    const roomy = { ...forge, agentEpsilon: 8.2 }; // one release may cost ε 1.025: σ = 4 costs 1.013
    expect(applyCouncilPolicy(roomy, { clipNorm: 0.5, noiseMultiplier: 4 })).toEqual({
      ok: true,
      source: 'council',
      config: { ...roomy, clipNorm: 0.5, noiseMultiplier: 4 },
    });
    expect(applyCouncilPolicy(forge, { clipNorm: 3, noiseMultiplier: 9 })).toMatchObject({
      ok: true,
      config: { clipNorm: 3, noiseMultiplier: 9 },
    });
  });

  it('a policy outside the floor is refused, naming the council’s value and the floor, even when the Whisper Limit could afford it', () => {
    // σ = 2 costs ε 2.17, which ε = 8 affords; but it is below this forge's σ = 4.
    expect(roundCost(2, forge.delta)).toBeLessThan(8);
    const d = applyCouncilPolicy(forge, { clipNorm: 1, noiseMultiplier: 2 });
    expect(d).toMatchObject({ ok: false, reason: 'floor' });
    expect(d.ok === false && d.message).toMatch(
      /^the council's σ = 2 is below this forge's privacy floor \(σ ≥ 4\): nothing was trained, sent or spent$/,
    );
    // One release at most 1/8 of an agent's lifetime ε: σ = 4 (ε 1.01) is refused with ε 8, followed with ε 8.2.
    expect(applyCouncilPolicy(forge, { clipNorm: 1, noiseMultiplier: 4 })).toMatchObject({
      ok: false,
      reason: 'floor',
      message: expect.stringMatching(
        /costs ε 1\.013 per release, above this forge's privacy floor \(ε ≤ 1 per release/,
      ),
    });
    expect(applyCouncilPolicy({ ...forge, agentEpsilon: 8.2 }, { clipNorm: 1, noiseMultiplier: 4 })).toMatchObject({
      ok: true,
    });
    for (const [clipNorm, why] of [
      [1e38, /S = 1e\+38 is above .*S ≤ 1000/],
      [5e-324, /S = 5e-324 is below .*S ≥ 0\.001/],
    ] as const) {
      expect(applyCouncilPolicy({ ...forge, noiseMultiplier: 8 }, { clipNorm, noiseMultiplier: 8 })).toMatchObject({
        ok: false,
        reason: 'floor',
        message: expect.stringMatching(why),
      });
    }
    expect(
      applyCouncilPolicy({ ...forge, noiseMultiplier: 8 }, { clipNorm: 1000, noiseMultiplier: 2000 }),
    ).toMatchObject({
      ok: false,
      reason: 'floor',
      message: expect.stringMatching(/σ·S = 2000000 is above .*σ·S ≤ 1000000/),
    });
  });

  it('inside the floor, a σ the Whisper Limit cannot afford even once sends nothing and says why; σ = 0 is below any floor', () => {
    // The floor allows σ ≥ 0.1 and ε 12.5 a release (agent ε 100); the forge's own ε is 1.
    const loose = { ...forge, noiseMultiplier: 0.1, agentEpsilon: 100, forgeEpsilon: 1 };
    const d = applyCouncilPolicy(loose, { clipNorm: 1, noiseMultiplier: 2 });
    expect(d).toMatchObject({ ok: false, reason: 'unaffordable' });
    expect(d.ok === false && d.message).toMatch(
      /σ = 2: one release costs ε .* more than the Whisper Limit allows \(ε 1\): nothing was sent/,
    );
    expect(applyCouncilPolicy(loose, { clipNorm: 1, noiseMultiplier: 0 })).toMatchObject({
      ok: false,
      reason: 'floor',
    });
  });

  it('a broken policy is refused (NaN, Infinity, S ≤ 0, σ < 0)', () => {
    for (const p of [
      { clipNorm: 1, noiseMultiplier: -1 },
      { clipNorm: 1, noiseMultiplier: NaN },
      { clipNorm: Infinity, noiseMultiplier: 8 },
      { clipNorm: 0, noiseMultiplier: 8 },
    ]) {
      expect(applyCouncilPolicy(forge, p)).toMatchObject({ ok: false, reason: 'invalid' });
    }
  });

  it('property: a followed policy is exactly the council’s, and it is followed iff it is inside the floor and one release fits the smaller budget', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.3, max: 50, noNaN: true }),
        fc.double({ min: 1e-5, max: 1e5, noNaN: true }),
        fc.double({ min: 0, max: 50, noNaN: true }),
        fc.double({ min: 0.1, max: 20, noNaN: true }),
        (sigmaForge, s, sigmaCouncil, budget) => {
          const config = { ...forge, noiseMultiplier: sigmaForge, agentEpsilon: budget };
          const d = applyCouncilPolicy(config, { clipNorm: s, noiseMultiplier: sigmaCouncil });
          const eps =
            sigmaCouncil > 0
              ? epsilonFor({ noiseMultiplier: sigmaCouncil, sampleRate: 1, steps: 1, delta: 1e-5 }).epsilon
              : Infinity;
          const inFloor =
            sigmaCouncil >= sigmaForge &&
            eps <= budget / 8 &&
            s >= config.clipNorm / 1000 &&
            s <= config.clipNorm * 1000 &&
            sigmaCouncil * s <= 1e6;
          const affordable = eps <= Math.min(budget, config.forgeEpsilon);
          if (!d.ok) return d.reason === (inFloor ? 'unaffordable' : 'floor') && !(inFloor && affordable);
          return inFloor && affordable && d.config.noiseMultiplier === sigmaCouncil && d.config.clipNorm === s;
        },
      ),
      { numRuns: 300 },
    );
  });
});
