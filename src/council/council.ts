import type { GramPool } from '../aggregation/gram-pool.js';
import { aggregateUpdates, chunkRanges, requirement, type AggregateOutcome, type StrategyConfig } from '../aggregation/strategy.js';
import { AggregationError } from '../aggregation/vec.js';
import { f32FromLE, toLE } from '../tensor/float-codec.js';
import { tensorToJson } from '../tensor/json.js';
import type { Layout } from '../tensor/layout.js';
import { PROTOCOL_VERSION, type Adapter, type Me, type Receipt, type RoundStatus, type SealReceipt, type Submission, type Trust } from '../federation/protocol.js';
import { FEDERATING_AGENTS, isAgent, isBondOnly } from '../memoir/agents.js';
import { strategyOf, type CouncilConfig } from './config.js';
import { CouncilHttpError } from './http-error.js';
import { digestOf, ingest } from './ingest.js';
import { LayoutChangedError, RoundNotOpenError, type CouncilStorage, type ForgeRow, type NewRound, type RoundRow, type ScoreRow, type TrustUpdate } from './storage.js';
import { bearer, tokenForgeId, tokenMatches } from './tokens.js';
import { nextTrust, shouldExile, similarities, type TrustSettings } from './trust.js';

/**
 * The council: rounds, submissions, aggregation, trust. The HTTP layer (routes.ts) only maps
 * requests to these methods; everything here is testable without a socket.
 *
 * Round life: open → (enough sealed forges, or the deadline with at least one update) closing →
 * aggregated, and the next round opens in the same transaction. Aggregation runs agent by agent,
 * each agent's result recorded in one transaction, so a crash mid-aggregation resumes where it
 * stopped and no agent is aggregated twice. Nothing is held in memory that the database does not
 * also hold: a restarted council carries on exactly.
 */
export type FrozenStrategy = StrategyConfig & { weights: 'uniform' | 'counts' };

export interface CouncilDeps {
  storage: CouncilStorage;
  config: CouncilConfig;
  now: () => Date;
  /** One line per event worth an operator's attention (stderr). */
  log: (line: string) => void;
  pool?: GramPool | null;
}

interface AgentOutcomeJson {
  strategy: string;
  byzantine: number;
  forges: string[];
  used: string[];
  non_finite: string[];
  skipped_reason: string | null;
  details: Record<string, unknown>;
}

export class Council {
  private readonly storage: CouncilStorage;
  private readonly config: CouncilConfig;
  private readonly now: () => Date;
  private readonly log: (line: string) => void;
  private readonly pool: GramPool | null;
  private timer: NodeJS.Timeout | null = null;
  private work: Promise<void> = Promise.resolve();
  private stopped = false;

  constructor(deps: CouncilDeps) {
    this.storage = deps.storage;
    this.config = deps.config;
    this.now = deps.now;
    this.log = deps.log;
    this.pool = deps.pool ?? null;
  }

  private get trustSettings(): TrustSettings {
    const c = this.config;
    return { alpha: c.trust_alpha, threshold: c.trust_threshold, warmup: c.trust_warmup, tolerance: c.trust_tolerance };
  }

  /** Resumes interrupted aggregations, opens round 1 on a fresh database, arms the deadline timer. */
  async start(): Promise<void> {
    for (const r of await this.storage.closingRounds()) {
      this.log(`council: round ${r.round} was closed but not aggregated when the council stopped: resuming`);
      await this.aggregateRound(r.round);
    }
    const latest = await this.storage.latestRound();
    if (!latest || latest.state === 'aggregated') {
      const n = (latest?.round ?? 0) + 1;
      await this.storage.openRound(this.newRound(n));
      this.log(`council: round ${n} opened`);
    }
    await this.checkDeadline();
  }

  /** Stops the timer and waits for aggregation in progress (it finishes its current agent at least). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.work.catch(() => undefined);
  }

  /** Resolves when queued aggregation work is done (tests, graceful shutdown). */
  idle(): Promise<void> {
    return this.work.catch(() => undefined);
  }

