import { UNREAD_SIGNAL, UNUSED_PREFERENCE } from '../../train/examples/build.js';
import { z } from 'zod';
import { kouraiHome, type Ctx } from '../../context.js';
import { NotFoundError } from '../../errors.js';
import { AGENTS, type Agent } from '../../memoir/format/agents.js';
import { colors } from '../../output/color.js';
import { blockWidth, renderTable, wrapWords } from '../../output/table.js';
import { openStateDb } from '../../store/state-db.js';
import { AdapterStore } from '../../train/adapter-store.js';
import { describeEncoder } from '../../train/adapter-files.js';
import { openBondSource } from '../../train/bond-source.js';
import { learnConfig } from '../../train/learn-config.js';
import type { Metric } from '../../train/metrics.js';
import { openTextEncoder } from '../../train/text-encoder.js';
import { TrainerWorker } from '../../train/train-in-worker.js';
import { trainBonds, type AgentResult, type TrainEvent } from '../../train/train-bond.js';
import { DEFAULT_SETTINGS, type TrainSettings } from '../../train/trainer.js';
import { initialTrainState, progressLine, trainReducer, type TrainState } from '../../ui/train/use-train-state.js';
import { optionsSchema } from '../spec-schema.js';
import { defineCommand } from '../types.js';
import { bond as spec } from './commands.js';
import { logLine, note } from '../../output/notice.js';
import { indexFeedback } from '../../output/index-feedback.js';
import { count } from '../../format.js';

/**
 * Replay buffer bound per agent for a bond run, a hard one: load-bearing entries first (best
 * ranked), then the most informative, this many in all. Memory follows it, not the memoir (a long
 * memoir holds more load-bearing entries than any bound); a bond retrains after every session, so
 * a few thousand of the agent's entries are plenty.
 */
export const DEFAULT_BOND_BUFFER = 5000;

const int = (what: string, min: number, max: number) =>
  z.coerce
    .number({ error: `must be ${what}` })
    .int({ error: `must be ${what}` })
    .min(min, { error: `must be ${what}` })
    .max(max, { error: `must be ${what}` });

const options = optionsSchema(spec, {
  agent: z
    .array(
      z.enum(AGENTS as unknown as [Agent, ...Agent[]], {
        error: (i) => `unknown agent "${String(i.input)}"; expected one of: ${AGENTS.join(', ')}`,
      }),
    )
    .default([]),
  epochs: int('a whole number of epochs 0–10000', 0, 10_000).optional(),
  patience: int('a whole number of epochs 1–1000', 1, 1000).optional(),
  l2: z.coerce
    .number({ error: 'must be a number' })
    .gt(0, { error: 'must be > 0' })
    .max(100, { error: 'must be ≤ 100' })
    .optional(),
  rank: int('a whole number 1–64', 1, 64).optional(),
  lr: z.coerce
    .number({ error: 'must be a number' })
    .gt(0, { error: 'must be > 0' })
    .max(1, { error: 'must be ≤ 1' })
    .optional(),
  seed: int('a whole number 0–4294967295', 0, 4_294_967_295).optional(),
  buffer: int('a whole number of entries 1–1000000', 1, 1_000_000).default(DEFAULT_BOND_BUFFER),
});

export interface TrainBondResult {
  base_fingerprint: string;
  encoder: string;
  settings: TrainSettings;
  memoirs: number;
  agents: AgentResult[];
}

/** Progress on stderr: the live Ink table on a terminal, else a line per agent every few seconds and at each agent's end. */
async function progressSink(
  ctx: Ctx,
  json: boolean,
): Promise<{ push: (e: TrainEvent) => void; close: () => Promise<void> }> {
  const live = !json && ctx.interactive && ctx.stderr.isTTY === true;
  if (live) {
    const columns = ctx.stderr.columns ?? 100;
    const [{ showTrain }, { MIN_TRAIN_COLUMNS }] = await Promise.all([
      import('../../ui/train/show-train.js'),
      import('../../ui/train/train-view.js'),
    ]);
    if (columns >= MIN_TRAIN_COLUMNS) return showTrain(ctx, columns);
    note(
      ctx,
      `the live table needs ${MIN_TRAIN_COLUMNS} columns (this terminal has ${columns}): progress lines instead`,
    );
  }
  let state: TrainState = initialTrainState;
  const last = new Map<string, number>();
  return {
    push: (e) => {
      state = trainReducer(state, e);
      if (e.type === 'plan' || e.type === 'start') return;
      const agent = e.type === 'progress' ? e.progress.agent : e.agent;
      const t = Date.now();
      if (e.type === 'progress' && t - (last.get(agent) ?? 0) < 5000) return;
      last.set(agent, t);
      const row = state.rows.find((r) => r.agent === agent);
      if (row) logLine(ctx, progressLine(row));
    },
    close: async () => undefined,
  };
}

