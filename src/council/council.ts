import type { GramPool } from '../aggregation/gram-pool.js';
import type { Adapter, Layouts, Me, Receipt, RoundStatus, SealReceipt, Submission, Trust } from '../protocol/wire.js';
import { FEDERATING_AGENTS, isAgent, isBondOnly, type FederatingAgent } from '../memoir/format/agents.js';
import { randomBytes } from 'node:crypto';
import { sampleCohort } from '../protocol/cohort.js';
import { ConflictError, UsageError } from '../errors.js';
import { systemClock, type Clock, type Timer } from '../runtime/clock.js';
import { sameLayout, type Layout } from '../tensor/layout.js';
import { aggregateClosedRound, computeAgentAggregate, type AgentAggregator } from './aggregate-round.js';
import { authenticate } from './auth.js';
import type { CouncilConfig } from './config.js';
import { CouncilHttpError } from './http-error.js';
import { checkNorm, checkReleaseBinding, checkUpdateHead, digestOf } from './ingest.js';
import {
  jsonReader,
  memoryReader,
  safetensorsReader,
  UpdateAssembler,
  wholeSubmission,
  type Upload,
  type UpdateReader,
} from './upload.js';
import { parseOutcome } from './outcome.js';
import { loadRootSet } from './root-memoir.js';
import type { RootSet } from './root-set.js';
import { configuredLayouts, describeLayout } from './layouts.js';
import { cohortShortfall, parseRoundSettings, privacyPolicyOf, roundSettingsOf } from './round-settings.js';
import {
  LayoutChangedError,
  RoundNotOpenError,
  type CouncilStorage,
  type ForgeRow,
  type NewRound,
  type RoundRow,
} from './storage.js';
import { roundTrustUpdates, type Evidence, type TrustSettings } from './trust.js';
import { adapterView, meView, publicInitView, roundStatusView, trustView } from './views.js';

/**
 * The council's round lifecycle: submissions, seals, closing (enough sealed forges, or the
 * deadline), aggregation of the closed round, trust, and the next round. The HTTP layer
 * (server.ts) only maps requests to these methods; the simulator calls them directly with a
 * virtual clock. Aggregation itself is aggregate-round.ts; the JSON documents are views.ts.
 *
 * Round life: open → (enough sealed forges, or the deadline with at least one update) closing →
 * aggregated, and the next round opens in the same transaction. Nothing is held in memory that
 * storage does not also hold: a restarted council carries on exactly.
 */
export interface CouncilDeps {
  storage: CouncilStorage;
  config: CouncilConfig;
  /** Time and timers (systemClock by default; a VirtualClock to drive rounds without waiting). */
  clock?: Clock;
  /** One line per event worth an operator's attention (stderr). */
  log: (line: string) => void;
  pool?: GramPool | null;
  /** How one agent's aggregate is computed (default: in this thread). */
  aggregator?: AgentAggregator;
  /**
   * Who this council is among the processes sharing the storage (claims of closed rounds are held
   * in its name). One name for every start of a single-process council, so a restart resumes its
   * own claim at once; a distinct one per process when several share a database.
   */
  owner?: string;
  /** Secret randomness (the cohort seed): node:crypto unless a test gives its own. */
  secureRandom?: (n: number) => Buffer;
}

/** The aggregation claim of a round went to another process (ours ran out): stop, it carries on. */
class ClaimLostError extends Error {
  constructor(readonly round: number) {
    super(`the claim on round ${round} was lost`);
  }
}

export class Council {
  private readonly storage: CouncilStorage;
  private readonly config: CouncilConfig;
  private readonly clock: Clock;
  private readonly log: (line: string) => void;
  private readonly aggregator: AgentAggregator;
  private timer: Timer | null = null;
  private work: Promise<void> = Promise.resolve();
  private stopped = false;
  private readonly owner: string;
  private readonly secureRandom: (n: number) => Buffer;
  /** Rounds queued or being aggregated by this process. */
  private readonly queued = new Set<number>();
  private aggregatingRound: number | null = null;
  /**
   * Deadline checks and closes in flight, whoever started them (the timer, a request, the sweep, a
   * seal): each may yet close a round and queue its aggregation, so idle() and stop() wait for all of them.
   */
  private readonly inFlight = new Set<Promise<void>>();