  private newRound(round: number): NewRound {
    const at = this.now();
    return {
      round,
      openedAt: at.toISOString(),
      deadline: new Date(at.getTime() + this.config.round_deadline * 1000).toISOString(),
      strategyJson: JSON.stringify(strategyOf(this.config)),
    };
  }

  async authenticate(authorization: string | undefined): Promise<ForgeRow> {
    const token = bearer(authorization);
    if (!token) throw new CouncilHttpError('unauthorized', 'missing bearer token: send Authorization: Bearer <token from `kourai council forge add`>');
    const id = tokenForgeId(token);
    const forge = id === null ? undefined : await this.storage.forgeById(id);
    if (!forge || !tokenMatches(token, forge.tokenHash)) throw new CouncilHttpError('unauthorized', 'unknown or revoked token');
    return forge;
  }

  async me(forge: ForgeRow): Promise<Me> {
    return { forge: forge.name, created_at: forge.createdAt, trust: forge.trust, exiled: forge.exiledAt !== null, protocol: PROTOCOL_VERSION };
  }

  private async roundOrThrow(round: number): Promise<RoundRow> {
    const r = await this.storage.round(round);
    if (!r) {
      const latest = await this.storage.latestRound();
      throw new CouncilHttpError('round_not_found', `round ${round} does not exist (the current round is ${latest?.round ?? 'none'})`, { current: latest?.round ?? null });
    }
    return r;
  }

  async currentRound(): Promise<RoundRow> {
    await this.checkDeadline();
    const r = await this.storage.latestRound();
    if (!r) throw new CouncilHttpError('round_not_found', 'the council has not opened a round yet');
    return r;
  }

  async roundStatus(forge: ForgeRow, which: number | 'current'): Promise<RoundStatus> {
    const r = which === 'current' ? await this.currentRound() : await this.roundOrThrow(which);
    const frozen = JSON.parse(r.strategyJson) as FrozenStrategy;
    const counts = await this.storage.forgeCounts(r.round);
    const globals: Record<string, number> = {};
    for (const agent of FEDERATING_AGENTS) {
      const g = await this.storage.globalOf(agent, r.round);
      if (g) globals[agent] = g.round;
    }
    const me = (await this.storage.forgeById(forge.id)) ?? forge;
    const submitted = await this.storage.submittedAgents(r.round, forge.id);
    const outcomes = (await this.storage.aggregatesOf(r.round)).map((a) => {
      const o = JSON.parse(a.outcomeJson) as AgentOutcomeJson;
      return {
        agent: a.agent,
        updates: o.forges.length,
        aggregated: a.updated,
        skipped_reason: o.skipped_reason,
        used: o.used.length,
        yours_used: o.forges.includes(forge.name) ? o.used.includes(forge.name) : null,
      };
    });
    return {
      round: r.round,
      state: r.state,
      opened_at: r.openedAt,
      deadline: r.deadline,
      closed_at: r.closedAt,
      close_reason: r.closeReason,
      aggregated_at: r.aggregatedAt,
      strategy: { strategy: frozen.strategy, byzantine: frozen.f, selection: frozen.strategy === 'lora-fair' ? (frozen.selection ?? (frozen.f > 0 ? 'multikrum' : 'none')) : null, min_updates: requirement(frozen).min },
      min_forges: this.config.min_forges,
      forges_submitted: counts.submitted,
      forges_sealed: counts.sealed,
      agents: [...FEDERATING_AGENTS],
      accepted_base_fingerprints: [...this.config.base_fingerprints],
      globals,
      you: { forge: me.name, submitted, sealed: (await this.storage.sealOf(r.round, forge.id)) !== undefined, trust: me.trust, exiled: me.exiledAt !== null },
      outcomes,
    };
  }

