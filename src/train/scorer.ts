import { NotFoundError, UsageError } from '../errors.js';
import { isBondOnly, type Agent } from '../memoir/format/agents.js';
import { openStateDbReadOnly } from '../store/state-db.js';
import type { DB } from '../store/db.js';
import { headOf } from './adapter-layout.js';
import { AdapterStore } from './adapter-store.js';
import { Inference, type AgentModel, type LoadedLora } from './inference.js';
import { configuredLean, learnConfig, type LearnConfig } from './learn-config.js';
import { resolveLean, type AppliedLean, type LoadedRow } from './applied-lean.js';
import { openTextEncoder, type TextEncoder } from './text-encoder.js';
import type { RoutePrior, CueHit } from './route-prior/prior.js';

/**
 * What hosts call: rank candidate texts for an agent (best-of-n reranking), or ask Hephaestus's
 * routing head who should take a task. Opens the configured encoder and the agent's current
 * adapters once (checked whole and over the configured base), then answers many calls.
 * `kourai score`, `kourai route` and the library API (`openScorer`) are this.
 */
export type Use = 'both' | 'bond' | 'council';

export interface ScorerOptions {
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  signal: AbortSignal;
  agent: Agent;
  /** Which adapters to apply: both (mixed by the lean), bond only, or council only. */
  use?: Use;
  /** Overrides the configured lean (0 personal … 1 federated) for `use: both`. */
  lean?: number;
}

export interface RankedCandidate {
  index: number;
  text: string;
  score: number;
  p: number;
}

export interface ScoreResult {
  agent: Agent;
  use: Use;
  lean: number;
  /** The current versions loaded (whether or not the lean applies them). */
  adapters: { council: number | null; bond: number | null };
  /** The adapters this answer used, with their weights, and why. */
  applied: AppliedLean;
  ranking: RankedCandidate[];
}

export interface RouteResult {
  use: Use;
  lean: number;
  adapters: { council: number | null; bond: number | null };
  applied: AppliedLean;
  /** What the routing head read (the description, else the task type line). */
  text: string;
  distribution: { agent: Agent; p: number }[];
  /** The written-role prior the head adds to: the cues it found in the task, strongest first. */
  prior: { cues: CueHit[] };
}

export class Scorer {
  private constructor(
    readonly agent: Agent,
    readonly use: Use,
    private readonly cfg: LearnConfig,
    private readonly leanFlag: number | undefined,
    private readonly encoder: TextEncoder,
    private readonly inference: Inference,
    private readonly rows: { council: LoadedRow | null; bond: LoadedRow | null },
  ) {}

  /** The written-role prior, built on the first route (scoring never needs it). */
  private prior: RoutePrior | null = null;

  static async open(o: ScorerOptions): Promise<Scorer> {
    const use = o.use ?? 'both';
    if (use === 'council' && isBondOnly(o.agent))
      throw new UsageError(
        `${o.agent} has no council adapter: Cupid and Puck are bond-only`,
        'use --use bond (or both)',
      );
    const cfg = learnConfig(o.home, o.env);
    const encoder = await openTextEncoder(cfg.encoder, o);
    let db: DB | null = null;
    try {
      db = openStateDbReadOnly(o.home);
      const store = new AdapterStore(o.home, db, { spec: encoder.spec, fingerprint: encoder.fingerprint });
      const rows: { council: LoadedRow | null; bond: LoadedRow | null } = { council: null, bond: null };
      const load = (kind: 'bond' | 'council'): LoadedLora | null => {
        if (kind === 'council' && isBondOnly(o.agent)) return null;
        const got = store.loadCurrent(o.agent, kind);
        if (got) rows[kind] = { version: got.row.version, metrics: got.row.metrics };
        return got ? { lora: got.lora, alpha: got.config.lora_alpha, version: got.row.version } : null;
      };
      const bond = use === 'council' ? null : load('bond');
      const council = use === 'bond' ? null : load('council');
      if (use === 'bond' && !bond)
        throw new NotFoundError(
          `no bond adapter for ${o.agent} yet`,
          `train one: kourai train bond --agent ${o.agent}`,
        );
      if (use === 'council' && !council)
        throw new NotFoundError(
          `no council adapter for ${o.agent} yet`,
          'council adapters arrive with a federation round; until then use --use bond',
        );
      // Routing works from the first session: the prior knows the specialists before any history.
      if (!bond && !council && headOf(o.agent) !== 'route')
        throw new NotFoundError(
          `no adapter for ${o.agent} yet (neither bond nor council)`,
          `train one: kourai train bond --agent ${o.agent}`,
        );
      const model: AgentModel = { agent: o.agent, head: headOf(o.agent), base: encoder.base, council, bond };
      return new Scorer(o.agent, use, cfg, o.lean, encoder, new Inference(model), rows);
    } catch (err) {
      encoder.close();
      throw err;
    } finally {
      db?.close();
    }
  }

  get adapters(): { council: number | null; bond: number | null } {
    return { council: this.inference.model.council?.version ?? null, bond: this.inference.model.bond?.version ?? null };
  }

  /** The lean a call runs with, and why (applied-lean.ts). */
  applied(taskType: string | null, lean?: number): AppliedLean {
    return resolveLean({
      use: this.use,
      flag: lean ?? this.leanFlag,
      configured: configuredLean(this.cfg, taskType),
      taskType,
      ...this.rows,
    });
  }

  /** `prompt`: what the candidates answer, when the host has it (the structure features relate each candidate to it). */
  async rank(
    candidates: readonly string[],
    opts: { taskType?: string | null; lean?: number; prompt?: string | null } = {},
  ): Promise<ScoreResult> {
    if (headOf(this.agent) !== 'score')
      throw new UsageError(`${this.agent} routes tasks; it does not score candidates`, 'use kourai route');
    const applied = this.applied(opts.taskType ?? null, opts.lean);
    const features = await this.encoder.encode(candidates, opts.prompt ?? null);
    const ranking = this.inference
      .rank(features, applied.lean)
      .map((r) => ({ index: r.index, text: candidates[r.index] as string, score: r.score, p: r.p }));
    return { agent: this.agent, use: this.use, lean: applied.lean, adapters: this.adapters, applied, ranking };
  }

  async route(
    description: string | null,
    opts: { taskType?: string | null; lean?: number } = {},
  ): Promise<RouteResult> {
    if (headOf(this.agent) !== 'route')
      throw new UsageError(`${this.agent} scores candidates; only Hephaestus routes tasks`, 'use kourai score');
    const taskType = opts.taskType ?? null;
    const [{ routeText }, { RoutePrior }] = await Promise.all([
      import('./examples/route-text.js'),
      import('./route-prior/prior.js'),
    ]);
    const text = routeText(description, taskType);
    if (text === null) throw new UsageError('route needs a task description or --task-type');
    const applied = this.applied(taskType, opts.lean);
    const [features] = await this.encoder.encode([text]);
    this.prior ??= new RoutePrior(this.encoder.spec.specialists);
    const prior = this.prior.score(description, taskType);
    const distribution = this.inference
      .route(features as NonNullable<typeof features>, applied.lean, prior.logits)
      .map(({ agent, p }) => ({ agent, p }));
    return {
      use: this.use,
      lean: applied.lean,
      adapters: this.adapters,
      applied,
      text,
      distribution,
      prior: { cues: prior.hits },
    };
  }

  close(): void {
    this.encoder.close();
  }
}
