import { describe, expect, it } from 'vitest';
import type { CellResult, Quality } from '../../src/simulation/cell.js';
import { cellKey, type Attack, type Cell, type Experiment, type SimStrategy } from '../../src/simulation/experiment.js';
import { summarize } from '../../src/simulation/summary.js';

const x: Experiment = {
  forges: 5,
  byzantine: 1,
  rounds: 2,
  agents: ['techne'],
  sessions: 2,
  turns: 4,
  strategies: ['fedavg-naive', 'multikrum+lora-fair'],
  attacks: ['none', 'sign-flip', 'collude'],
  epsilon: Infinity,
  epsilons: [1, Infinity],
  reference: 'multikrum+lora-fair',
  seeds: [1, 2],
  localEpochs: 1,
  clipNorm: 1,
  serverLr: 2,
  delta: 1e-5,
  heldOut: 10,
  cohort: 5,
  personalSample: 24,
  coldStart: [1, 8],
  newcomers: 2,
  rootSet: false,
};
const q = (all: number): Quality => ({ personal: all, craft: all, all });

function cell(
  strategy: SimStrategy,
  attack: Attack,
  seed: number,
  council: number,
  o: {
    epsilon?: number;
    split?: 'semantic' | 'param-random';
    personal?: [number, number, number];
    falseExile?: boolean;
  } = {},
): CellResult {
  const c: Cell = {
    strategy,
    attack,
    epsilon: o.epsilon ?? Infinity,
    split: o.split ?? 'semantic',
    noise: 'local',
    share: 'full',
    seed,
  };
  return {
    key: cellKey(c),
    cell: c,
    sigma: 0,
    agents: {},
    council,
    curve: [council / 2, council],
    personal: o.personal
      ? { bondCouncil: q(o.personal[0]), councilOnly: q(o.personal[1]), bondOnly: q(o.personal[2]), forges: 4 }
      : null,
    coldStart: null,
    exiles: o.falseExile ? [{ forge: 'forge-02', round: 3, byzantine: false }] : [],
    falseExiles: o.falseExile ? 1 : 0,
    forgeRounds: 10,
    rounds: [],
    privacy: {
      sigma: 0,
      releaseSigma: 0,
      q: 1,
      rounds: 2,
      observerEpsilon: Infinity,
      releases: { max: 2, mean: 2, never: 0 },
      forgeLedgerEpsilon: Infinity,
      limited: 0,
      sharedValues: 135176,
    },
  };
}

function results(o: {
  fedavgWorst: number;
  robustWorst: number;
  eps1: number;
  random: number;
  falseExile?: boolean;
}): CellResult[] {
  const out: CellResult[] = [];
  for (const seed of [1, 2]) {
    out.push(
      cell('fedavg-naive', 'none', seed, 0.8),
      cell('fedavg-naive', 'sign-flip', seed, 0.7),
      cell('fedavg-naive', 'collude', seed, o.fedavgWorst),
    );
    out.push(
      cell('multikrum+lora-fair', 'none', seed, 0.8, {
        personal: [0.9 + seed * 0.001, 0.6, 0.85],
        falseExile: o.falseExile === true && seed === 2,
      }),
      cell('multikrum+lora-fair', 'sign-flip', seed, 0.79),
      cell('multikrum+lora-fair', 'collude', seed, o.robustWorst),
    );
    out.push(cell('multikrum+lora-fair', 'none', seed, o.eps1, { epsilon: 1, personal: [0.7, 0.6, 0.85] }));
    out.push(
      cell('multikrum+lora-fair', 'none', seed, 0.8, { split: 'param-random', personal: [o.random, 0.6, 0.85] }),
    );
  }
  return out;
}