  /** Accepts one agent's update, or refuses it precisely. A replay of an accepted body gets the same receipt. */
  async submit(forge: ForgeRow, round: number, agent: string, body: Submission): Promise<{ created: boolean; receipt: Receipt }> {
    const digest = digestOf(body);
    const existing = await this.storage.submission(round, forge.id, agent);
    if (existing) return this.replay(existing.digest, digest, existing.receiptJson, round, agent);
    if (!isAgent(agent)) throw new CouncilHttpError('unknown_agent', `unknown agent "${agent}"; the council aggregates ${FEDERATING_AGENTS.join(', ')}`, { agents: [...FEDERATING_AGENTS] });
    if (isBondOnly(agent)) throw new CouncilHttpError('bond_only_agent', `${agent} is bond-only: Cupid and Puck have no council adapter, nothing of theirs leaves a forge`);
    const fresh = (await this.storage.forgeById(forge.id)) ?? forge;
    if (fresh.exiledAt) throw new CouncilHttpError('forge_exiled', `forge "${forge.name}" was exiled after round ${fresh.exiledRound} (trust ${fresh.trust.toFixed(3)} below ${this.config.trust_threshold}); the council no longer aggregates its updates`, { exiled_round: fresh.exiledRound, trust: fresh.trust });
    const r = await this.roundOrThrow(round);
    await this.refuseIfLate(r, forge);
    let layout = await this.storage.agentLayout(agent);
    for (let attempt = 0; ; attempt++) {
      const ing = ingest(body, { agent, acceptedFingerprints: this.config.base_fingerprints, layout, tailMargin: this.config.tail_margin });
      const acceptedAt = this.now().toISOString();
      const receipt: Receipt = { round, forge: forge.name, agent, digest, accepted_at: acceptedAt, coords: ing.layout.size, norm: ing.norm, norm_bound: ing.normBound };
      try {
        const res = await this.storage.insertSubmission({
          round,
          forgeId: forge.id,
          agent,
          digest,
          baseFingerprint: body.base_fingerprint,
          clipNorm: body.privacy.clip_norm,
          noiseMultiplier: body.privacy.noise_multiplier,
          weight: body.weight ?? null,
          norm: ing.norm,
          coords: ing.layout.size,
          receivedAt: acceptedAt,
          receiptJson: JSON.stringify(receipt),
          chunks: ing.chunks,
          layout: ing.layout,
        });
        if (!res.inserted) return this.replay(res.row.digest, digest, res.row.receiptJson, round, agent);
        this.log(`council: round ${round}: accepted ${forge.name}/${agent} (${ing.layout.size} coords, norm ${ing.norm.toPrecision(4)} ≤ ${ing.normBound.toPrecision(4)})`);
        return { created: true, receipt };
      } catch (err) {
        if (err instanceof RoundNotOpenError) throw this.lateError(round, (await this.storage.round(round)) ?? r);
        if (err instanceof LayoutChangedError && attempt === 0) {
          layout = await this.storage.agentLayout(agent);
          continue;
        }
        throw err;
      }
    }
  }

  private replay(stored: string, presented: string, receiptJson: string, round: number, agent: string): { created: boolean; receipt: Receipt } {
    if (stored === presented) return { created: false, receipt: JSON.parse(receiptJson) as Receipt };
    throw new CouncilHttpError('duplicate_submission', `an update for ${agent} in round ${round} was already accepted from this forge, with different content (digest ${stored.slice(0, 12)}…); one update per agent and round`, { accepted_digest: stored, digest: presented });
  }

  private lateError(round: number, r: RoundRow): CouncilHttpError {
    return new CouncilHttpError('late_submission', `round ${round} is ${r.state === 'open' ? 'past its deadline' : `closed (${r.closeReason ?? 'closed'} at ${r.closedAt ?? '?'})`}; submit to the current round`, { state: r.state, deadline: r.deadline });
  }

