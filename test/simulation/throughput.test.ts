import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCell, type CellResult } from '../../src/simulation/cell.js';
import { inProcessCouncil } from '../../src/simulation/council-port.js';
import { DEFAULT_EXPERIMENT, type Cell, type Experiment } from '../../src/simulation/experiment.js';
import { buildForges } from '../../src/simulation/forges.js';
import { seedContext, sharedModel } from '../../src/simulation/run.js';
import { builtinBaseSpec } from '../../src/train/base-spec.js';

const dir = mkdtempSync(join(tmpdir(), 'kourai-sim-throughput-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const small: Experiment = {
  ...DEFAULT_EXPERIMENT,
  forges: 6,
  cohort: 3,
  byzantine: 0,
  rounds: 2,
  seeds: [31],
  strategies: ['fedavg'],
  reference: 'fedavg',
  attacks: ['none'],
  epsilons: [Infinity],
  sessions: 3,
  turns: 8,
  heldOut: 30,
  personalSample: 1,
};

describe('a simulated forge is its data view, built when first used', () => {
  it('writes nothing for a forge no cohort touches, and builds the same views whatever the order', () => {
    const specialists = builtinBaseSpec().specialists;
    const home = mkdtempSync(join(dir, 'lazy-'));
    const lazy = buildForges(small, 31, home, specialists);
    expect(lazy).toHaveLength(6);
    expect(lazy.map((g) => g.name)).toEqual(['forge-01', 'forge-02', 'forge-03', 'forge-04', 'forge-05', 'forge-06']);
    // Names, profiles and roles are known without any data: no memoir written yet.
    expect(existsSync(join(home, 'seed-31'))).toBe(false);
    const late = lazy[4]?.council.get('techne') ?? [];
    expect(late.length).toBeGreaterThan(0);
    expect(readdirSync(join(home, 'seed-31'))).toHaveLength(1);

    const inOrder = buildForges(small, 31, mkdtempSync(join(dir, 'eager-')), specialists);
    for (const g of inOrder) void g.bond;
    expect(inOrder[4]?.council.get('techne')).toEqual(late);
    expect(inOrder[4]?.bond.get('techne')).toEqual(lazy[4]?.bond.get('techne'));
    expect(inOrder[4]?.flipped.get('techne')).toEqual(lazy[4]?.flipped.get('techne'));
  });
});

describe('memoised round-1 trainings', () => {
  it('a cell gives the same numbers whether its round-1 trainings come from the memo or are trained fresh', async () => {
    const cell: Cell = {
      strategy: 'fedavg',
      attack: 'none',
      epsilon: Infinity,
      split: 'semantic',
      noise: 'local',
      share: 'small',
      seed: 31,
    };
    const m = sharedModel();
    const sc = seedContext(small, 31, mkdtempSync(join(dir, 'memo-')), m);
    const run = (): Promise<CellResult> =>
      runCell(sc, cell, { port: inProcessCouncil, dataDir: mkdtempSync(join(dir, 'council-')) });
    const fresh = await run();
    const memoKeys = [...sc.memo.keys()].filter((k) => k.startsWith('r1|'));
    expect(memoKeys.length).toBe(small.cohort);
    const again = await run();
    expect(again.curve).toEqual(fresh.curve);
    expect(again.rounds).toEqual(fresh.rounds);
  }, 300_000);
});