describe('targets say what was measured, whether it was met and by how much it was missed', () => {
  it('all met', () => {
    // 3 rounds: the trust warm-up, so that an exile was possible.
    const s = summarize(
      { ...x, rounds: 3 },
      results({ fedavgWorst: 0.4, robustWorst: 0.78, eps1: 0.6, random: 0.8 }),
      16,
    );
    const t = Object.fromEntries(s.targets.map((y) => [y.name, y]));
    expect(t['byzantine robustness: naive fedavg collapses']).toMatchObject({ met: true });
    expect(t['byzantine robustness: naive fedavg collapses']?.value).toBeCloseTo(0.5, 12);
    expect(t['byzantine robustness: multikrum+lora-fair within 5% of clean']?.value).toBeCloseTo(0.025, 12);
    expect(t['byzantine robustness: multikrum+lora-fair within 5% of clean']?.met).toBe(true);
    expect(t['exile: no false exiles']).toMatchObject({ value: 0, met: true });
    expect(t['personalization: bond + council beats council-only']?.value).toBeCloseTo(0.3015, 12);
    expect(t['personalization: bond + council beats bond-only']).toMatchObject({
      met: true,
      value: expect.closeTo(0.0515, 12),
    });
    expect(t['semantic split beats param-random split']).toMatchObject({
      met: true,
      value: expect.closeTo(0.1015, 12),
    });
    expect(t['privacy/utility: monotone in ε within noise']?.met).toBe(true);
    expect(s.worst).toEqual([
      { strategy: 'fedavg-naive', attack: 'collude', council: 0.4, drop: expect.closeTo(0.5, 12) },
      { strategy: 'multikrum+lora-fair', attack: 'collude', council: 0.78, drop: expect.closeTo(0.025, 12) },
    ]);
  });

  it('misses are reported with the shortfall, never hidden', () => {
    const s = summarize(
      x,
      results({ fedavgWorst: 0.7, robustWorst: 0.6, eps1: 0.95, random: 0.95, falseExile: true }),
      16,
    );
    const t = Object.fromEntries(s.targets.map((y) => [y.name, y]));
    expect(t['byzantine robustness: naive fedavg collapses']).toMatchObject({ met: false });
    expect(t['byzantine robustness: naive fedavg collapses']?.detail).toMatch(/short of the goal by 17\.5%/);
    expect(t['byzantine robustness: multikrum+lora-fair within 5% of clean']?.detail).toMatch(/misses by 20\.0%/);
    expect(t['exile: no false exiles']).toMatchObject({ value: 1, met: false });
    expect(t['semantic split beats param-random split']).toMatchObject({ met: false });
    expect(t['semantic split beats param-random split']?.detail).toMatch(/within the noise/);
    expect(t['privacy/utility: monotone in ε within noise']).toMatchObject({ met: false });
    expect(t['privacy/utility: monotone in ε within noise']?.detail).toMatch(/ε 1 scores 95\.0% but ε ∞ only 80\.0%/);
  });
});

describe('a claim the run cannot test is not met', () => {
  it('no false exiles: with fewer rounds than the trust warm-up no forge can be exiled, so 0 proves nothing', () => {
    const r = results({ fedavgWorst: 0.4, robustWorst: 0.78, eps1: 0.6, random: 0.8 });
    const short = summarize({ ...x, rounds: 2 }, r, 16).targets.find((y) => y.name === 'exile: no false exiles');
    expect(short).toMatchObject({ value: 0, met: false });
    expect(short?.detail).toMatch(
      /not judged: 2 rounds run; the council exiles no forge before it has been scored in 3 rounds/,
    );
    const long = summarize({ ...x, rounds: 3 }, r, 16).targets.find((y) => y.name === 'exile: no false exiles');
    expect(long).toMatchObject({ value: 0, met: true });
  });
});