  private async refuseIfLate(r: RoundRow, forge: ForgeRow): Promise<void> {
    if (r.state !== 'open') throw this.lateError(r.round, r);
    if (this.now().getTime() >= Date.parse(r.deadline)) {
      await this.checkDeadline();
      throw this.lateError(r.round, r);
    }
    const sealed = await this.storage.sealOf(r.round, forge.id);
    if (sealed) throw new CouncilHttpError('late_submission', `forge "${forge.name}" sealed round ${r.round} at ${sealed}: its updates for the round are final`, { sealed_at: sealed });
  }

  /** The forge says its updates for the round are complete. Idempotent. */
  async seal(forge: ForgeRow, round: number): Promise<SealReceipt> {
    const r = await this.roundOrThrow(round);
    const prior = await this.storage.sealOf(round, forge.id);
    if (!prior) {
      const fresh = (await this.storage.forgeById(forge.id)) ?? forge;
      if (fresh.exiledAt) throw new CouncilHttpError('forge_exiled', `forge "${forge.name}" was exiled after round ${fresh.exiledRound}`, { exiled_round: fresh.exiledRound });
      if (r.state !== 'open' || this.now().getTime() >= Date.parse(r.deadline)) {
        await this.checkDeadline();
        throw this.lateError(round, r);
      }
    }
    let sealedAt: string;
    try {
      sealedAt = (await this.storage.seal(round, forge.id, this.now().toISOString())).sealedAt;
    } catch (err) {
      if (err instanceof RoundNotOpenError) throw this.lateError(round, (await this.storage.round(round)) ?? r);
      throw err;
    }
    const agents = await this.storage.submittedAgents(round, forge.id);
    if (!prior) {
      this.log(`council: round ${round}: ${forge.name} sealed (${agents.length} agent${agents.length === 1 ? '' : 's'})`);
      const counts = await this.storage.forgeCounts(round);
      if (counts.sealed >= this.config.min_forges) await this.close(round, 'min_forges');
    }
    return { round, forge: forge.name, sealed_at: sealedAt, agents };
  }

  private async close(round: number, reason: 'min_forges' | 'deadline'): Promise<void> {
    if (!(await this.storage.closeRound(round, this.now().toISOString(), reason))) return;
    this.log(`council: round ${round} closed (${reason === 'min_forges' ? `${this.config.min_forges} forges sealed` : 'deadline'}); aggregating`);
    this.work = this.work.then(() => this.aggregateRound(round)).catch((err: unknown) => this.log(`council: aggregation of round ${round} failed: ${(err as Error).stack ?? String(err)}`));
  }

  /** Closes (or extends) the open round if its deadline has passed; re-arms the timer. */
  async checkDeadline(): Promise<void> {
    if (this.stopped) return;
    const r = await this.storage.latestRound();
    if (r?.state === 'open') {
      const now = this.now();
      if (now.getTime() >= Date.parse(r.deadline)) {
        const counts = await this.storage.forgeCounts(r.round);
        if (counts.submitted > 0) await this.close(r.round, 'deadline');
        else {
          const deadline = new Date(now.getTime() + this.config.round_deadline * 1000).toISOString();
          await this.storage.extendDeadline(r.round, deadline, now.toISOString());
          this.log(`council: round ${r.round} reached its deadline with no updates: extended to ${deadline}`);
        }
      }
    }
    this.arm();
  }

  private arm(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    void this.storage.latestRound().then((r) => {
      if (this.stopped || r?.state !== 'open') return;
      const wait = Math.max(0, Math.min(2 ** 31 - 1, Date.parse(r.deadline) - this.now().getTime()));
      if (this.timer) clearTimeout(this.timer);
      this.timer = setTimeout(() => {
        this.checkDeadline().catch((err: unknown) => this.log(`council: deadline check failed: ${String(err)}`));
      }, wait + 5);
      this.timer.unref();
    }).catch((err: unknown) => {
      if (!this.stopped) this.log(`council: cannot arm the deadline timer: ${String(err)}`);
    });
  }

