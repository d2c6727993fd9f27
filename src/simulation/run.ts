import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CancelledError } from '../errors.js';
import { BaseModel } from '../train/base-model.js';
import { builtinBaseSpec } from '../train/base-spec.js';
import { inputEncoder } from '../train/encoder/inputs.js';
import type { Features } from '../train/features.js';
import { fingerprintOf } from '../train/fingerprint.js';
import { runCell, type CellResult, type SeedContext } from './cell.js';
import type { CouncilPort, CouncilSetup } from './council-port.js';
import { Evaluator } from './evaluate.js';
import { cellKey, cellsOf, type Experiment } from './experiment.js';
import { buildForges } from './forges.js';

/**
 * Runs an experiment's grid, seed by seed (a seed's forges, held-out probes and cell-independent
 * trainings are built once and shared by its cells). Finished cells are handed to `onCell` as
 * they finish (the command appends them to a file) and cells already finished are skipped, so
 * Ctrl-C loses at most the cell in progress and the same command resumes.
 */
export interface RunOptions {
  x: Experiment;
  /** A scratch directory (forges' memoirs, council databases); removed afterwards. */
  scratch: string;
  port: (setup: CouncilSetup) => Promise<CouncilPort>;
  signal?: AbortSignal;
  /** Cells finished earlier (by key), reused as they are. */
  finished?: ReadonlyMap<string, CellResult>;
  onCell?(r: CellResult): void;
  /** Forge-rounds done and expected (for progress with ETA). */
  onProgress?(done: number, total: number, label: string): void;
}

export interface RunOutcome {
  cells: CellResult[];
  /** Cells of the grid (complete when cells.length === total). */
  total: number;
  reused: number;
  cancelled: boolean;
  /** Simulated forge-rounds this run computed, and the wall time it took (for the bench figure). */
  forgeRounds: number;
  seconds: number;
}

export async function runExperiment(o: RunOptions): Promise<RunOutcome> {
  const { x } = o;
  const t0 = performance.now();
  const grid = cellsOf(x);
  const results: CellResult[] = [];
  const todo = grid.filter((c) => {
    const prev = o.finished?.get(cellKey(c));
    if (prev) results.push(prev);
    return !prev;
  });
  const reused = results.length;
  const perCell = x.forges * x.rounds * x.agents.length;
  const total = todo.length * perCell;
  let done = 0;
  let forgeRounds = 0;
  const shared = sharedModel();
  let cancelled = false;
  try {
    for (const seed of x.seeds) {
      const cells = todo.filter((c) => c.seed === seed);
      if (cells.length === 0) continue;
      const dir = mkdtempSync(join(o.scratch, `seed-${seed}-`));
      try {
        o.onProgress?.(done, total, `seed ${seed}: building ${x.forges} forges`);
        const sc = seedContext(x, seed, dir, shared, o.signal);
        if (o.signal?.aborted) throw new CancelledError();
        for (const cell of cells) {
          const cellDir = mkdtempSync(join(dir, 'council-'));
          const before = done;
          const label = `seed ${seed}: ${cell.strategy} / ${cell.attack} / ε ${cell.epsilon === Infinity ? '∞' : cell.epsilon}${cell.split === 'random' ? ' / random split' : ''}`;
          o.onProgress?.(done, total, label);
          const r = await runCell(sc, cell, {
            port: o.port,
            dataDir: cellDir,
            ...(o.signal ? { signal: o.signal } : {}),
            onForgeRound: (n) => {
              done = before + Math.min(n, perCell);
              o.onProgress?.(done, total, label);
            },
          });
          done = before + perCell;
          forgeRounds += r.forgeRounds;
          results.push(r);
          o.onCell?.(r);
        }
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  } catch (err) {
    if (!(err instanceof CancelledError)) throw err;
    cancelled = true;
  }
  const order = new Map(grid.map((c, i) => [cellKey(c), i]));
  results.sort((a, b) => (order.get(a.key) ?? 0) - (order.get(b.key) ?? 0));
  return { cells: results, total: grid.length, reused, cancelled, forgeRounds, seconds: (performance.now() - t0) / 1000 };
}

export interface SharedModel {
  base: BaseModel;
  fingerprint: string;
  encode: (text: string) => Features;
}

/** The frozen base, its fingerprint and a memoised encoder (texts recur across rounds and cells). */
export function sharedModel(): SharedModel {
  const spec = builtinBaseSpec();
  const base = new BaseModel(spec);
  const enc = inputEncoder(spec);
  const cache = new Map<string, Features>();
  const encode = (t: string): Features => {
    let f = cache.get(t);
    if (!f) {
      f = enc(t, null);
      cache.set(t, f);
    }
    return f;
  };
  return { base, fingerprint: fingerprintOf(base), encode };
}

/** One seed's forges (memoirs under `dir`), held-out probes and memo of cell-independent trainings. */
export function seedContext(x: Experiment, seed: number, dir: string, m: SharedModel = sharedModel(), signal?: AbortSignal): SeedContext {
  const forges = buildForges(x, seed, dir, m.base.spec.specialists, signal);
  return { x, seed, base: m.base, fingerprint: m.fingerprint, encode: m.encode, evaluator: new Evaluator(m.base, m.encode, x.heldOut, 10_000 + seed), forges, memo: new Map() };
}
