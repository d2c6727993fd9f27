import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import simulate, { experimentFrom } from '../../src/commands/federate/simulate.js';
import { parseOptions } from '../../src/run-command.js';
import { inProcessCouncil } from '../../src/simulation/council-port.js';
import { DEFAULT_EXPERIMENT, type Experiment } from '../../src/simulation/experiment.js';
import { runExperiment } from '../../src/simulation/run.js';
import { testCtx } from '../helpers/ctx.js';

// A tiny federation (5 forges, 1 Byzantine, 2 rounds, small sample forges): the whole pipeline —
// sample forges, data views, real trainer, real privacy code, the council in-process — in seconds.
const TINY = {
  forges: '5',
  byzantine: '1',
  rounds: '2',
  seeds: '1',
  strategies: 'multikrum+lora-fair',
  attacks: 'none,collude',
  epsilons: 'inf',
  heldOut: '20',
  sessions: '3',
  turns: '8',
  coldStart: '1,3',
  newcomers: '1',
};

describe('kourai federate simulate (in-process council)', () => {
  const ctx = testCtx();
  afterAll(() => ctx.cleanup());

  it('runs every cell, reports the targets, writes a self-contained report, and a second run reuses the finished cells', async () => {
    const out = join(ctx.home, 'report');
    const opts = parseOptions(simulate, { ...TINY, out, json: true });
    const r = await simulate.run(opts, ctx);
    expect(r.complete).toBe(true);
    // multikrum × {none, collude}; the small shared adapter at ε ∞; the two parameter-split controls.
    expect(r.summary.cells).toEqual({ done: 5, total: 5 });
    const names = r.targets.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'byzantine robustness: multikrum+lora-fair within 5% of clean',
        'exile: no false exiles',
        'personalization: bond + council beats council-only',
        'personalization: bond + council beats bond-only',
        'semantic split beats param-random split',
        'semantic split beats fedsa split',
        'cold start: the fewer sessions, the more bond + council beats bond-only',
        'Aidos slop-detection F1: federated council beats a single forge, round by round',
      ]),
    );
    for (const t of r.targets) {
      expect(typeof t.met).toBe('boolean');
      // A claim the harness does not measure (or a rule it could not run) says so and is never met.
      if (!Number.isFinite(t.value))
        expect(t).toMatchObject({ met: false, detail: expect.stringMatching(/^not (measured|run)/) });
    }
    expect(r.targets.filter((t) => Number.isFinite(t.value)).length).toBeGreaterThanOrEqual(6);
    // Every honest forge-round trained and sent something; held-out accuracies are accuracies.
    for (const c of r.cell_results) {
      expect(c.forgeRounds).toBe(10);
      expect(c.curve).toHaveLength(2);
      for (const v of c.curve) {
        expect(v).toBeGreaterThanOrEqual(0);
        expect(v).toBeLessThanOrEqual(1);
      }
    }
    const clean = r.cell_results.find((c) => c.cell.attack === 'none' && c.cell.split === 'semantic');
    expect(clean?.personal?.forges).toBeGreaterThan(0);
    // Cold start: one newcomer per session count, measured in the clean reference cell only.
    expect(clean?.coldStart?.map((c) => [c.sessions, c.forges])).toEqual([
      [1, 1],
      [3, 1],
    ]);
    expect(r.cell_results.filter((c) => c.coldStart !== null)).toHaveLength(1);
    expect(r.summary.coldStart.map((c) => c.sessions)).toEqual([1, 3]);
    // Aidos's slop detection: measured beside the clean reference cell only, after every round
    expect(r.cell_results.filter((c) => c.aidos)).toHaveLength(1);
    expect(clean?.aidos?.federated).toHaveLength(2);
    expect(clean?.aidos?.single).toHaveLength(2);
    for (const d of [...(clean?.aidos?.federated ?? []), ...(clean?.aidos?.single ?? [])]) {
      expect(d.f1).toBeGreaterThanOrEqual(0);
      expect(d.f1).toBeLessThanOrEqual(1);
    }
    expect(clean?.aidos?.probe).toBe(20);
    // the trivial detector on a balanced probe: everything called slop, F1 2/3
    expect(clean?.aidos?.allSlop.f1).toBeCloseTo(2 / 3, 12);
    // --json is one document; ε = ∞ is null in it; the Aidos target is in its targets
    const doc = JSON.parse(JSON.stringify(r)) as {
      experiment: { epsilon: unknown };
      targets: Record<string, unknown>[];
    };
    expect(doc.experiment.epsilon).toBeNull();
    const aidos = doc.targets.find((t) => String(t.name).startsWith('Aidos slop-detection F1'));
    expect(Object.keys(aidos ?? {}).sort()).toEqual(['detail', 'goal', 'met', 'name', 'unit', 'value']);
    expect(aidos?.value).toEqual(expect.any(Number));
    expect(aidos?.detail).toMatch(/round 1: [\d.]+% vs [\d.]+%.*round 2: /);
    // the report: one file, charts inline, nothing fetched
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toMatch(/<svg class="chart" data-chart="rounds-multikrum\+lora-fair"/);
    expect(html).toMatch(/<svg class="chart" data-chart="aidos"/);
    expect(html).not.toMatch(/<script|src=|href="http|url\(/);
    // the report names the command that reproduces it, and that command parses to the same experiment
    const cmd = /Reproduce: <code>kourai federate simulate ([^<]*) --out [^<]*<\/code>/.exec(html)?.[1] ?? '';
    expect(cmd).toBe(
      '--forges 5 --byzantine 1 --rounds 2 --sessions 3 --turns 8 --strategies multikrum+lora-fair --attacks none,collude --epsilons inf --seeds 1 --held-out 20 --cold-start 1,3 --newcomers 1',
    );
    const again0 = Object.fromEntries(
      cmd
        .split(' --')
        .map((s) => s.replace(/^--/, '').split(' '))
        .map(([k, v]) => [(k as string).replace(/-(\w)/g, (_, c: string) => c.toUpperCase()), v]),
    );
    expect(experimentFrom(parseOptions(simulate, again0))).toEqual(experimentFrom(opts));
    expect(existsSync(join(out, 'results.json'))).toBe(true);
    expect(readFileSync(r.cells_file, 'utf8').trim().split('\n')).toHaveLength(5);

    const again = await simulate.run(opts, ctx);
    expect(again.bench.reused_cells).toBe(5);
    expect(again.bench.forge_rounds).toBe(0);
    expect(again.summary).toEqual(r.summary);
  }, 240_000);

  it('bad flags: one line naming the flag (exit 2), nothing written', async () => {
    const fresh = testCtx();
    try {
      const refuse = async (o: Record<string, string>, message: RegExp): Promise<void> => {
        const err = await simulate.run(parseOptions(simulate, { ...TINY, ...o }), fresh).then(
          () => null,
          (e: unknown) => e as Error & { exitCode?: number },
        );
        expect(err, JSON.stringify(o)).toMatchObject({ exitCode: 2, message: expect.stringMatching(message) });
        expect(err?.message).not.toMatch(/\n/);
      };
      await refuse({ cohort: '6' }, /^--cohort 6 is larger than --forges 5$/);
      await refuse(
        { forges: '0', byzantine: '0', attacks: 'none' },
        /^--forges 0: a federation needs at least one forge$/,
      );
      await refuse(
        { forges: '100', byzantine: '20', cohort: '10', strategies: 'bulyan+lora-fair' },
        // hypergeometric(100, 20, 10): more than 6 Byzantine forges in a cohort with probability ≤ 1e-3 (scipy).
        /^bulyan\+lora-fair with f=6 needs at least 27 forges per cohort \(n ≥ 4f\+3\); got --cohort 10 \(f = 6: .*\); the smallest cohort that holds it is 83$/,
      );
      await refuse({ epsilons: '4,0' }, /^--epsilons: "0" is not an ε/);
      await refuse({ epsilon: '-2' }, /^--epsilon: "-2" is not an ε/);
      await refuse({ coldStart: '1,0' }, /^--cold-start: "0" is not a session count/);
      await refuse({ coldStart: '2,x' }, /^--cold-start: "x" is not a session count/);
      expect(existsSync(join(fresh.home, 'simulations'))).toBe(false);
    } finally {
      fresh.cleanup();
    }
    await expect(
      simulate.run(parseOptions(simulate, { ...TINY, strategies: 'bulyan+lora-fair' }), ctx),
    ).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/bulyan\+lora-fair with f=1 needs at least 7 forges/),
    });
    await expect(simulate.run(parseOptions(simulate, { ...TINY, attacks: 'none,nope' }), ctx)).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/--attacks: unknown value "nope"/),
    });
    await expect(simulate.run(parseOptions(simulate, { ...TINY, epsilon: '-1' }), ctx)).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringMatching(/--epsilon/),
    });
  });
});