  /**
   * Aggregates every agent of a closed round (skipping agents already recorded: resumption),
   * then applies trust and opens the next round.
   */
  async aggregateRound(round: number): Promise<void> {
    const r = await this.storage.round(round);
    if (r?.state !== 'closing') return;
    const frozen = JSON.parse(r.strategyJson) as FrozenStrategy;
    const agents = await this.storage.agentsWithSubmissions(round);
    for (const agent of FEDERATING_AGENTS.filter((a) => agents.includes(a))) {
      if (await this.storage.aggregateOf(round, agent)) continue;
      await this.aggregateAgent(round, agent, frozen);
      // Let the HTTP server answer polls between agents.
      await new Promise((res) => setImmediate(res));
    }
    await this.finish(round);
  }

  private async aggregateAgent(round: number, agent: string, frozen: FrozenStrategy): Promise<void> {
    const subs = await this.storage.submissionsFor(round, agent);
    const forges = new Map((await this.storage.listForges()).map((f) => [f.id, f.name]));
    const names = subs.map((s) => forges.get(s.forgeId) ?? `#${s.forgeId}`);
    const layout = (await this.storage.agentLayout(agent)) as Layout;
    const at = () => this.now().toISOString();
    const record = { round, agent, recordedAt: at() };
    const base: AgentOutcomeJson = { strategy: frozen.strategy, byzantine: frozen.f, forges: names, used: [], non_finite: [], skipped_reason: null, details: {} };
    const req = requirement(frozen);
    if (subs.length < req.min) {
      const reason = `${req.rule}; got ${subs.length}`;
      this.log(`council: round ${round}: ${agent} skipped: ${reason} (its global is unchanged)`);
      await this.storage.recordAggregate({ ...record, updated: false, outcomeJson: JSON.stringify({ ...base, skipped_reason: reason }) }, null, []);
      return;
    }
    const reader = await this.storage.chunkReader(subs, layout, agent, round);
    let outcome: AggregateOutcome;
    let globalChunks: Buffer[];
    try {
      const weights = frozen.weights === 'counts' && subs.every((s) => s.weight !== null) ? subs.map((s) => s.weight as number) : undefined;
      const t0 = performance.now();
      outcome = aggregateUpdates({ n: reader.n, layout, read: (start, end) => reader.read(start, end), weights, base: reader.base }, frozen, { pool: this.pool });
      // The new global = previous global + aggregate update, stored as float32 chunks.
      globalChunks = chunkRanges(layout).map(([s, e]) => {
        const b = reader.base?.(s, e);
        const g = new Float32Array(e - s);
        for (let k = 0; k < g.length; k++) g[k] = (outcome.aggregate[s + k] as number) + (b ? (b[k] as number) : 0);
        return toLE(g);
      });
      this.log(`council: round ${round}: ${agent} aggregated by ${frozen.strategy} from ${outcome.used.length}/${subs.length} updates in ${(performance.now() - t0).toFixed(0)} ms`);
    } catch (err) {
      if (!(err instanceof AggregationError)) throw err;
      this.log(`council: round ${round}: ${agent} skipped: ${err.message} (its global is unchanged)`);
      await this.storage.recordAggregate({ ...record, updated: false, outcomeJson: JSON.stringify({ ...base, skipped_reason: err.message }) }, null, []);
      return;
    } finally {
      reader.close();
    }
    const sims = similarities(outcome.distanceToAggregate, this.config.trust_tolerance);
    const used = new Set(outcome.used);
    const scores: ScoreRow[] = subs.map((s, i) => ({ round, forgeId: s.forgeId, agent, distance2: outcome.distanceToAggregate[i] as number, similarity: sims[i] as number, used: used.has(i) }));
    const details: Record<string, unknown> = {};
    for (const key of ['selection', 'neighbours', 'm', 'theta', 'beta', 'trim', 'layers', 'unpaired'] as const) if (outcome[key] !== undefined) details[key] = outcome[key];
    if (outcome.scores) details.scores = Object.fromEntries(names.map((n, i) => [n, Number.isFinite(outcome.scores?.[i]) ? outcome.scores?.[i] : null]));
    details.similarity = Object.fromEntries(names.map((n, i) => [n, sims[i]]));
    const json: AgentOutcomeJson = { ...base, used: outcome.used.map((i) => names[i] as string), non_finite: outcome.nonFinite.map((i) => names[i] as string), details };
    await this.storage.recordAggregate({ ...record, updated: true, outcomeJson: JSON.stringify(json) }, globalChunks, scores);
  }