describe('a claim that must beat the noise over seeds is not met on one seed', () => {
  it('personalization and the split controls: with one seed the noise is not measured, so the target is not met, and says why', () => {
    const one: Experiment = { ...x, seeds: [1] };
    const s = summarize(
      one,
      results({ fedavgWorst: 0.4, robustWorst: 0.78, eps1: 0.6, random: 0.8 }).filter((r) => r.cell.seed === 1),
      16,
    );
    const t = Object.fromEntries(s.targets.map((y) => [y.name, y]));
    for (const name of [
      'personalization: bond + council beats council-only',
      'personalization: bond + council beats bond-only',
      'semantic split beats param-random split',
    ]) {
      expect(t[name], name).toMatchObject({ met: false });
      expect(t[name]?.value, name).toBeGreaterThan(0);
      expect(t[name]?.detail, name).toMatch(/one seed: the noise over seeds is not measured; run 2 or more seeds/);
    }
  });

  it('cold start and Aidos F1: the same on one seed', async () => {
    const { FIXTURE_EXPERIMENT, fixtureCells } = await import('./fixture-summary.js');
    const seed = fixtureCells()[0]?.cell.seed;
    const s = summarize(
      { ...FIXTURE_EXPERIMENT, seeds: [seed as number] },
      fixtureCells().filter((c) => c.cell.seed === seed),
      28,
    );
    for (const prefix of ['cold start', 'Aidos']) {
      const t = s.targets.find((y) => y.name.startsWith(prefix));
      expect(t, prefix).toMatchObject({ met: false });
      expect(t?.value, prefix).toBeGreaterThan(0);
      expect(t?.detail, prefix).toMatch(/one seed: the noise over seeds is not measured; run 2 or more seeds/);
    }
  });
});

describe('metrics per agent', () => {
  it('keeps each agent apart (mean ± sd over seeds) and the text report shows them when several agents are measured', async () => {
    const { renderText } = await import('../../src/simulation/report/text.js');
    const two: Experiment = {
      ...x,
      agents: ['techne', 'metis'],
      strategies: ['multikrum+lora-fair'],
      attacks: ['none'],
      epsilons: [],
    };
    const per = (council: number, personal: number | null): NonNullable<CellResult['agents']['techne']> => ({
      curve: [council],
      council,
      personal:
        personal === null ? null : { bondCouncil: q(personal), councilOnly: q(0.5), bondOnly: q(0.6), forges: 3 },
    });
    const cells = [1, 2].map((seed) => ({
      ...cell('multikrum+lora-fair', 'none', seed, 0.7),
      agents: { techne: per(0.6 + seed / 10, 0.9), metis: per(0.5, null) },
    }));
    const s = summarize(two, cells, 2);
    const techne = s.perAgent.find((r) => r.agent === 'techne');
    const metis = s.perAgent.find((r) => r.agent === 'metis');
    expect(techne).toMatchObject({
      strategy: 'multikrum+lora-fair',
      attack: 'none',
      epsilon: null,
      split: 'semantic',
      council: { mean: expect.closeTo(0.75, 12), n: 2 },
    });
    expect(techne?.council.sd).toBeCloseTo(Math.SQRT1_2 / 10, 12);
    expect(techne?.personal?.bondCouncil.mean).toBeCloseTo(0.9, 12);
    expect(metis).toMatchObject({ council: { mean: 0.5, sd: 0 }, personal: null });
    const text = renderText(two, s);
    expect(text).toMatch(/Per agent/);
    expect(text).toMatch(
      / {2}techne\n {4}multikrum\+lora-fair +75\.0±7\.1\n {4}personal: 90\.0±0\.0 \/ 50\.0±0\.0 \/ 60\.0±0\.0/,
    );
    const { renderHtml } = await import('../../src/simulation/report/html.js');
    expect(renderHtml(two, s, { id: 't', generatedAt: 'now' })).toMatch(
      /<h2 id="agents">Per agent<\/h2>.*<td class="l">metis<\/td>/s,
    );
    expect(
      renderText(x, summarize(x, results({ fedavgWorst: 0.4, robustWorst: 0.78, eps1: 0.6, random: 0.8 }), 16)),
    ).not.toMatch(/Per agent/);
  });
});

