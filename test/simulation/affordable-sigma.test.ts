import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_PRIVACY_CONFIG } from '../../src/privacy/privacy-config.js';
import { privacyFloor, releaseEpsilon } from '../../src/privacy/privacy-floor.js';
import { cellPrivacy } from '../../src/simulation/cell.js';
import { inProcessCouncil, layoutsFor } from '../../src/simulation/council-port.js';
import { DEFAULT_EXPERIMENT, type Experiment } from '../../src/simulation/experiment.js';
import { ForgeLedgers } from '../../src/simulation/forge-ledger.js';
import { sigmaForEpsilon } from '../../src/privacy/rdp-accountant.js';
import { builtinBaseSpec } from '../../src/train/base-spec.js';

const dir = mkdtempSync(join(tmpdir(), 'kourai-sim-sigma-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The at-scale experiment: 1,000 forges, Poisson cohorts of 100, 4 rounds, δ 1e-5.
const x: Experiment = { ...DEFAULT_EXPERIMENT, forges: 1000, cohort: 100, byzantine: 200, rounds: 4 };
const cap = privacyFloor(DEFAULT_PRIVACY_CONFIG).max_release_epsilon;
/** The accountant's σ for ε over R rounds at sampling rate q: what an observer alone would need. */
const observerSigma = (epsilon: number, rounds: number, q: number): number =>
  sigmaForEpsilon({ epsilon, delta: 1e-5, steps: rounds, sampleRate: q, tolerance: 1e-6 }).noiseMultiplier;

async function published(epsilon: number, noise: 'local' | 'distributed' = 'local') {
  const port = await inProcessCouncil({
    strategy: 'fedavg',
    byzantine: 0,
    forges: ['a', 'b', 'c'],
    baseFingerprint: 'fp',
    layouts: layoutsFor(builtinBaseSpec(), ['techne'], 8),
    privacy: cellPrivacy(x, { epsilon, noise }, 1),
    serverLr: 2,
    dataDir: mkdtempSync(join(dir, 'c-')),
  });
  try {
    return await port.policy(await port.currentRound());
  } finally {
    await port.close();
  }
}

describe('the σ the simulated council publishes at 1,000 forges', () => {
  it('at ε 8 one release costs a forge at most its floor (the observer’s σ alone would cost ε 8.78, above its lifetime)', async () => {
    const observer = observerSigma(8, 4, 0.1);
    expect(releaseEpsilon(observer, 1e-5)).toBeGreaterThan(DEFAULT_PRIVACY_CONFIG.agentEpsilon);
    const p = await published(8);
    expect(releaseEpsilon(p.noiseMultiplier, 1e-5)).toBeLessThanOrEqual(cap);
    expect(p.noiseMultiplier).toBeGreaterThan(observer);
    expect(p.derivation).toMatchObject({ target_epsilon: 8, rounds: 4, sample_rate: 0.1, binding: 'floor' });
    expect(p.derivation?.observer_sigma).toBeCloseTo(observer, 4);
    expect(p.derivation?.floor_sigma).toBe(p.noiseMultiplier);
    // …so a forge can release, where before its own ledger refused every release.
    const l = new ForgeLedgers();
    for (let r = 1; r <= 4; r++) expect(l.release(0, 'techne', r, p.noiseMultiplier)).toBe(true);
    expect(l.limited).toBe(0);
  }, 120_000);

  it('keeps the observer’s σ where it is already affordable, and accepts shares of σ under distributed noise', async () => {
    const small: Experiment = { ...x, forges: 11, cohort: 11 };
    const strict = observerSigma(0.5, 4, 1);
    expect(releaseEpsilon(strict, 1e-5)).toBeLessThanOrEqual(cap);
    const port = await inProcessCouncil({
      strategy: 'fedavg',
      byzantine: 0,
      forges: ['a', 'b', 'c'],
      baseFingerprint: 'fp',
      layouts: layoutsFor(builtinBaseSpec(), ['techne'], 8),
      privacy: cellPrivacy(small, { epsilon: 0.5, noise: 'local' }, 1),
      serverLr: 2,
      dataDir: mkdtempSync(join(dir, 'c-')),
    });
    const p = await port.policy(await port.currentRound());
    await port.close();
    expect(p.noiseMultiplier).toBeCloseTo(strict, 4);
    expect(p.derivation?.binding).toBe('observer');
    const d = await published(8, 'distributed');
    expect(d.noiseMultiplier).toBe((await published(8)).noiseMultiplier);
    // ε = ∞: clipping only, nothing derived.
    const inf = await published(Infinity);
    expect(inf.noiseMultiplier).toBe(0);
    expect(inf.derivation).toBeUndefined();
  }, 120_000);
});
