import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { CancelledError, UsageError } from '../../errors.js';
import { FEDERATING_AGENTS, type FederatingAgent } from '../../memoir/format/agents.js';
import { colors } from '../../output/color.js';
import { note } from '../../output/notice.js';
import { SERVER_LR_MAX } from '../../protocol/norm-bound.js';
import { progress } from '../../output/progress.js';
import type { CellResult } from '../../simulation/cell.js';
import { inProcessCouncil } from '../../simulation/council-port.js';
import { runDefinition } from '../../simulation/run-definition.js';
import {
  ATTACKS,
  cellKey,
  cellsOf,
  DEFAULT_EXPERIMENT,
  experimentId,
  problemWith,
  strategyProblem,
  reproduceCommand,
  SIM_STRATEGIES,
  type Attack,
  type Experiment,
  type SimStrategy,
} from '../../simulation/experiment.js';
import { renderText, type Emphasis } from '../../simulation/report/text.js';
import { runExperiment } from '../../simulation/run.js';
import { summarize, type Summary } from '../../simulation/summary.js';
import { optionsSchema } from '../spec-schema.js';
import { defineCommand } from '../types.js';
import { simulate as spec } from './commands.js';

const list = (name: string) =>
  z
    .string()
    .optional()
    .transform((v, c) => {
      if (v === undefined) return undefined;
      const items = v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (items.length === 0) c.addIssue({ code: 'custom', message: `${name}: give at least one value` });
      return items;
    });

const options = optionsSchema(spec, {
  forges: z.coerce.number().int().max(1000).optional(),
  cohort: z.coerce.number().int().optional(),
  byzantine: z.coerce.number().int().min(0).optional(),
  rounds: z.coerce.number().int().min(1).max(1000).optional(),
  agents: list('--agents'),
  sessions: z.coerce.number().int().min(1).max(1000).optional(),
  turns: z.coerce.number().int().min(1).max(1000).optional(),
  strategies: list('--strategies'),
  attacks: list('--attacks'),
  epsilons: list('--epsilons'),
  seeds: list('--seeds'),
  localEpochs: z.coerce.number().int().min(1).max(100).optional(),
  clipNorm: z.coerce.number().positive().optional(),
  serverLr: z.coerce.number().positive().max(SERVER_LR_MAX).optional(),
  heldOut: z.coerce.number().int().min(4).max(10_000).optional(),
  personalSample: z.coerce.number().int().min(1).max(1000).optional(),
  newcomers: z.coerce.number().int().min(1).max(100).optional(),
  threads: z.coerce.number().int().min(0).max(64).optional(),
});

function parseEpsilon(v: string, flag: string): number {
  const t = v.trim().toLowerCase();
  if (t === 'inf' || t === 'infinity' || t === '∞') return Infinity;
  const n = Number(t);
  if (!Number.isFinite(n) || n <= 0)
    throw new UsageError(`${flag}: "${v}" is not an ε (a positive number, or inf for no noise)`);
  return n;
}

function parseColdStart(v: string): number[] {
  if (v.trim().toLowerCase() === 'none') return [];
  const items = v.split(',').map((t) => t.trim());
  return items.map((t) => {
    const n = Number(t);
    if (!Number.isInteger(n) || n < 1 || n > 1000)
      throw new UsageError(`--cold-start: "${t}" is not a session count (a whole number 1–1000, or none)`);
    return n;
  });
}

function oneOf<T extends string>(values: readonly string[], allowed: readonly T[], flag: string): T[] {
  for (const v of values)
    if (!(allowed as readonly string[]).includes(v))
      throw new UsageError(`${flag}: unknown value "${v}" (one of: ${allowed.join(', ')})`);
  return values as T[];
}