  constructor(deps: CouncilDeps) {
    this.storage = deps.storage;
    this.config = deps.config;
    this.clock = deps.clock ?? systemClock;
    this.log = deps.log;
    this.owner = deps.owner ?? 'council';
    this.secureRandom = deps.secureRandom ?? randomBytes;
    const pool = deps.pool ?? null;
    this.aggregator =
      deps.aggregator ??
      ((round, agent, settings) =>
        computeAgentAggregate(
          {
            storage: this.storage,
            now: () => this.clock.now(),
            pool,
            trustTolerance: this.config.trust_tolerance,
            root: this.rootSet(),
          },
          round,
          agent,
          settings,
        ));
  }

  private now(): Date {
    return this.clock.now();
  }

  private root: RootSet | null | undefined;

  /** The operator's root set (loaded once; start() loads it, so a bad root memoir stops the start). */
  private rootSet(): RootSet | null {
    if (this.root === undefined) this.root = loadRootSet(this.config);
    return this.root;
  }

  private get trustSettings(): TrustSettings {
    const c = this.config;
    return { alpha: c.trust_alpha, threshold: c.trust_threshold, warmup: c.trust_warmup, tolerance: c.trust_tolerance };
  }

  /**
   * Adopts the configured layouts (refusing to start when council.db holds different ones: an
   * operator decides, with `kourai council layout reset`), resumes interrupted aggregations, opens
   * round 1 on a fresh database, arms the deadline timer.
   */
  async start(): Promise<void> {
    // A cohort too small for the rule's f among the forges registered now: refused before serving.
    const short = cohortShortfall(this.config, (await this.eligible(new Set())).length);
    if (short) throw new UsageError(short, 'raise --cohort, or lower --byzantine');
    await this.adoptConfiguredLayouts();
    const root = this.rootSet();
    if (root)
      this.log(
        `council: root set from ${this.config.root_memoir}: ${FEDERATING_AGENTS.filter((a) => root.size(a) > 0)
          .map((a) => `${a} ${root.size(a)}`)
          .join(', ')} pairs; what each update does to them is recorded in the round outcome (details.root)`,
      );
    // Resumed in the background, like any aggregation: the council answers meanwhile (idle() waits).
    for (const r of await this.storage.closingRounds()) {
      this.log(`council: round ${r.round} was closed but not aggregated when the council stopped: resuming`);
      this.enqueueAggregation(r.round);
    }
    const latest = await this.storage.latestRound();
    if (!latest || latest.state === 'aggregated') {
      const n = (latest?.round ?? 0) + 1;
      await this.storage.openRound(await this.newRound(n));
      this.log(`council: round ${n} opened`);
    } else if (
      latest.state === 'open' &&
      (await this.storage.forgeCounts(latest.round)).sealed >= this.config.min_forges
    ) {
      // Enough seals and no close: the council stopped (or died) between the last seal and its close.
      await this.close(latest.round, 'min_forges');
    }
    await this.checkDeadline();
  }

  /** What this process is doing now (health, `council status`). */
  role(): string {
    return this.aggregatingRound === null ? 'serving' : `aggregating round ${this.aggregatingRound}`;
  }

  /**
   * With several processes on one database: picks up closed rounds no live process is aggregating
   * (a claimer that died lets its lease run out) and notices rounds other processes opened or
   * closed. The server calls it every few seconds; a single process needs it only after a crash.
   */
  sweep(): Promise<void> {
    // Tracked, so that stop() waits for its reads too.
    return this.track(
      (async () => {
        if (this.stopped) return;
        for (const r of await this.storage.closingRounds()) this.enqueueAggregation(r.round);
        await this.checkDeadline();
      })(),
    );
  }

