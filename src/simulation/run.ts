import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { CancelledError } from '../errors.js';
import type { BaseModel } from '../train/base-model.js';
import { builtinBaseSpec } from '../train/base-spec.js';
import type { Features } from '../train/features.js';
import { fingerprintOf } from '../train/fingerprint.js';
import { CachedBase, cachedEncoder } from './cached-model.js';
import { runCell, type CellResult, type SeedContext } from './cell.js';
import type { CouncilPort, CouncilSetup } from './council-port.js';
import { Evaluator } from './evaluate.js';
import { runAidos } from './aidos.js';
import { cellKey, cellLabel, cellsOf, measuresAidos, measuresColdStart, type Experiment } from './experiment.js';
import { buildForges, buildNewcomers, writeRootMemoir } from './forges.js';
import { inlinePool, workerPool, type TrainPool } from './train-pool.js';

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
  /** Worker threads for the trainings (capped at the cores); 0: train on this thread. */
  threads?: number;
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
  /** Worker threads the trainings ran on (0: this thread). */
  threads: number;
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
  const perCell = x.cohort * x.rounds * x.agents.length;
  const total = todo.length * perCell;
  let done = 0;
  let forgeRounds = 0;
  const shared = sharedModel();
  let cancelled = false;
  const stopper = new AbortController();
  const signal = o.signal ? AbortSignal.any([o.signal, stopper.signal]) : stopper.signal;
  const pool: TrainPool =
    ((o.threads ?? 0) > 0 ? workerPool(shared.base.spec, o.threads ?? 0, signal) : null) ??
    inlinePool(shared.base, shared.encode, () => signal.aborted);
  try {
    for (const seed of x.seeds) {
      const cells = todo.filter((c) => c.seed === seed);
      if (cells.length === 0) continue;
      const dir = mkdtempSync(join(o.scratch, `seed-${seed}-`));
      try {
        o.onProgress?.(done, total, `seed ${seed}: building ${x.forges} forges`);
        const sc = seedContext(x, seed, dir, shared, pool, o.signal);
        if (o.signal?.aborted) throw new CancelledError();
        for (const cell of cells) {
          const cellDir = mkdtempSync(join(dir, 'council-'));
          const before = done;
          const label = `seed ${seed}: ${cellLabel(cell)}`;
          o.onProgress?.(done, total, label);
          // The cell's council database goes as soon as the cell is done: with cohorts of a hundred
          // it holds hundreds of megabytes of submissions, and nothing reads them afterwards.
          const hooks = {
            port: o.port,
            dataDir: cellDir,
            ...(o.signal ? { signal: o.signal } : {}),
            onForgeRound: (n: number) => {
              done = before + Math.min(n, perCell);
              o.onProgress?.(done, total, label);
            },
          };
          const r = await runCell(sc, cell, hooks)
            .then(async (r) => {
              if (!measuresAidos(x, cell)) return r;
              o.onProgress?.(done, total, `${label}: Aidos slop detection`);
              return { ...r, aidos: await runAidos(sc, cell, hooks) };
            })
            .finally(() => rmSync(cellDir, { recursive: true, force: true }));
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
  } finally {
    stopper.abort();
    await pool.close();
  }
  const order = new Map(grid.map((c, i) => [cellKey(c), i]));
  results.sort((a, b) => (order.get(a.key) ?? 0) - (order.get(b.key) ?? 0));
  return {
    cells: results,
    total: grid.length,
    reused,
    cancelled,
    forgeRounds,
    seconds: (performance.now() - t0) / 1000,
    threads: pool.threads,
  };
}

export interface SharedModel {
  base: BaseModel;
  fingerprint: string;
  encode: (text: string) => Features;
}

/** The frozen base, its fingerprint and the encoder, both caching per text (texts recur across rounds and cells). */
export function sharedModel(): SharedModel {
  const spec = builtinBaseSpec();
  const base = new CachedBase(spec);
  return { base, fingerprint: fingerprintOf(base), encode: cachedEncoder(spec) };
}

/** One seed's forges (memoirs under `dir`), held-out probes and memo of cell-independent trainings. */
export function seedContext(
  x: Experiment,
  seed: number,
  dir: string,
  m: SharedModel = sharedModel(),
  pool: TrainPool = inlinePool(m.base, m.encode),
  signal?: AbortSignal,
): SeedContext {
  const forges = buildForges(x, seed, dir, m.base.spec.specialists, signal);
  const wantsCold = cellsOf(x).some((c) => c.seed === seed && measuresColdStart(x, c));
  const newcomers = wantsCold ? buildNewcomers(x, seed, dir, m.base.spec.specialists, signal) : [];
  return {
    x,
    seed,
    base: m.base,
    fingerprint: m.fingerprint,
    encode: m.encode,
    evaluator: new Evaluator(m.base, m.encode, x.heldOut, 10_000 + seed),
    forges,
    newcomers,
    memo: new Map(),
    pool,
    rootMemoir: x.rootSet ? writeRootMemoir(dir, x.turns) : null,
  };
}