/** Defaults < flags, checked whole; a problem names the flag. */
export function experimentFrom(o: z.output<typeof options>): Experiment {
  const d = DEFAULT_EXPERIMENT;
  const x: Experiment = {
    forges: o.forges ?? d.forges,
    cohort: o.cohort ?? o.forges ?? d.forges,
    byzantine: o.byzantine ?? d.byzantine,
    rounds: o.rounds ?? d.rounds,
    agents: o.agents ? oneOf<FederatingAgent>(o.agents, FEDERATING_AGENTS, '--agents') : d.agents,
    sessions: o.sessions ?? d.sessions,
    turns: o.turns ?? d.turns,
    strategies: o.strategies ? oneOf<SimStrategy>(o.strategies, SIM_STRATEGIES, '--strategies') : d.strategies,
    attacks: o.attacks ? oneOf<Attack>(o.attacks, ATTACKS, '--attacks') : d.attacks,
    epsilon: o.epsilon !== undefined ? parseEpsilon(o.epsilon, '--epsilon') : d.epsilon,
    epsilons: o.epsilons ? o.epsilons.map((e) => parseEpsilon(e, '--epsilons')) : d.epsilons,
    reference: o.reference
      ? (oneOf<SimStrategy>([o.reference], SIM_STRATEGIES, '--reference')[0] as SimStrategy)
      : d.reference,
    seeds: o.seeds
      ? o.seeds.map((s) => {
          const n = Number(s);
          if (!Number.isSafeInteger(n)) throw new UsageError(`--seeds: "${s}" is not a whole number`);
          return n;
        })
      : d.seeds,
    localEpochs: o.localEpochs ?? d.localEpochs,
    clipNorm: o.clipNorm ?? d.clipNorm,
    serverLr: o.serverLr ?? d.serverLr,
    delta: d.delta,
    heldOut: o.heldOut ?? d.heldOut,
    personalSample: o.personalSample ?? d.personalSample,
    coldStart: o.coldStart !== undefined ? parseColdStart(o.coldStart) : d.coldStart,
    newcomers: o.newcomers ?? d.newcomers,
    rootSet: o.rootSet === true,
  };
  if (o.byzantine === undefined && o.forges !== undefined) x.byzantine = Math.floor(x.forges / 5);
  if (x.byzantine === 0 && o.attacks === undefined) x.attacks = ['none'];
  // Of the default strategies, those the cohort cannot hold are left out (the targets say why);
  // a strategy asked for by name is refused instead.
  if (o.strategies === undefined) x.strategies = x.strategies.filter((s) => strategyProblem(x, s) === null);
  const problem = problemWith(x);
  if (problem) throw new UsageError(problem);
  return x;
}

/** Peak resident memory of this process (its worker threads included) since the call, in MB, sampled every 250 ms. */
function peakRss(): () => number {
  let peak = process.memoryUsage.rss();
  const t = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 250);
  t.unref();
  return () => {
    clearInterval(t);
    return Math.max(peak, process.memoryUsage.rss()) / 2 ** 20;
  };
}

/** The experiment as JSON (ε = ∞ is null). */
export function experimentJson(x: Experiment): Record<string, unknown> {
  return {
    ...x,
    epsilon: x.epsilon === Infinity ? null : x.epsilon,
    epsilons: x.epsilons.map((e) => (e === Infinity ? null : e)),
  };
}

export interface SimulateResult {
  id: string;
  experiment: Record<string, unknown>;
  /** Where finished cells are kept (the same command resumes from them). */
  cells_file: string;
  report: string | null;
  complete: boolean;
  summary: Summary;
  targets: Summary['targets'];
  bench: {
    seconds: number;
    forge_rounds: number;
    forge_rounds_per_second: number;
    reused_cells: number;
    threads: number;
    peak_rss_mb: number;
  };
  cell_results: CellResult[];
}

const jsonSafe = (k: string, v: unknown): unknown =>
  v === Infinity ? null : typeof v === 'number' && Number.isNaN(v) ? null : v;

