import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FEDERATING_AGENTS } from '../../src/memoir/format/agents.js';
import { checkRelease, gaugeLevel, planRound, type SpentRelease } from '../../src/privacy/budget.js';
import { noConsent, type ConsentMap } from '../../src/privacy/consent.js';
import { DEFAULT_PRIVACY_CONFIG, type PrivacyConfig } from '../../src/privacy/privacy-config.js';
import { computeRdp, DEFAULT_ORDERS, epsilonFor, rdpToEpsilon } from '../../src/privacy/rdp-accountant.js';

const allConsent = (): ConsentMap => Object.fromEntries(FEDERATING_AGENTS.map((a) => [a, true])) as ConsentMap;
const allShareable = Object.fromEntries(FEDERATING_AGENTS.map((a) => [a, 10]));
const cfg = (over: Partial<PrivacyConfig> = {}): PrivacyConfig => ({ ...DEFAULT_PRIVACY_CONFIG, ...over });
const rounds = (n: number, agents: readonly string[] = FEDERATING_AGENTS, sigma = 8): SpentRelease[] =>
  Array.from({ length: n }, (_, r) =>
    agents.map((agent) => ({ agent, round: `r${r}`, noiseMultiplier: sigma, sampleRate: 1 })),
  ).flat();

describe('planRound: who speaks next round', () => {
  it('with consent, entries and capacity, every federating agent speaks; Cupid and Puck never do', () => {
    const plan = planRound({
      releases: [],
      consent: allConsent(),
      shareable: { ...allShareable, cupid: 50, puck: 9 },
      config: cfg(),
    });
    expect(
      plan.agents
        .filter((a) => a.speaks)
        .map((a) => a.agent)
        .sort(),
    ).toEqual([...FEDERATING_AGENTS].sort());
    const cupid = plan.agents.find((a) => a.agent === 'cupid');
    expect(cupid).toMatchObject({ speaks: false, verdict: 'bond_only', consent: 'locked', capacity: null });
    expect(plan.agents.find((a) => a.agent === 'puck')?.verdict).toBe('bond_only');
    expect(plan.forge.speakers).toBe(8);
    expect(plan.forge.epsilonSpent).toBe(0);
    expect(plan.forge.epsilonAfterRound).toBeCloseTo(
      epsilonFor({ noiseMultiplier: 8, sampleRate: 1, steps: 8, delta: 1e-5 }).epsilon,
      12,
    );
  });

  it('says why an agent is silent: no consent, no shareable entries, already spoke', () => {
    const consent = { ...allConsent(), metis: false };
    const plan = planRound({
      releases: rounds(1, ['aidos']),
      consent,
      shareable: { ...allShareable, kallos: 0 },
      config: cfg(),
      round: 'r0',
    });
    const v = Object.fromEntries(plan.agents.map((a) => [a.agent, a.verdict]));
    expect(v).toMatchObject({
      metis: 'no_consent',
      kallos: 'no_shareable_entries',
      aidos: 'already_released',
      hephaestus: 'speaks',
    });
    expect(plan.agents.find((a) => a.agent === 'metis')?.why).toMatch(/no consent/);
  });

  it('nobody speaks before the Sovereignty Moment (no consent recorded)', () => {
    const plan = planRound({ releases: [], consent: noConsent(), shareable: allShareable, config: cfg() });
    expect(plan.agents.every((a) => !a.speaks)).toBe(true);
  });

  it('an agent whose next release would exceed its budget stays silent (agent_budget)', () => {
    // σ = 1: one release costs ε ≈ 4.73; a second brings it to ≈ 7.6; a third exceeds 8.
    const config = cfg({ noiseMultiplier: 1, forgeEpsilon: 1000 });
    const plan = planRound({
      releases: rounds(2, ['techne'], 1),
      consent: allConsent(),
      shareable: allShareable,
      config,
    });
    const techne = plan.agents.find((a) => a.agent === 'techne');
    expect(techne?.verdict).toBe('agent_budget');
    expect(techne?.epsilonAfterNext).toBeGreaterThan(8);
    expect(techne?.capacity?.level).toBe('exhausted');
    expect(plan.agents.find((a) => a.agent === 'metis')?.verdict).toBe('speaks');
  });

  it('when the forge cannot afford everyone, those who spoke least go first and the rest are forge_budget', () => {
    const config = cfg({ noiseMultiplier: 8 });
    // σ = 8: at most 157 releases fit in ε = 8. After 19 full rounds (152) and two more by
    // Metis and Kallos, three more fit: the three first in canonical order among those who
    // spoke least.
    const extra = ['metis', 'kallos'].map((agent) => ({ agent, round: 'x', noiseMultiplier: 8, sampleRate: 1 }));
    const plan = planRound({
      releases: [...rounds(19), ...extra],
      consent: allConsent(),
      shareable: allShareable,
      config,
    });
    const speaking = plan.agents.filter((a) => a.speaks).map((a) => a.agent);
    const silent = plan.agents.filter((a) => a.verdict === 'forge_budget').map((a) => a.agent);
    expect(speaking).toEqual(['hephaestus', 'techne', 'dokimasia']);
    expect(silent.sort()).toEqual(['aidos', 'aletheia', 'kallos', 'metis', 'mneme']);
    expect(plan.forge.speakers).toBe(3);
    expect(plan.forge.epsilonAfterRound).toBeLessThanOrEqual(config.forgeEpsilon);
  });

  it('matches an oracle built from the accountant alone: least-spoken first, each speaker within both budgets (property)', () => {
    // The oracle composes RDP itself (computeRdp + rdpToEpsilon, checked against Opacus) and applies
    // the documented rule by hand; it shares nothing with budget.ts.
    const epsilonOf = (sigmas: readonly number[], delta: number): number => {
      if (sigmas.length === 0) return 0; // nothing released: nothing spent
      const rdp = new Array<number>(DEFAULT_ORDERS.length).fill(0);
      for (const s of sigmas)
        computeRdp({ sampleRate: 1, noiseMultiplier: s, steps: 1 }).forEach(
          (x, i) => (rdp[i] = (rdp[i] as number) + x),
        );
      return rdpToEpsilon(DEFAULT_ORDERS, rdp, delta).epsilon;
    };
    fc.assert(
      fc.property(
        fc.array(fc.record({ agent: fc.constantFrom(...FEDERATING_AGENTS), sigma: fc.constantFrom(2, 4, 8) }), {
          maxLength: 80,
        }),
        fc.double({ min: 1, max: 20, noNaN: true }),
        fc.double({ min: 1, max: 20, noNaN: true }),
        fc.constantFrom(2, 4, 8),
        fc.subarray([...FEDERATING_AGENTS]),
        (hist, forgeEpsilon, agentEpsilon, sigma, withoutConsent) => {
          const releases = hist.map((h, i) => ({
            agent: h.agent,
            round: `r${i}`,
            noiseMultiplier: h.sigma,
            sampleRate: 1,
          }));
          const config = cfg({ forgeEpsilon, agentEpsilon, noiseMultiplier: sigma });
          const consent = {
            ...allConsent(),
            ...Object.fromEntries(withoutConsent.map((a) => [a, false])),
          } as ConsentMap;
          const plan = planRound({ releases, consent, shareable: allShareable, config });

          const forge = hist.map((h) => h.sigma);
          const mine = (a: string): number[] => hist.filter((h) => h.agent === a).map((h) => h.sigma);
          const order = [...FEDERATING_AGENTS].sort(
            (a, b) => mine(a).length - mine(b).length || FEDERATING_AGENTS.indexOf(a) - FEDERATING_AGENTS.indexOf(b),
          );
          const expected: Record<string, string> = {};
          for (const a of order) {
            if (withoutConsent.includes(a)) expected[a] = 'no_consent';
            else if (epsilonOf([...mine(a), sigma], config.delta) > agentEpsilon) expected[a] = 'agent_budget';
            else if (epsilonOf([...forge, sigma], config.delta) > forgeEpsilon) expected[a] = 'forge_budget';
            else {
              expected[a] = 'speaks';
              forge.push(sigma);
            }
          }
          const got = Object.fromEntries(
            plan.agents.filter((a) => a.verdict !== 'bond_only').map((a) => [a.agent, a.verdict]),
          );
          expect(got).toEqual(expected);
          expect(plan.forge.epsilonAfterRound).toBeCloseTo(epsilonOf(forge, config.delta), 9);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('hand-written budgets at σ = 2: nine releases fit in ε = 8, the tenth does not', () => {
    // At q = 1 RDP is α·k/(2σ²): four releases at σ = 2 cost what one at σ = 1 does, which Opacus
    // puts at ε = 4.728507067217623 (opacus-rdp.json). Nine cost 7.59, ten 8.08 (δ = 1e-5).
    const config = cfg({ noiseMultiplier: 2, forgeEpsilon: 8, agentEpsilon: 8 });
    const history = (n: number): SpentRelease[] =>
      Array.from({ length: n }, (_, i) => ({
        agent: FEDERATING_AGENTS[i % 8] as string,
        round: `r${i}`,
        noiseMultiplier: 2,
        sampleRate: 1,
      }));
    expect(
      planRound({ releases: history(4), consent: allConsent(), shareable: allShareable, config }).forge.epsilonSpent,
    ).toBeCloseTo(4.728507067217623, 9);
    // 8 releases, one per agent: exactly one more fits, the first agent in canonical order.
    const eight = planRound({ releases: history(8), consent: allConsent(), shareable: allShareable, config });
    expect(eight.agents.filter((a) => a.speaks).map((a) => a.agent)).toEqual(['hephaestus']);
    expect(eight.agents.filter((a) => a.verdict === 'forge_budget')).toHaveLength(7);
    // 9 releases (Hephaestus spoke twice): nobody.
    expect(
      planRound({ releases: history(9), consent: allConsent(), shareable: allShareable, config }).forge.speakers,
    ).toBe(0);
    // 7 releases: Aletheia has not spoken and goes first, then Hephaestus, the first of those who spoke once.
    const seven = planRound({ releases: history(7), consent: allConsent(), shareable: allShareable, config });
    expect(
      seven.agents
        .filter((a) => a.speaks)
        .map((a) => a.agent)
        .sort(),
    ).toEqual(['aletheia', 'hephaestus']);
  });
});

describe('checkRelease and the gauge', () => {
  it('refuses the release that would cross a budget, naming which', () => {
    const config = cfg({ noiseMultiplier: 1 });
    expect(checkRelease(rounds(1, ['aidos'], 1), 'aidos', config)).toMatchObject({ ok: true });
    expect(checkRelease(rounds(2, ['aidos'], 1), 'aidos', config)).toMatchObject({ ok: false, reason: 'agent_budget' });
    expect(checkRelease(rounds(2, ['aidos'], 1), 'metis', { ...config, agentEpsilon: 100 })).toMatchObject({
      ok: false,
      reason: 'forge_budget',
    });
  });

  it('colours: > 50 % ok, > 20 % low, else critical; exhausted when the next release does not fit', () => {
    expect(gaugeLevel(0.9, true)).toBe('ok');
    expect(gaugeLevel(0.5, true)).toBe('low');
    expect(gaugeLevel(0.21, true)).toBe('low');
    expect(gaugeLevel(0.2, true)).toBe('critical');
    expect(gaugeLevel(0.9, false)).toBe('exhausted');
    expect(gaugeLevel(0, true)).toBe('exhausted');
  });

  it('the default budget lets the whole council speak 19 times', () => {
    let r = 0;
    for (;;) {
      const plan = planRound({ releases: rounds(r), consent: allConsent(), shareable: allShareable, config: cfg() });
      if (plan.forge.speakers < 8) break;
      r++;
    }
    expect(r).toBe(19);
  });
});