  /**
   * Stops the timer; waits for the deadline checks, sweeps and closes in flight, then for the
   * aggregation queued before stop() began (it finishes its current agent at least). Nothing new
   * starts once stop() has begun (close() and enqueueAggregation() say what happens instead), so
   * when it returns the storage may be closed.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.cancel();
    this.timer = null;
    await this.idle();
  }

  /** Resolves when deadline checks, closes and queued aggregation work are done (tests, the simulator, graceful shutdown). */
  async idle(): Promise<void> {
    for (;;) {
      const work = this.work;
      await Promise.all([...this.inFlight].map((p) => p.catch(() => undefined)));
      await work.catch(() => undefined);
      if (this.inFlight.size === 0 && work === this.work) return;
    }
  }

  /** `p`, counted in flight until it settles. */
  private track(p: Promise<void>): Promise<void> {
    const tracked = p.finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
    return tracked;
  }

  private async adoptConfiguredLayouts(): Promise<void> {
    const configured = configuredLayouts(this.config.layouts);
    const latest = await this.storage.latestRound();
    const from = !latest ? 1 : latest.state === 'open' ? latest.round : latest.round + 1;
    const conflicts: string[] = [];
    const adopt: [FederatingAgent, Layout][] = [];
    for (const agent of FEDERATING_AGENTS) {
      const want = configured.get(agent);
      const have = await this.storage.agentLayout(agent);
      if (want && !have) adopt.push([agent, want]);
      else if (want && have && !sameLayout(want, have))
        conflicts.push(`${agent} (council.db: ${describeLayout(have)}; configured: ${describeLayout(want)})`);
      else if (!want && have) conflicts.push(`${agent} (council.db: ${describeLayout(have)}; configured: none)`);
    }
    // Refuse before changing anything.
    if (conflicts.length) {
      const agents = conflicts.map((c) => c.split(' ')[0]);
      throw new ConflictError(
        `the adapter layout in council.db differs from the configuration for ${conflicts.join('; ')}`,
        `to adopt the configured layout (retiring the agent's globals and its updates not yet aggregated): ${agents.map((a) => `kourai council layout reset ${a}`).join(' && ')}`,
      );
    }
    for (const [agent, layout] of adopt) {
      await this.storage.adoptLayout(agent, layout, from, this.now().toISOString(), 'configuration');
      this.log(`council: ${agent} layout from the configuration: ${describeLayout(layout)}`);
    }
  }

  private async newRound(round: number, exiling: ReadonlySet<number> = new Set()): Promise<NewRound> {
    const at = this.now();
    const eligible = this.config.cohort === null ? undefined : (await this.eligible(exiling)).length;
    if (eligible !== undefined) {
      const short = cohortShortfall(this.config, eligible);
      if (short) this.log(`council: round ${round}: ${short}; its aggregation will be skipped (raise --cohort)`);
    }
    return {
      round,
      openedAt: at.toISOString(),
      deadline: new Date(at.getTime() + this.config.round_deadline * 1000).toISOString(),
      strategyJson: JSON.stringify(roundSettingsOf(this.config, eligible)),
      cohort: await this.cohortFor(round, exiling),
    };
  }

  /** The forges that may take part in a round: not revoked, not exiled (nor being exiled). */
  private async eligible(exiling: ReadonlySet<number>): Promise<string[]> {
    return (await this.storage.listForges())
      .filter((f) => !f.revokedAt && !f.exiledAt && !exiling.has(f.id))
      .map((f) => f.name);
  }

  /**
   * The forges sampled for a round (null: all take part): sampleCohort over the forges that may
   * take part (not revoked, not exiled), keyed by the council's secret seed. The seed is made once,
   * from node:crypto, and kept in the database, so every process samples alike and no forge can
   * predict whether it will be sampled (which is what privacy amplification by sampling needs).
   */
  private async cohortFor(round: number, exiling: ReadonlySet<number>): Promise<string[] | null> {
    const size = this.config.cohort;
    if (size === null) return null;
    const seed = await this.storage.settingOnce('cohort_seed', this.secureRandom(32));
    return sampleCohort(await this.eligible(exiling), { round, seed, size });
  }

  authenticate(authorization: string | undefined): Promise<ForgeRow> {
    return authenticate(this.storage, authorization);
  }

  async me(forge: ForgeRow): Promise<Me> {
    return meView(forge);
  }

