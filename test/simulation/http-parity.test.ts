import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCell, type CellResult } from '../../src/simulation/cell.js';
import { inProcessCouncil } from '../../src/simulation/council-port.js';
import { DEFAULT_EXPERIMENT, type Cell, type Experiment } from '../../src/simulation/experiment.js';
import { httpCouncil } from '../../src/simulation/http-council.js';
import { seedContext, sharedModel } from '../../src/simulation/run.js';

// One cell twice: the council in this process on a virtual clock, and `kourai council serve` (the
// built binary) on 127.0.0.1 with every forge a real HTTP client. Noise is seeded, training is
// deterministic, aggregation is the same code: the numbers must agree.
describe('--http: the same experiment through a real council process', () => {
  it('gives the same council quality, round by round, and the same exiles', async () => {
    const x: Experiment = {
      ...DEFAULT_EXPERIMENT,
      forges: 5,
      cohort: 5,
      byzantine: 1,
      rounds: 2,
      seeds: [4],
      strategies: ['multikrum+lora-fair'],
      attacks: ['collude'],
      epsilons: [],
      sessions: 3,
      turns: 8,
      heldOut: 30,
    };
    const cell: Cell = {
      strategy: 'multikrum+lora-fair',
      attack: 'collude',
      epsilon: 4,
      split: 'semantic',
      noise: 'local',
      share: 'full',
      seed: 4,
    };
    const dir = mkdtempSync(join(tmpdir(), 'kourai-http-parity-'));
    try {
      const m = sharedModel();
      const results: CellResult[] = [];
      for (const port of [inProcessCouncil, httpCouncil]) {
        const sc = seedContext(x, 4, mkdtempSync(join(dir, 'forges-')), m);
        results.push(await runCell(sc, cell, { port, dataDir: mkdtempSync(join(dir, 'council-')) }));
      }
      const [local, http] = results as [CellResult, CellResult];
      expect(local.sigma).toBeGreaterThan(0);
      expect(http.forgeRounds).toBe(local.forgeRounds);
      expect(http.curve).toHaveLength(2);
      for (let i = 0; i < 2; i++) expect(http.curve[i]).toBeCloseTo(local.curve[i] as number, 9);
      expect(http.exiles).toEqual(local.exiles);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 300_000);
});