function readFinished(file: string, id: string): Map<string, CellResult> {
  const out = new Map<string, CellResult>();
  if (!existsSync(file)) return out;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    if (!line.trim()) continue;
    try {
      const rec = JSON.parse(line) as { id?: string; result?: CellResult };
      if (rec.id !== id || !rec.result) continue;
      const r = rec.result;
      // JSON has no ∞: the cell's ε comes back as null.
      if (r.cell.epsilon === null) r.cell.epsilon = Infinity;
      const p = r.privacy as { observerEpsilon: number | null; forgeLedgerEpsilon: number | null } | undefined;
      if (p?.observerEpsilon === null) p.observerEpsilon = Infinity;
      if (p?.forgeLedgerEpsilon === null) p.forgeLedgerEpsilon = Infinity;
      r.coldStart ??= null;
      for (const round of r.rounds ?? []) {
        round.signal ??= NaN;
        round.noise ??= NaN;
      }
      out.set(r.key, r);
    } catch {
      // A torn last line (Ctrl-C mid-write) is ignored: that cell runs again.
    }
  }
  return out;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<SimulateResult> {
    const x = experimentFrom(opts);
    if (opts.strategies === undefined)
      for (const s of DEFAULT_EXPERIMENT.strategies)
        if (!x.strategies.includes(s)) note(ctx, `${s} is not run: ${strategyProblem(x, s)}`);
    const id = experimentId(x, runDefinition());
    const dir = join(kouraiHome(ctx), 'simulations', id);
    mkdirSync(dir, { recursive: true });
    // --http keeps its own cells: its point is to redo the experiment through a real server.
    const cellsFile = join(dir, opts.http ? 'cells-http.ndjson' : 'cells.ndjson');
    if (opts.fresh) rmSync(cellsFile, { force: true });
    const finished = readFinished(cellsFile, id);
    const scratch = mkdtempSync(join(tmpdir(), 'kourai-simulate-'));
    const pending = cellsOf(x).filter((cell) => !finished.has(cellKey(cell))).length;
    const bar = progress(ctx.stderr, {
      label: 'simulate',
      total: pending * x.cohort * x.rounds * x.agents.length,
      unit: 'forge-rounds',
    });
    const peak = peakRss();
    let outcome;
    try {
      outcome = await runExperiment({
        x,
        scratch,
        port: opts.http ? (await import('../../simulation/http-council.js')).httpCouncil : inProcessCouncil,
        signal: ctx.signal,
        finished,
        onCell: (r) => appendFileSync(cellsFile, `${JSON.stringify({ id, result: r }, jsonSafe)}\n`),
        onProgress: (done) => bar.update(done),
        threads: opts.threads ?? availableParallelism(),
      });
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
    bar.finish();
    const summary = summarize(x, outcome.cells, outcome.total);
    let report: string | null = null;
    if (opts.out) {
      const outDir = resolve(ctx.cwd, opts.out);
      mkdirSync(outDir, { recursive: true });
      const { renderHtml } = await import('../../simulation/report/html.js');
      report = join(outDir, 'report.html');
      writeFileSync(
        report,
        renderHtml(x, summary, {
          id,
          generatedAt: ctx.now().toISOString(),
          command: `${reproduceCommand(x)}${opts.http ? ' --http' : ''} --out ${opts.out}`,
        }),
      );
      writeFileSync(
        join(outDir, 'results.json'),
        `${JSON.stringify({ id, experiment: experimentJson(x), summary, cells: outcome.cells }, jsonSafe, 2)}\n`,
      );
    }
    if (outcome.cancelled) {
      throw new CancelledError(
        `simulation cancelled: ${outcome.cells.length} of ${outcome.total} cells finished, kept in ${cellsFile}; run the same command again to finish the rest`,
      );
    }
    return {
      id,
      experiment: experimentJson(x),
      cells_file: cellsFile,
      report,
      complete: outcome.cells.length === outcome.total,
      summary,
      targets: summary.targets,
      bench: {
        seconds: outcome.seconds,
        forge_rounds: outcome.forgeRounds,
        forge_rounds_per_second: outcome.seconds > 0 ? outcome.forgeRounds / outcome.seconds : 0,
        reused_cells: outcome.reused,
        threads: outcome.threads,
        peak_rss_mb: peak(),
      },
      cell_results: outcome.cells,
    };
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const e: Emphasis =
      ctx.colorLevel > 0
        ? { worst: (s) => c.bold.red(s), good: (s) => c.green(s), bad: (s) => c.bold.red(s), dim: (s) => c.dim(s) }
        : { worst: (s) => `${s}*`, good: (s) => s, bad: (s) => s, dim: (s) => s };
    const x = { ...(r.experiment as unknown as Experiment) };
    x.epsilon = (r.experiment.epsilon as number | null) ?? Infinity;
    const lines = [renderText(x, r.summary, e), ''];
    lines.push(
      `${r.bench.forge_rounds} forge-rounds in ${r.bench.seconds.toFixed(1)} s (${r.bench.forge_rounds_per_second.toFixed(2)}/s)${r.bench.reused_cells ? `; ${r.bench.reused_cells} finished cells reused from ${r.cells_file}` : ''}`,
    );
    if (r.report) lines.push(`report: ${r.report}`);
    return lines.join('\n');
  },
});