  private async roundOrThrow(round: number): Promise<RoundRow> {
    const r = await this.storage.round(round);
    if (!r) {
      const latest = await this.storage.latestRound();
      throw new CouncilHttpError(
        'round_not_found',
        `round ${round} does not exist (the current round is ${latest?.round ?? 'none'})`,
        { current: latest?.round ?? null },
      );
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
    let r = which === 'current' ? await this.currentRound() : await this.roundOrThrow(which);
    // A round past its deadline is closed by whoever notices first: a timer, or this request.
    if (r.state === 'open' && this.now().getTime() >= Date.parse(r.deadline)) {
      await this.checkDeadline();
      r = await this.roundOrThrow(r.round);
    }
    return roundStatusView(this.storage, this.config, r, forge);
  }

  /**
   * Accepts one agent's update held in memory (an in-process council: the simulator, tests), or
   * refuses it precisely. A replay of an accepted body gets the same receipt.
   */
  async submit(
    forge: ForgeRow,
    round: number,
    agent: string,
    body: Submission,
    opts: { councilUrl?: string | null } = {},
  ): Promise<{ created: boolean; receipt: Receipt }> {
    const digest = digestOf(body);
    return this.receive(forge, round, agent, opts, {
      whole: async () => body,
      reader: (asm) => memoryReader(body, digest, asm),
    });
  }

  /**
   * Accepts an update as its body arrives (HTTP): it is checked and written to storage chunk by
   * chunk, never held whole (upload.ts says what is held). A retry of an update already accepted
   * for its slot is read whole to compare it with the accepted one (then dropped).
   */
  async submitUpload(
    forge: ForgeRow,
    round: number,
    agent: string,
    upload: Upload,
    opts: { councilUrl?: string | null } = {},
  ): Promise<{ created: boolean; receipt: Receipt }> {
    return this.receive(forge, round, agent, opts, {
      whole: (a) => wholeSubmission(upload, a),
      reader: (asm) =>
        upload.type === 'safetensors'
          ? safetensorsReader(upload.body, upload.length, asm)
          : jsonReader(upload.body, asm),
    });
  }

  private async receive(
    forge: ForgeRow,
    round: number,
    agent: string,
    opts: { councilUrl?: string | null },
    source: { whole(agent: string): Promise<Submission>; reader(asm: UpdateAssembler): UpdateReader },
  ): Promise<{ created: boolean; receipt: Receipt }> {
    const binding = {
      round,
      forge,
      ...(opts.councilUrl !== undefined ? { councilUrl: opts.councilUrl } : {}),
    };
    const existing = await this.storage.submission(round, forge.id, agent);
    if (existing) {
      const body = await source.whole(agent);
      checkReleaseBinding(body.round_key, binding);
      return this.replay(existing.digest, digestOf(body), existing.receiptJson, round, agent, body.round_key);
    }
    if (!isAgent(agent))
      throw new CouncilHttpError(
        'unknown_agent',
        `unknown agent "${agent}"; the council aggregates ${FEDERATING_AGENTS.join(', ')}`,
        { agents: [...FEDERATING_AGENTS] },
      );
    if (isBondOnly(agent))
      throw new CouncilHttpError(
        'bond_only_agent',
        `${agent} is bond-only: Cupid and Puck have no council adapter, nothing of theirs leaves a forge`,
      );
    const fresh = (await this.storage.forgeById(forge.id)) ?? forge;
    if (fresh.exiledAt)
      throw new CouncilHttpError(
        'forge_exiled',
        `forge "${forge.name}" was exiled after round ${fresh.exiledRound} (trust ${fresh.trust.toFixed(3)} below ${this.config.trust_threshold}); the council no longer aggregates its updates`,
        { exiled_round: fresh.exiledRound, trust: fresh.trust },
      );
    const r = await this.roundOrThrow(round);
    this.refuseIfNotSampled(r, forge);
    await this.refuseIfLate(r, forge);
    const policy = parseRoundSettings(r.strategyJson, privacyPolicyOf(this.config)).privacy;
    const layout = await this.storage.agentLayout(agent, round);
    if (!layout)
      throw new CouncilHttpError(
        'agent_not_configured',
        `this council has no adapter layout for ${agent}, so it accepts no ${agent} updates (the round status lists the agents it accepts)`,
        { agent },
      );
    const asm = new UpdateAssembler(layout);
    const reader = source.reader(asm);
    let digest = '';
    let roundKey: string | undefined;
    let receipt: Receipt | undefined;
    try {
      const res = await this.storage.insertSubmission({
        round,
        forgeId: forge.id,
        agent,
        layout,
        chunks: reader.chunks,
        complete: async (stored) => {
          const sub = reader.submission(agent);
          roundKey = sub.round_key;
          checkReleaseBinding(sub.round_key, binding);
          checkUpdateHead(sub, { agent, acceptedFingerprints: this.config.base_fingerprints, layout, policy });
          asm.throwDataProblem();
          const norm = asm.norm();
          const bound = checkNorm(norm, sub, layout, policy);
          digest = reader.digest ?? asm.runningDigest(sub) ?? (await asm.digestFromStored(sub, stored));
          await this.refuseReplayedRelease(forge, round, agent, digest, sub.round_key);
          const acceptedAt = this.now().toISOString();
          receipt = {
            round,
            forge: forge.name,
            agent,
            digest,
            accepted_at: acceptedAt,
            coords: layout.size,
            norm,
            norm_bound: bound,
            ...(sub.round_key !== undefined ? { round_key: sub.round_key } : {}),
          };
          return {
            digest,
            baseFingerprint: sub.base_fingerprint,
            clipNorm: sub.privacy.clip_norm,
            noiseMultiplier: sub.privacy.noise_multiplier,
            weight: sub.weight ?? null,
            norm,
            coords: layout.size,
            receivedAt: acceptedAt,
            receiptJson: JSON.stringify(receipt),
          };
        },
      });
      if (!res.inserted) return this.replay(res.row.digest, digest, res.row.receiptJson, round, agent, roundKey);
      this.log(
        `council: round ${round}: accepted ${forge.name}/${agent} (${layout.size} coords, norm ${res.row.norm.toPrecision(4)} ≤ ${(receipt as Receipt).norm_bound.toPrecision(4)})`,
      );
      return { created: true, receipt: receipt as Receipt };
    } catch (err) {
      if (err instanceof RoundNotOpenError) throw this.lateError(round, (await this.storage.round(round)) ?? r);
      if (err instanceof LayoutChangedError)
        throw new CouncilHttpError(
          'unavailable',
          `the ${agent} adapter layout changed while the update was read; send it again (it is checked against the new layout)`,
        );
      throw err;
    }
  }

  /**
   * The same bytes as another forge's release are a replay of it, not an update of this forge's own
   * (as a release or stripped to a plain body). Two plain bodies alike are left to the aggregation
   * rule: colluding forges that send one vector (the simulator's attackers) are its to withstand.
   */
  private async refuseReplayedRelease(
    forge: ForgeRow,
    round: number,
    agent: string,
    digest: string,
    roundKey: string | undefined,
  ): Promise<void> {
    const alike = (await this.storage.submissionsFor(round, agent)).filter(
      (s) => s.digest === digest && s.forgeId !== forge.id,
    );
    if (
      alike.some(
        (s) => roundKey !== undefined || (JSON.parse(s.receiptJson) as { round_key?: unknown }).round_key !== undefined,
      )
    ) {
      throw new CouncilHttpError(
        'replayed_release',
        `another forge already sent exactly these bytes for ${agent} in round ${round}: an update is accepted from the forge that drew it, once`,
      );
    }
  }

  private replay(
    stored: string,
    presented: string,
    receiptJson: string,
    round: number,
    agent: string,
    roundKey: string | undefined,
  ): { created: boolean; receipt: Receipt } {
    const receipt = JSON.parse(receiptJson) as Receipt;
    if (
      stored === presented &&
      (roundKey === undefined || receipt.round_key === undefined || receipt.round_key === roundKey)
    )
      return { created: false, receipt };
    if (stored === presented) {
      throw new CouncilHttpError(
        'duplicate_submission',
        `the update for ${agent} in round ${round} was accepted with round key ${receipt.round_key ?? '(none)'}; the same bytes under round key ${roundKey ?? '(none)'} are not a replay of it`,
        { accepted_round_key: receipt.round_key ?? null, round_key: roundKey ?? null },
      );
    }
    throw new CouncilHttpError(
      'duplicate_submission',
      `an update for ${agent} in round ${round} was already accepted from this forge, with different content (digest ${stored.slice(0, 12)}…); one update per agent and round`,
      { accepted_digest: stored, digest: presented },
    );
  }

  private lateError(round: number, r: RoundRow): CouncilHttpError {
    return new CouncilHttpError(
      'late_submission',
      `round ${round} is ${r.state === 'open' ? 'past its deadline' : `closed (${r.closeReason ?? 'closed'} at ${r.closedAt ?? '?'})`}; submit to the current round`,
      { state: r.state, deadline: r.deadline },
    );
  }

  /** A forge outside the round's cohort sends nothing this round; it is told when to look again. */
  private refuseIfNotSampled(r: RoundRow, forge: ForgeRow): void {
    if (!r.cohort || r.cohort.includes(forge.name)) return;
    throw new CouncilHttpError(
      'not_in_cohort',
      `forge "${forge.name}" is not in the cohort of round ${r.round} (${r.cohort.length} forges sampled); send nothing, and look again after ${r.deadline} or when the round has closed`,
      {
        round: r.round,
        cohort_size: r.cohort.length,
        retry_after: r.deadline,
      },
    );
  }

  private async refuseIfLate(r: RoundRow, forge: ForgeRow): Promise<void> {
    if (r.state !== 'open') throw this.lateError(r.round, r);
    if (this.now().getTime() >= Date.parse(r.deadline)) {
      await this.checkDeadline();
      throw this.lateError(r.round, r);
    }
    const sealed = await this.storage.sealOf(r.round, forge.id);
    if (sealed)
      throw new CouncilHttpError(
        'late_submission',
        `forge "${forge.name}" sealed round ${r.round} at ${sealed}: its updates for the round are final`,
        { sealed_at: sealed },
      );
  }

  /** The forge says its updates for the round are complete. Idempotent. */
  async seal(forge: ForgeRow, round: number): Promise<SealReceipt> {
    const r = await this.roundOrThrow(round);
    const prior = await this.storage.sealOf(round, forge.id);
    if (!prior) {
      this.refuseIfNotSampled(r, forge);
      const fresh = (await this.storage.forgeById(forge.id)) ?? forge;
      if (fresh.exiledAt)
        throw new CouncilHttpError(
          'forge_exiled',
          `forge "${forge.name}" was exiled after round ${fresh.exiledRound}`,
          { exiled_round: fresh.exiledRound },
        );
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
      this.log(
        `council: round ${round}: ${forge.name} sealed (${agents.length} agent${agents.length === 1 ? '' : 's'})`,
      );
      const counts = await this.storage.forgeCounts(round);
      if (counts.sealed >= this.config.min_forges) await this.close(round, 'min_forges');
    }
    return { round, forge: forge.name, sealed_at: sealedAt, agents };
  }

  private close(round: number, reason: 'min_forges' | 'deadline'): Promise<void> {
    // A stopping council closes nothing: stop() may already have returned and the storage be closed.
    // What asked for the close (the seals, the deadline) is in storage, and the next start closes the
    // round from it (start() the seals, the first deadline check the deadline).
    if (this.stopped) return Promise.resolve();
    // Between the round's close in storage and its aggregation in the queue there is nothing else
    // for idle() to see: this close is tracked until it has queued.
    return this.track(
      (async () => {
        if (!(await this.storage.closeRound(round, this.now().toISOString(), reason))) return;
        this.log(
          `council: round ${round} closed (${reason === 'min_forges' ? `${this.config.min_forges} forges sealed` : 'deadline'}); ${this.stopped ? 'the council is stopping: the next start aggregates it' : 'aggregating'}`,
        );
        this.enqueueAggregation(round);
      })(),
    );
  }

  private enqueueAggregation(round: number): void {
    // Once stop() has begun no aggregation starts: the round stays closing in storage, and the next
    // start (or another process's sweep) aggregates it.
    if (this.stopped || this.queued.has(round)) return;
    this.queued.add(round);
    this.work = this.work
      .then(() => this.aggregateRound(round))
      .catch((err: unknown) => {
        if (err instanceof ClaimLostError)
          this.log(
            `council: round ${round}: another process took over its aggregation (this one was too slow to renew its claim); leaving it to that one`,
          );
        else this.log(`council: aggregation of round ${round} failed: ${(err as Error).stack ?? String(err)}`);
      })
      .finally(() => this.queued.delete(round));
  }

  /** Closes (or extends) the open round if its deadline has passed; re-arms the timer. */
  checkDeadline(): Promise<void> {
    // Tracked from its first read: a check that has not reached close() yet may still close.
    return this.track(this.deadlineCheck());
  }

  private async deadlineCheck(): Promise<void> {
    if (this.stopped) return;
    const r = await this.storage.latestRound();
    if (r?.state === 'open') {
      const now = this.now();
      if (now.getTime() >= Date.parse(r.deadline)) {
        const counts = await this.storage.forgeCounts(r.round);
        if (counts.submitted > 0) await this.close(r.round, 'deadline');
        else {
          const deadline = new Date(now.getTime() + this.config.round_deadline * 1000).toISOString();
          // Nobody sent anything: sample the cohort afresh (forges that joined since take part).
          await this.storage.extendDeadline(
            r.round,
            deadline,
            now.toISOString(),
            this.config.cohort === null ? undefined : await this.cohortFor(r.round, new Set()),
          );
          this.log(`council: round ${r.round} reached its deadline with no updates: extended to ${deadline}`);
        }
      }
    }
    await this.arm();
  }

  /** One timer for the open round's deadline (replaced whenever the deadline may have changed). */
  private async arm(): Promise<void> {
    if (this.stopped) return;
    const r = await this.storage.latestRound().catch((err: unknown) => {
      this.log(`council: cannot arm the deadline timer: ${String(err)}`);
      return undefined;
    });
    this.timer?.cancel();
    this.timer = null;
    if (this.stopped || r?.state !== 'open') return;
    this.timer = this.clock.setTimer(Date.parse(r.deadline) - this.now().getTime(), () => {
      this.checkDeadline().catch((err: unknown) => this.log(`council: deadline check failed: ${String(err)}`));
    });
  }

  /**
   * Aggregates every agent of a closed round (skipping agents already recorded: resumption),
   * then applies trust and opens the next round.
   */
  async aggregateRound(round: number): Promise<void> {
    // Exactly one process aggregates a round at a time: the one holding its claim, renewed well
    // before the lease runs out. A process that dies stops renewing; another claims after the lease.
    const leaseMs = this.config.aggregation_lease * 1000;
    const claim = (): Promise<boolean> => {
      const at = this.now();
      return this.storage.claimRound(
        round,
        this.owner,
        at.toISOString(),
        new Date(at.getTime() + leaseMs).toISOString(),
      );
    };
    if (!(await claim())) return;
    let lost = false;
    let renewal: Timer | null = null;
    const renew = (): void => {
      renewal = this.clock.setTimer(leaseMs / 3, () => {
        claim().then(
          (ok) => {
            if (!ok) lost = true;
            else if (renewal) renew();
          },
          (err: unknown) => this.log(`council: round ${round}: cannot renew the aggregation claim: ${String(err)}`),
        );
      });
    };
    renew();
    this.aggregatingRound = round;
    try {
      // Between agents, let the HTTP server answer polls, and stop if the claim went to another process.
      const between = async (): Promise<void> => {
        await new Promise((res) => setImmediate(res));
        if (lost) throw new ClaimLostError(round);
      };
      const done = await aggregateClosedRound(this.storage, round, this.aggregator, {
        log: this.log,
        fallbackPolicy: privacyPolicyOf(this.config),
        now: () => this.now(),
        between,
      });
      if (!done) return;
      if (lost || !(await claim())) throw new ClaimLostError(round);
      await this.finish(round);
    } finally {
      (renewal as Timer | null)?.cancel();
      renewal = null;
      this.aggregatingRound = null;
    }
  }

  private async finish(round: number): Promise<void> {
    const scores = await this.storage.scoresFor(round);
    const forges = new Map((await this.storage.listForges()).map((f) => [f.id, f]));
    const settings = this.trustSettings;
    const updates = withEvidence(
      roundTrustUpdates(scores, forges, settings),
      await this.storage.aggregatesOf(round),
      forges,
    );
    const next = await this.newRound(round + 1, new Set(updates.filter((u) => u.exile).map((u) => u.forgeId)));
    if (!(await this.storage.finishRound(round, this.now().toISOString(), updates, next))) return;
    for (const u of updates.filter((x) => x.exile)) {
      this.log(
        `council: THE STOA FALLS — forge "${forges.get(u.forgeId)?.name}" exiled after round ${round}: trust ${u.after.toFixed(3)} < ${settings.threshold}${u.evidence?.length ? ` (this round: ${u.evidence.join(', ')})` : ''}`,
      );
    }
    this.log(`council: round ${round} aggregated; round ${round + 1} open until ${next.deadline}`);
    await this.arm();
  }

  async adapter(agent: string, round?: number): Promise<Adapter> {
    if (!isAgent(agent))
      throw new CouncilHttpError('unknown_agent', `unknown agent "${agent}"`, { agents: [...FEDERATING_AGENTS] });
    if (isBondOnly(agent))
      throw new CouncilHttpError('bond_only_agent', `${agent} is bond-only: the council holds no adapter for it`);
    if (round === undefined || round === 0) {
      const g = round === 0 ? undefined : await this.storage.globalOf(agent);
      if (g) return adapterView(this.storage, agent, g.round, g.strategy);
      // Round 0 (and the global before any aggregate): the public initialisation in the layout in force.
      const layout = await this.storage.agentLayout(agent);
      if (!layout)
        throw new CouncilHttpError(
          'no_global',
          `this council has no adapter layout for ${agent}, so it holds no ${agent} adapter`,
        );
      return publicInitView(agent, layout);
    }
    await this.roundOrThrow(round);
    const a = await this.storage.aggregateOf(round, agent);
    if (!a?.updated)
      throw new CouncilHttpError(
        'no_aggregate',
        a
          ? `round ${round} did not update ${agent}: ${parseOutcome(a.outcomeJson).skipped_reason}`
          : `round ${round} has no ${agent} aggregate (yet)`,
      );
    return adapterView(this.storage, agent, round, parseOutcome(a.outcomeJson).strategy);
  }

  /** The layouts in force now, per agent the council accepts. */
  async layouts(): Promise<Layouts> {
    const out: Layouts['layouts'] = {};
    for (const agent of FEDERATING_AGENTS) {
      const l = await this.storage.agentLayout(agent);
      if (l) out[agent] = l.tensors.map((t) => ({ name: t.name, shape: [...t.shape] }));
    }
    return { layouts: out };
  }

  async trust(forge: ForgeRow): Promise<Trust> {
    return trustView(this.storage, this.config, forge);
  }
}

/** Each trust update with the structure evidence its forge's updates showed this round (from the agents' outcomes). */
function withEvidence<T extends { forgeId: number }>(
  updates: readonly T[],
  aggregates: readonly { outcomeJson: string }[],
  forges: ReadonlyMap<number, { name: string }>,
): (T & { evidence?: Evidence[] })[] {
  const byName = new Map<string, Set<Evidence>>();
  for (const a of aggregates) {
    const ev = parseOutcome(a.outcomeJson).details.evidence;
    if (ev && typeof ev === 'object')
      for (const [name, kind] of Object.entries(ev as Record<string, Evidence>))
        byName.set(name, (byName.get(name) ?? new Set()).add(kind));
  }
  return updates.map((u) => {
    const ev = byName.get(forges.get(u.forgeId)?.name ?? '');
    return ev ? { ...u, evidence: [...ev].sort() } : u;
  });
}