describe('targets at scale', () => {
  const at = (
    strategy: SimStrategy,
    epsilon: number,
    council: number,
    seed: number,
    noise: 'local' | 'distributed' = 'local',
    share: 'full' | 'small' = 'full',
  ): CellResult => {
    const c: Cell = { strategy, attack: 'none', epsilon, split: 'semantic', noise, share, seed };
    return {
      ...cell(strategy, 'none', seed, council),
      key: cellKey(c),
      cell: c,
      privacy: {
        sigma: 1,
        releaseSigma: 1,
        q: 0.1,
        rounds: 2,
        observerEpsilon: epsilon,
        releases: { max: 2, mean: 0.2, never: 800 },
        forgeLedgerEpsilon: 30,
        limited: 0,
        sharedValues: share === 'small' ? 4104 : 135176,
      },
    };
  };
  it('ε = 4 against ε = ∞ of the same adapter, per noise: a miss says by how many points', async () => {
    const big: Experiment = {
      ...x,
      forges: 1000,
      cohort: 100,
      byzantine: 0,
      strategies: ['multikrum+lora-fair'],
      attacks: ['none'],
      epsilons: [4, Infinity],
    };
    const cells = [1, 2].flatMap((seed) => [
      at('multikrum+lora-fair', Infinity, 0.8, seed),
      at('multikrum+lora-fair', 4, 0.6, seed),
      at('multikrum+lora-fair', Infinity, 0.78, seed, 'local', 'small'),
      at('fedavg', 4, 0.76, seed, 'distributed', 'small'),
    ]);
    const s = summarize(big, cells, cells.length);
    const t = Object.fromEntries(s.targets.map((y) => [y.name, y]));
    expect(t['privacy/utility at scale: ε = 4 within 5 points of ε = ∞ (local)']).toMatchObject({
      met: false,
      value: expect.closeTo(0.2, 12),
      detail: expect.stringMatching(/vs ε ∞ 80\.0%: 20\.0 points below; misses by 15\.0 points/),
    });
    // The value is a shortfall (positive: ε = 4 scores lower); the goal says so.
    expect(t['privacy/utility at scale: ε = 4 within 5 points of ε = ∞ (local)']?.goal).toMatch(
      /value: points below ε = ∞$/,
    );
    expect(t['privacy/utility at scale: ε = 4 within 5 points of ε = ∞ (distributed-small)']).toMatchObject({
      met: true,
      value: expect.closeTo(0.02, 12),
    });
    expect(t['privacy/utility at scale: ε = 4 within 5 points of ε = ∞ (distributed-small)']?.detail).toMatch(
      /own ledger up to ε 30\.0 over 2 releases/,
    );
    // The text report's privacy table keeps its columns under the longest variant name.
    const { renderText } = await import('../../src/simulation/report/text.js');
    const rows = renderText(big, s)
      .split('\n')
      .filter((l) => /^ {2}(4|∞) +(local|small|distributed|distributed-small) /.test(l));
    expect(rows).toHaveLength(4);
    expect(new Set(rows.map((l) => l.indexOf('±')))).toHaveProperty('size', 1);
    expect(s.privacy.map((p) => `${p.epsilon ?? '∞'} ${p.variant}`)).toEqual([
      '4 local',
      '4 distributed-small',
      '∞ local',
      '∞ small',
    ]);
  });

  it('distributed noise runs FedAvg: its target names the rules it compares, and FedAvg without noise when the grid has it', () => {
    const grid: Experiment = {
      ...x,
      forges: 1000,
      cohort: 100,
      byzantine: 0,
      strategies: ['fedavg', 'multikrum+lora-fair'],
      attacks: ['none'],
      epsilons: [4, Infinity],
    };
    const cells = [1, 2].flatMap((seed) => [
      at('multikrum+lora-fair', Infinity, 0.8, seed),
      at('fedavg', Infinity, 0.95, seed),
      at('multikrum+lora-fair', 4, 0.6, seed),
      at('fedavg', 4, 0.78, seed, 'distributed'),
    ]);
    const t = summarize(grid, cells, cells.length).targets.find(
      (y) => y.name === 'privacy/utility at scale: ε = 4 within 5 points of ε = ∞ (distributed)',
    );
    expect(t?.goal).toMatch(/ε = 4 with fedavg against ε = ∞ with multikrum\+lora-fair/);
    expect(t?.detail).toMatch(/fedavg at ε ∞ \(no noise\): 95\.0%, 17\.0 points above ε 4/);
  });

  it('a default robust rule the cohort cannot hold is a missed target that says why, not a silent gap', () => {
    const big: Experiment = {
      ...x,
      forges: 1000,
      cohort: 100,
      byzantine: 200,
      strategies: ['fedavg-naive', 'fedavg', 'multikrum+lora-fair'],
      attacks: ['none'],
      epsilons: [Infinity],
    };
    const cells = [at('multikrum+lora-fair', Infinity, 0.8, 1)];
    const t = summarize(big, cells, cells.length).targets.find(
      (y) => y.name === 'byzantine robustness: bulyan+lora-fair within 5% of clean',
    );
    expect(t).toMatchObject({ met: false, value: NaN });
    expect(t?.detail).toMatch(
      /^not run: bulyan\+lora-fair with f=32 needs at least 131 forges per cohort .* the smallest cohort that holds it is 391$/,
    );
    // With a cohort that holds it, nothing is claimed for a strategy that was not asked for.
    const small = summarize({ ...big, forges: 11, cohort: 11, byzantine: 2 }, cells, cells.length).targets;
    expect(small.some((y) => y.name.startsWith('byzantine robustness: bulyan'))).toBe(false);
  });

  it('exile: met only when every attacker of every attacked cell fell by the stated round; false exiles counted in every cell', () => {
    const withExiles = (seed: number, rounds: number[]): CellResult => ({
      ...cell('multikrum+lora-fair', 'collude', seed, 0.78),
      exiles: rounds.map((round, i) => ({ forge: `forge-0${i + 1}`, round, byzantine: true })),
    });
    const base = results({ fedavgWorst: 0.4, robustWorst: 0.78, eps1: 0.6, random: 0.8 }).filter(
      (c) => !(c.cell.strategy === 'multikrum+lora-fair' && c.cell.attack === 'collude'),
    );
    const one: Experiment = { ...x, rounds: 6 };
    const ok = summarize(one, [...base, withExiles(1, [3]), withExiles(2, [4])], 16).targets.find((t) =>
      t.name.startsWith('exile: persistent'),
    );
    // sign-flip cells exiled nobody: not met, and the count says how many attackers stayed
    expect(ok).toMatchObject({
      met: false,
      value: 2,
      detail: expect.stringMatching(/sign-flip: 0 of 2 exiled; collude: all exiled by round 4/),
    });
  });
});

