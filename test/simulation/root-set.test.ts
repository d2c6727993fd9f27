import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadRootSet } from '../../src/council/root-memoir.js';
import { runCell } from '../../src/simulation/cell.js';
import { inProcessCouncil } from '../../src/simulation/council-port.js';
import { DEFAULT_EXPERIMENT, type Cell, type Experiment } from '../../src/simulation/experiment.js';
import { seedContext, sharedModel } from '../../src/simulation/run.js';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import { councilView } from '../../src/train/examples/views.js';
import { openIndex } from '../../src/memoir-index/memoir-index.js';
import { updateIndexed } from '../../src/memoir-index/indexed.js';
import { resolveMemoirs } from '../../src/memoir/file/discover.js';

const dir = mkdtempSync(join(tmpdir(), 'kourai-sim-root-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const x: Experiment = {
  ...DEFAULT_EXPERIMENT,
  forges: 5,
  cohort: 5,
  byzantine: 1,
  rounds: 3,
  seeds: [433],
  strategies: ['multikrum+lora-fair'],
  reference: 'multikrum+lora-fair',
  attacks: ['sign-flip'],
  epsilon: Infinity,
  epsilons: [Infinity],
  sessions: 3,
  turns: 8,
  heldOut: 30,
  personalSample: 1,
  coldStart: [],
  rootSet: true,
};

describe("the simulated councils' root set", () => {
  it("holds pairs no forge's memoir holds, and each round records what every sampled forge's update did to them", async () => {
    const sc = seedContext(x, 433, mkdtempSync(join(dir, 'home-')), sharedModel());
    expect(sc.rootMemoir).not.toBeNull();
    // Disjoint from every forge's data: no root pair's text is in any forge's council view.
    const home = mkdtempSync(join(dir, 'root-'));
    const index = openIndex(home);
    let rootTexts: Set<string>;
    try {
      const source = {
        index,
        files: updateIndexed(index, resolveMemoirs([sc.rootMemoir as string], home, '/')).fileIds,
      };
      rootTexts = new Set(
        councilView(source, 'techne').examples.flatMap((e) => (e.kind === 'pair' ? [e.chosen, e.rejected] : [])),
      );
    } finally {
      index.close();
    }
    expect(rootTexts.size).toBeGreaterThan(0);
    for (const g of sc.forges)
      for (const e of g.council.get('techne') ?? [])
        if (e.kind === 'pair') expect(rootTexts.has(e.chosen) && rootTexts.has(e.rejected)).toBe(false);
    expect(
      loadRootSet({ root_memoir: sc.rootMemoir, data_dir: home, base_fingerprints: [BUILTIN_FINGERPRINT] })?.size(
        'techne',
      ),
    ).toBeGreaterThanOrEqual(10);

    const cell: Cell = {
      strategy: 'multikrum+lora-fair',
      attack: 'sign-flip',
      epsilon: Infinity,
      split: 'semantic',
      noise: 'local',
      share: 'full',
      seed: 433,
    };
    const r = await runCell(sc, cell, { port: inProcessCouncil, dataDir: mkdtempSync(join(dir, 'council-')) });
    for (const round of r.rounds) {
      const names = round.cohort.map((i) => sc.forges[i]?.name as string);
      expect(Object.keys(round.root ?? {}).sort()).toEqual([...names].sort());
      for (const n of names) expect(Number.isFinite(round.root?.[n]?.margin)).toBe(true);
    }
  }, 600_000);
});