  private async finish(round: number): Promise<void> {
    const scores = await this.storage.scoresFor(round);
    const byForge = new Map<number, number[]>();
    for (const s of scores) byForge.set(s.forgeId, [...(byForge.get(s.forgeId) ?? []), s.similarity]);
    const settings = this.trustSettings;
    const updates: TrustUpdate[] = [];
    for (const [forgeId, sims] of byForge) {
      const f = await this.storage.forgeById(forgeId);
      if (!f) continue;
      const similarity = sims.reduce((a, b) => a + b, 0) / sims.length;
      const after = nextTrust(f.trust, similarity, settings.alpha);
      updates.push({ forgeId, similarity, before: f.trust, after, exile: f.exiledAt === null && shouldExile(after, f.roundsScored + 1, settings) });
    }
    const next = this.newRound(round + 1);
    if (!(await this.storage.finishRound(round, this.now().toISOString(), updates, next))) return;
    for (const u of updates.filter((x) => x.exile)) {
      const f = await this.storage.forgeById(u.forgeId);
      this.log(`council: THE STOA FALLS — forge "${f?.name}" exiled after round ${round}: trust ${u.after.toFixed(3)} < ${settings.threshold}`);
    }
    this.log(`council: round ${round} aggregated; round ${round + 1} open until ${next.deadline}`);
    this.arm();
  }

  async adapter(agent: string, round?: number): Promise<Adapter> {
    if (!isAgent(agent)) throw new CouncilHttpError('unknown_agent', `unknown agent "${agent}"`, { agents: [...FEDERATING_AGENTS] });
    if (isBondOnly(agent)) throw new CouncilHttpError('bond_only_agent', `${agent} is bond-only: the council holds no adapter for it`);
    let source: number;
    let strategy: string;
    if (round === undefined) {
      const g = await this.storage.globalOf(agent);
      if (!g) throw new CouncilHttpError('no_global', `no round has produced a ${agent} adapter yet`);
      source = g.round;
      strategy = g.strategy;
    } else {
      await this.roundOrThrow(round);
      const a = await this.storage.aggregateOf(round, agent);
      if (!a?.updated) throw new CouncilHttpError('no_aggregate', a ? `round ${round} did not update ${agent}: ${(JSON.parse(a.outcomeJson) as AgentOutcomeJson).skipped_reason}` : `round ${round} has no ${agent} aggregate (yet)`);
      source = round;
      strategy = (JSON.parse(a.outcomeJson) as AgentOutcomeJson).strategy;
    }
    const layout = (await this.storage.agentLayout(agent)) as Layout;
    const chunks = await this.storage.globalChunks(source, agent);
    const flat = new Float32Array(layout.size);
    chunkRanges(layout).forEach(([s], i) => flat.set(f32FromLE(chunks[i] as Buffer), s));
    return {
      agent,
      round: source,
      strategy,
      tensors: layout.tensors.map((t) => tensorToJson({ name: t.name, shape: t.shape, data: flat.subarray(t.offset, t.offset + t.size) })),
    };
  }

  async trust(forge: ForgeRow): Promise<Trust> {
    const f = (await this.storage.forgeById(forge.id)) ?? forge;
    return {
      forge: f.name,
      trust: f.trust,
      rounds_scored: f.roundsScored,
      exiled: f.exiledAt !== null,
      exiled_round: f.exiledRound,
      threshold: this.config.trust_threshold,
      warmup: this.config.trust_warmup,
      history: await this.storage.trustHistory(f.id),
    };
  }
}