describe('cold start', () => {
  const coldTarget = (s: ReturnType<typeof summarize>) => s.targets.find((t) => t.name.startsWith('cold start'));

  it('met when bond + council beats bond-only most with the fewest sessions; the rows pair seeds; the text report shows them', async () => {
    const { FIXTURE_EXPERIMENT, fixtureCells } = await import('./fixture-summary.js');
    const { renderText } = await import('../../src/simulation/report/text.js');
    const s = summarize(FIXTURE_EXPERIMENT, fixtureCells(), 28);
    expect(s.coldStart.map((r) => r.sessions)).toEqual([1, 8]);
    // 1 session: 0.80 − (0.61, 0.62); 8 sessions: 0.90 − (0.87, 0.88)
    expect(s.coldStart[0]?.gain.mean).toBeCloseTo(0.185, 12);
    expect(s.coldStart[1]?.gain.mean).toBeCloseTo(0.025, 12);
    expect(coldTarget(s)).toMatchObject({ met: true, unit: 'points', value: expect.closeTo(0.16, 12) });
    expect(renderText(FIXTURE_EXPERIMENT, s)).toMatch(/Cold start[^\n]*\n[^\n]*sessions[^\n]*\n {2}1 +80\.0±0\.0/);
  });

  it('missed, and says why, when the gain does not shrink with more sessions; not measured without the clean run', async () => {
    const { FIXTURE_EXPERIMENT, fixtureCells } = await import('./fixture-summary.js');
    const cells = fixtureCells().map((c) =>
      c.coldStart
        ? { ...c, coldStart: c.coldStart.map((r) => ({ ...r, bondOnly: q(r.sessions === 1 ? 0.78 : 0.6) })) }
        : c,
    );
    const t = coldTarget(summarize(FIXTURE_EXPERIMENT, cells, 28));
    expect(t).toMatchObject({ met: false, value: expect.closeTo(0.02 - 0.3, 12) });
    expect(t?.detail).toMatch(/missed: .*the gain does not shrink from 1 to 8 sessions/);
    const none = coldTarget(
      summarize(
        FIXTURE_EXPERIMENT,
        fixtureCells().map((c) => ({ ...c, coldStart: null })),
        28,
      ),
    );
    expect(none).toMatchObject({ met: false, detail: expect.stringMatching(/^not measured/) });
    expect(none?.value).toBeNaN();
  });
});