describe('Ctrl-C keeps the finished cells', () => {
  it('stops after the cell in progress; what finished is handed out, the rest is not run', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'kourai-sim-'));
    const x: Experiment = {
      ...DEFAULT_EXPERIMENT,
      forges: 5,
      cohort: 5,
      byzantine: 1,
      rounds: 1,
      seeds: [1],
      strategies: ['multikrum+lora-fair'],
      attacks: ['none', 'collude'],
      epsilons: [Infinity],
      sessions: 3,
      turns: 8,
      heldOut: 10,
      coldStart: [],
    };
    const ac = new AbortController();
    const kept: string[] = [];
    try {
      const ticks: [number, number][] = [];
      const out = await runExperiment({
        x,
        scratch,
        port: inProcessCouncil,
        signal: ac.signal,
        onCell: (r) => (kept.push(r.key), ac.abort()),
        onProgress: (done, total) => ticks.push([done, total]),
      });
      // Progress (what the ETA is computed from): forge-rounds of the whole grid, never going back.
      expect(new Set(ticks.map(([, total]) => total))).toEqual(new Set([25]));
      expect(ticks.map(([d]) => d)).toEqual([...ticks.map(([d]) => d)].sort((a, b) => a - b));
      expect(ticks.at(-1)?.[0]).toBe(5);
      expect(out.cancelled).toBe(true);
      expect(out.cells.map((c) => c.key)).toEqual(kept);
      expect(kept).toHaveLength(1);
      expect(out.total).toBe(5);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 120_000);
});