/** A metric's trivial baselines, as both the table and the per-agent blocks print them. */
function baselinesText(m: Metric, fmtValue: (m: Metric, v: number) => string): string {
  return m.baselines.map((b) => `${b.name.replace(/_/g, ' ')} ${fmtValue(m, b.value)}`).join(', ');
}

/** The result as one short block per agent, for terminals narrower than the table. */
function agentBlocks(
  agents: readonly AgentResult[],
  f: {
    c: ReturnType<typeof colors>;
    label: Record<Metric['kind'], string>;
    fmtValue: (m: Metric, v: number) => string;
    width: number;
  },
): string {
  const lines: string[] = [];
  for (const a of agents) {
    if (a.status !== 'trained') {
      lines.push(wrapWords(`${a.agent}  ${f.c.dim(`unchanged · skipped: ${a.reason}`)}`, f.width));
      continue;
    }
    lines.push(
      `${a.agent}  ${f.c.green(`bond v${a.version}`)}  examples ${a.examples.used} (${a.examples.train}/${a.examples.stopping}/${a.examples.validation})`,
    );
    for (const m of a.metrics.length > 0 ? a.metrics : a.metric ? [a.metric] : []) {
      const baselines = baselinesText(m, f.fmtValue);
      lines.push(
        wrapWords(`  ${f.label[m.kind]} ${f.fmtValue(m, m.value)} (n=${m.n}) · trivial: ${baselines}`, f.width),
      );
    }
  }
  return `${lines.join('\n')}\n`;
}

/** The memoirs a run read, for messages: the files given with --memoir, or how many were found under the home. */
function searched(given: readonly string[], memoirs: readonly string[], home: string): string {
  if (given.length > 0) return memoirs.join(', ');
  return `${count(memoirs.length, 'memoir')} under ${home}`;
}

