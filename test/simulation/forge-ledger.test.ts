import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCell } from '../../src/simulation/cell.js';
import { inProcessCouncil } from '../../src/simulation/council-port.js';
import { ForgeLedgers } from '../../src/simulation/forge-ledger.js';
import { DEFAULT_EXPERIMENT, type Cell, type Experiment } from '../../src/simulation/experiment.js';
import { seedContext, sharedModel } from '../../src/simulation/run.js';
import { releaseEpsilon } from '../../src/privacy/privacy-floor.js';
import { sigmaForEpsilon } from '../../src/privacy/rdp-accountant.js';

const dir = mkdtempSync(join(tmpdir(), 'kourai-sim-ledger-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
/** The accountant's σ for ε 16 over 4 rounds, every forge every round: what an observer alone would need. */
const sigma16 = sigmaForEpsilon({ epsilon: 16, delta: 1e-5, steps: 4, sampleRate: 1, tolerance: 1e-6 }).noiseMultiplier;

// Three forges, all in every round, ε 16 over 4 rounds: the observer's σ alone would cost a forge
// about ε 5.6 a release, so four releases would pass the lifetime budget (ε 8) a real forge's
// ledger allows, and its privacy floor (ε 1 a release) would refuse the policy outright.
const x: Experiment = {
  ...DEFAULT_EXPERIMENT,
  forges: 3,
  cohort: 3,
  byzantine: 0,
  rounds: 4,
  seeds: [37],
  strategies: ['fedavg'],
  reference: 'fedavg',
  attacks: ['none'],
  epsilon: 16,
  epsilons: [16],
  sessions: 3,
  turns: 8,
  heldOut: 30,
  personalSample: 1,
  coldStart: [],
};

describe("a simulated forge's own ledger", () => {
  it('never charges past the lifetime ε: the council publishes a σ every release of which the forge can afford', async () => {
    const cell: Cell = {
      strategy: 'fedavg',
      attack: 'none',
      epsilon: 16,
      split: 'semantic',
      noise: 'local',
      share: 'small',
      seed: 37,
    };
    const sc = seedContext(x, 37, mkdtempSync(join(dir, 'home-')), sharedModel());
    const r = await runCell(sc, cell, { port: inProcessCouncil, dataDir: mkdtempSync(join(dir, 'council-')) });
    const observer = sigma16;
    expect(releaseEpsilon(observer, 1e-5)).toBeGreaterThan(2);
    const p = r.privacy;
    // The council raised σ to its forges' floor and said so; the observer's ε is then below the target.
    expect(r.sigma).toBeGreaterThan(observer);
    expect(releaseEpsilon(r.sigma, 1e-5)).toBeLessThanOrEqual(1);
    expect(p?.sigmaSource).toMatchObject({ binding: 'floor', floor: r.sigma });
    expect(p?.observerEpsilon).toBeLessThan(16);
    // Every forge released in every round, and its own ledger stayed inside its lifetime ε.
    expect(p?.releases.max).toBe(4);
    expect(p?.limited).toBe(0);
    expect(p?.forgeLedgerEpsilon).toBeGreaterThan(0);
    expect(p?.forgeLedgerEpsilon).toBeLessThanOrEqual(8);
    expect(r.rounds?.every((round) => round.silent === 0)).toBe(true);
  }, 300_000);
});

describe('ForgeLedgers', () => {
  it('charges each release as the real ledger does and refuses the one that would pass a lifetime budget', () => {
    const sigma = sigma16;
    const l = new ForgeLedgers();
    const made: boolean[] = [];
    for (let r = 1; r <= 4; r++) made.push(l.release(0, 'techne', r, sigma));
    expect(made.filter(Boolean).length).toBeGreaterThan(0);
    expect(made.filter(Boolean).length).toBeLessThan(4);
    // Once refused, refused for good: nothing was spent on the refusal.
    expect(made.indexOf(false)).toBe(made.filter(Boolean).length);
    expect(l.maxEpsilon()).toBeLessThanOrEqual(8);
    expect(l.limited).toBe(1);
    // The forge's budget composes all its agents: a second agent meets the forge's limit, not its own.
    const both = new ForgeLedgers();
    let n = 0;
    for (let r = 1; r <= 4; r++)
      for (const a of ['techne', 'aidos'] as const) n += both.release(7, a, r, sigma) ? 1 : 0;
    expect(n).toBe(made.filter(Boolean).length);
    expect(both.maxEpsilon()).toBeLessThanOrEqual(8);
  });

  it('neither checks nor charges a clip-only round (σ = 0)', () => {
    const l = new ForgeLedgers();
    for (let r = 1; r <= 50; r++) expect(l.release(0, 'techne', r, 0)).toBe(true);
    expect(l.limited).toBe(0);
    expect(l.maxEpsilon()).toBe(0);
  });
});