describe('Aidos slop-detection F1', () => {
  const aidosTarget = (s: ReturnType<typeof summarize>) => s.targets.find((t) => t.name.startsWith('Aidos'));

  it('met when the federated adapter beats the stronger single-forge baseline by the margin from round 2 on; the text report shows the rounds', async () => {
    const { FIXTURE_EXPERIMENT, fixtureCells } = await import('./fixture-summary.js');
    const { renderText } = await import('../../src/simulation/report/text.js');
    const s = summarize(FIXTURE_EXPERIMENT, fixtureCells(), 28);
    expect(s.aidos?.rounds.map((r) => r.round)).toEqual([1, 2, 3]);
    // round 2: federated (0.71, 0.72) − max(single 0.52, converged 0.56); round 3: 0.78 − max((0.56, 0.57), 0.56)
    expect(s.aidos?.rounds[1]?.gain.mean).toBeCloseTo(0.155, 12);
    expect(s.aidos?.rounds[2]?.gain.mean).toBeCloseTo(0.215, 12);
    expect(aidosTarget(s)).toMatchObject({ met: true, unit: 'points', value: expect.closeTo(0.155, 12) });
    expect(aidosTarget(s)?.detail).toMatch(/calling every passage slop 66\.7%/);
    expect(renderText(FIXTURE_EXPERIMENT, s)).toMatch(
      /Aidos slop detection[^\n]*\n[^\n]*round[^\n]*\n {2}1 +60\.0±0\.0/,
    );
  });

  it('missed, naming the round, when a single forge comes within the margin; not measured without the clean run', async () => {
    const { FIXTURE_EXPERIMENT, fixtureCells } = await import('./fixture-summary.js');
    const cells = fixtureCells().map((c) =>
      c.aidos ? { ...c, aidos: { ...c.aidos, singleConverged: { f1: 0.65, precision: 0.6, recall: 0.7 } } } : c,
    );
    const t = aidosTarget(summarize(FIXTURE_EXPERIMENT, cells, 28));
    // round 2: (0.71, 0.72) − 0.65 = 0.065 < 0.10; round 3: 0.78 − 0.65 = 0.13
    expect(t).toMatchObject({ met: false, value: expect.closeTo(0.065, 12) });
    expect(t?.detail).toMatch(/missed in round 2$/);
    const none = aidosTarget(
      summarize(
        FIXTURE_EXPERIMENT,
        fixtureCells().map((c) => ({ ...c, aidos: null })),
        28,
      ),
    );
    expect(none).toMatchObject({ met: false, detail: expect.stringMatching(/^not measured/) });
    expect(none?.value).toBeNaN();
  });
});