export default defineCommand({
  options,
  async run(opts, ctx): Promise<TrainBondResult> {
    const home = kouraiHome(ctx);
    const settings: TrainSettings = {
      ...DEFAULT_SETTINGS,
      ...(opts.epochs !== undefined ? { epochs: opts.epochs } : {}),
      ...(opts.patience !== undefined ? { patience: opts.patience } : {}),
      ...(opts.l2 !== undefined ? { l2: opts.l2 } : {}),
      ...(opts.rank !== undefined ? { rank: opts.rank } : {}),
      ...(opts.lr !== undefined ? { lr: opts.lr } : {}),
      ...(opts.seed !== undefined ? { seed: opts.seed } : {}),
    };
    const cfg = learnConfig(home, ctx.env);
    // First: a home it cannot write is said before any training is done.
    const db = openStateDb(home);
    const closers: (() => unknown)[] = [() => db.close()];
    try {
      const source = await openBondSource({
        ctx,
        memoirs: opts.memoir,
        bound: opts.buffer,
        feedback: indexFeedback(ctx, opts.json),
      });
      closers.push(() => source.close());
      const encoder = await openTextEncoder(cfg.encoder, { home, env: ctx.env, signal: ctx.signal });
      closers.push(() => encoder.close());
      const store = new AdapterStore(home, db, { spec: encoder.spec, fingerprint: encoder.fingerprint });
      const worker = new TrainerWorker(ctx.signal);
      closers.push(() => worker.close());
      const sink = await progressSink(ctx, opts.json);
      let agents: AgentResult[];
      try {
        agents = await trainBonds({
          agents: opts.agent.length ? opts.agent : [...AGENTS],
          settings,
          data: (a) => source.data(a),
          encoder,
          store,
          worker,
          now: ctx.now,
          onEvent: sink.push,
        });
      } finally {
        await sink.close();
      }
      if (agents.every((a) => a.status === 'skipped' && a.examples === 0)) {
        throw new NotFoundError(
          `no labelled entries to train on in ${searched(opts.memoir, source.memoirs, home)}`,
          'labels come from player responses, revisions and `kourai feedback`; see `kourai memoir stats`',
        );
      }
      return {
        base_fingerprint: encoder.fingerprint,
        encoder: describeEncoder(encoder.spec),
        settings,
        memoirs: source.memoirs.length,
        agents,
      };
    } finally {
      for (const c of closers.reverse()) await c();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const pct = (x: number): string => `${(x * 100).toFixed(0)}%`;
    const fmtValue = (m: Metric, v: number): string => (m.name === 'mean_abs_error' ? v.toFixed(3) : pct(v));
    const label: Record<Metric['kind'], string> = {
      pair: 'pairwise',
      binary: 'accuracy',
      graded: 'MAE',
      route: 'routing',
    };
    // One row per validation metric (an agent may have pairs and outcomes); agent columns on its first row.
    const rows = r.agents.flatMap((a) =>
      a.status === 'trained' && a.metrics.length > 1
        ? a.metrics.map((m, i) => ({ a, m, first: i === 0 }))
        : [{ a, m: a.status === 'trained' ? a.metric : null, first: true }],
    );
    const table = renderTable(rows, [
      { header: 'AGENT', get: ({ a, first }) => (first ? a.agent : '') },
      {
        header: 'EXAMPLES',
        get: ({ a, first }) =>
          !first
            ? ''
            : a.status === 'trained'
              ? `${a.examples.used} (${a.examples.train}/${a.examples.stopping}/${a.examples.validation})`
              : String(a.examples),
        align: 'right',
      },
      {
        header: 'TRAIN LOSS',
        get: ({ a, first }) => (first && a.status === 'trained' ? a.train_loss.toFixed(4) : ''),
        align: 'right',
      },
      {
        header: 'VAL LOSS',
        get: ({ a, first }) =>
          first && a.status === 'trained' && Number.isFinite(a.validation_loss) ? a.validation_loss.toFixed(4) : '',
        align: 'right',
      },
      {
        header: 'VALIDATION',
        get: ({ m }) => (m ? `${label[m.kind]} ${fmtValue(m, m.value)} ${c.dim(`(n=${m.n})`)}` : ''),
      },
      {
        header: 'TRIVIAL BASELINES',
        get: ({ a, m, first }) =>
          a.status === 'skipped' ? (first ? c.dim(`skipped: ${a.reason}`) : '') : m ? baselinesText(m, fmtValue) : '',
      },
      {
        header: 'ADAPTER',
        get: ({ a, first }) =>
          !first ? '' : a.status === 'trained' ? c.green(`bond v${a.version}`) : c.dim('unchanged'),
      },
    ]);
    const trained = r.agents.filter((a) => a.status === 'trained').length;
    // A terminal narrower than the table gets one block per agent, so no row wraps mid-word; a pipe gets the table.
    const width = ctx.stdout.columns;
    const summary = `examples: used (train/stop/validation), validation on scenes neither training nor early stopping saw · ${trained} of ${r.agents.length} agents trained over ${r.memoirs} memoir${r.memoirs === 1 ? '' : 's'} · base ${r.base_fingerprint.slice(7, 19)} (${r.encoder})`;
    const unread = r.agents.reduce((n, a) => n + (a.unused[UNUSED_PREFERENCE] ?? 0), 0);
    const signals = r.agents.reduce((n, a) => n + (a.unused[UNREAD_SIGNAL] ?? 0), 0);
    const note =
      (unread > 0
        ? ` · ${unread} preference list${unread === 1 ? '' : 's'} not read (not two items with a text and a numeric score)`
        : '') +
      (signals > 0
        ? ` · ${signals} host signal${signals === 1 ? '' : 's'} not read (tests_passed must be true or false, coverage_delta a number)`
        : '');
    const footer = width === undefined ? summary + note : wrapWords(summary + note, width);
    const body =
      width === undefined || blockWidth(table) <= width ? table : agentBlocks(r.agents, { c, label, fmtValue, width });
    return `${body}${c.dim(footer)}`;
  },
});
