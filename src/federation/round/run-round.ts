/**
 * One federation round from the forge's side (`kourai federate round`), as a function over small
 * interfaces — the council transport (HTTP or in-process), the learner (the real trainer), the
 * privacy gate, the council adapter store and the memoir — so a simulation can drive many forges
 * through it without sockets or timers.
 *
 *   consent → the council (protocol, exile, base) → which round (a started one is resumed) →
 *   the ledger's anchors → the council's privacy policy → the plan (--dry-run stops here) →
 *   per speaking agent: train from the global council adapter (round 0: the council's public
 *   initialisation) on the council view, the delta (trained − that global, round 1 included),
 *   ledger row, keyed noise, submit → seal → wait for the aggregate → store it as new council
 *   versions (bonds untouched) → probes → trust → a private council_event in the memoir.
 *
 * Resuming: a round is finished when its council_event is in the memoir. Until then its ledger
 * rows say it was started; the next run goes back to it, resends the stored releases (the same
 * bytes: no new noise, nothing spent twice), seals, waits, and brings it home. Every council call
 * is idempotent and retried with backoff while the council is slow, down or restarting.
 */
import { BudgetExhaustedError, CancelledError, EnvironmentError, ExitCode, KouraiError } from '../../errors.js';
import { FEDERATING_AGENTS, isBondOnly, type Agent, type FederatingAgent } from '../../memoir/format/agents.js';
import type { CouncilEventDetails } from '../../memoir/derive/council-event.js';
import { applyCouncilPolicy } from '../../privacy/council-policy.js';
import { checkLedger, ledgerHead } from '../../privacy/ledger-anchor.js';
import { privacyFloor } from '../../privacy/privacy-floor.js';
import type { PrivacyConfig } from '../../privacy/privacy-config.js';
import type { PrivacyGate, ReleaseOutcome } from '../../privacy/round-gate.js';
import { globalL2, type NamedTensor } from '../../tensor/tensor.js';
import type { EpochProgress } from '../../train/trainer.js';
import { CouncilRequestError } from '../council-client.js';
import { checkCouncilAdapter, checkFiniteDelta, checkGlobalDescent } from './adapter-check.js';
import { PROTOCOL_VERSION, type Receipt, type RoundStatus, type Trust } from '../../protocol/wire.js';
import type { CouncilAdapters } from './council-adapters.js';
import { signalOf, type CouncilValidation } from '../../train/applied-lean.js';
import { councilEvents, memoirLedgerAnchors } from './events-memoir.js';
import { councilAnchors, spentRounds } from './ledger-anchors.js';
import type { CouncilLearner, Probe } from './learner.js';
import type { Membership } from './membership.js';
import { planFederationRound, AGENT_VERDICT_TEXT, type AgentVerdict, type FederationPlan } from './plan.js';
import { withRetry, type RetryPolicy } from './retry.js';
import { roundKey } from './round-key.js';
import { isNotACouncil, notACouncil } from './join.js';
import { unfinishedRound } from './status.js';
import type { CouncilTransport } from './transport.js';

export type RoundEvent =
  | { type: 'plan'; plan: FederationPlan }
  | { type: 'download'; agent: FederatingAgent; what: 'global' | 'aggregate'; round: number }
  | { type: 'training'; agent: FederatingAgent; progress: EpochProgress }
  | { type: 'trained'; agent: FederatingAgent; examples: number }
  | { type: 'silent'; agent: FederatingAgent; verdict: string; detail: string | null }
  | { type: 'upload'; agent: FederatingAgent; resumed: boolean }
  | { type: 'submitted'; agent: FederatingAgent; digest: string; replay: boolean }
  | { type: 'sealed'; round: number }
  | { type: 'waiting'; round: number; state: string; sealed: number; min_forges: number; deadline: string }
  | { type: 'retry'; what: string; error: string; in_ms: number; attempt: number }
  | { type: 'stored'; agent: FederatingAgent; version: number }
  | { type: 'recorded'; beat: CouncilEventDetails['beat']; entry_id: string };

export interface RoundOptions {
  dryRun: boolean;
  /** Wait for the council to aggregate (default); false: submit, seal and return — the next run brings the round home. */
  wait: boolean;
  /** How long to wait for the aggregate before returning with `waiting` (the round stays resumable). */
  waitForMs: number;
  /** First poll interval while waiting (doubles up to 30 s). */
  pollMs: number;
  /** How long a council that is down or failing is retried before giving up (exit 9; resumable). */
  retryForMs: number;
  /** How releases travel (the transport must send the same): shown in the plan. */
  encoding?: 'json' | 'safetensors';
}

export interface EventsMemoir {
  path: string;
  /** Appends one council_event entry; returns its entry id. */
  append(details: CouncilEventDetails): string;
}

export interface RoundDeps {
  transport: CouncilTransport;
  membership: Membership;
  /** Opened with the forge's own privacy settings (its budgets); the round clips and noises with the council's published S and σ. */
  gate: PrivacyGate;
  learner: CouncilLearner;
  adapters: CouncilAdapters;
  events: EventsMemoir;
  now: () => Date;
  signal: AbortSignal;
  sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  onEvent?: (e: RoundEvent) => void;
  options: RoundOptions;
}

export interface SentAgent {
  agent: FederatingAgent;
  receipt_digest: string;
  resumed: boolean;
  epsilon_cost: number;
  epsilon_after: number;
}

export type RoundResult =
  | { outcome: 'dry_run'; plan: FederationPlan }
  | { outcome: 'waiting'; plan: FederationPlan; round: number; sent: SentAgent[]; silent: SilentAgent[]; state: string }
  | {
      outcome: 'completed';
      plan: FederationPlan;
      round: number;
      details: CouncilEventDetails;
      entry_ids: string[];
      stored: { agent: FederatingAgent; version: number }[];
    };

export interface SilentAgent {
  agent: string;
  reason: string;
  detail: string;
}

/** Nobody has anything to send: one error whose exit code says why (README, federate round). */
export function nothingToSend(plan: {
  round: number;
  mechanism?: { source: 'forge' | 'council'; noise_multiplier: number };
  agents: readonly { agent: Agent; verdict: string; detail: string | null }[];
}): KouraiError {
  const federating = plan.agents.filter((a) => a.verdict !== 'bond_only');
  const consenting = federating.filter((a) => a.verdict !== 'no_consent');
  const list = federating
    .map((a) => `${a.agent} (${a.verdict.replace(/_/g, ' ')}${a.detail ? `: ${a.detail}` : ''})`)
    .join(', ');
  if (consenting.length === 0) {
    return new KouraiError('nothing sent: no agent has consent to speak for the forge', {
      exitCode: ExitCode.conflict,
      code: 'no_consent',
      hint: 'kourai federate consent (the Sovereignty Moment)',
    });
  }
  if (consenting.every((a) => a.verdict === 'agent_budget' || a.verdict === 'forge_budget')) {
    const at = plan.mechanism
      ? ` at ${plan.mechanism.source === 'council' ? "the council's" : "this forge's"} σ = ${plan.mechanism.noise_multiplier}`
      : '';
    return new BudgetExhaustedError(
      `nothing sent: the Whisper Limit cannot afford another release${at} for any agent that may speak: ${list}`,
      'kourai whisper',
    );
  }
  if (consenting.every((a) => a.verdict === 'round_closed')) {
    return new KouraiError(`nothing sent: round ${plan.round} is closed`, {
      exitCode: ExitCode.conflict,
      code: 'round_closed',
      hint: 'run kourai federate round again when the council has opened the next round',
    });
  }
  return new KouraiError(`nothing sent: every agent stays silent: ${list}`, {
    exitCode: ExitCode.failure,
    code: 'nothing_to_send',
    hint: 'kourai federate round --dry-run shows why each agent is silent',
  });
}

/** The council sampled other forges for this round (cohorts): this forge waits for the next one. */
export function notInCohort(round: number, size: number, nextCheck: string): KouraiError {
  return new KouraiError(
    `nothing sent: the council did not sample this forge for round ${round} (a cohort of ${size}); no budget was spent`,
    {
      exitCode: ExitCode.conflict,
      code: 'not_in_cohort',
      hint: `run kourai federate round again after ${nextCheck} (or once round ${round} has closed)`,
    },
  );
}

function sub(a: readonly NamedTensor[], b: readonly NamedTensor[]): NamedTensor[] {
  const byName = new Map(b.map((t) => [t.name, t]));
  return a.map((t) => {
    const o = byName.get(t.name);
    if (!o || o.data.length !== t.data.length)
      throw new Error(`tensor ${t.name} differs between the trained and the starting adapter`);
    const data = new Float32Array(t.data.length);
    for (let i = 0; i < data.length; i++) data[i] = (t.data[i] as number) - (o.data[i] as number);
    return { name: t.name, shape: [...t.shape], data };
  });
}

export async function runRound(d: RoundDeps): Promise<RoundResult> {
  const { transport: t, membership: m, options: o } = d;
  const emit = d.onEvent ?? (() => undefined);
  const policy: RetryPolicy = {
    retryForMs: o.retryForMs,
    now: () => d.now().getTime(),
    sleep: d.sleep,
    signal: d.signal,
    onRetry: (what, err, inMs, attempt) => emit({ type: 'retry', what, error: err.message, in_ms: inMs, attempt }),
    spent: { ms: 0 },
  };
  const call = <T>(what: string, fn: () => Promise<T>): Promise<T> => withRetry(what, fn, policy);
  const checkCancel = (what: string): void => {
    if (d.signal.aborted)
      throw new CancelledError(`cancelled ${what}: nothing half-written; kourai federate round resumes the round`);
  };

  // Consent first: with nobody allowed to speak, nothing goes to the council at all.
  const rows0 = d.gate.releases();
  const consent = d.gate.consentMap();
  const events0 = councilEvents(d.events.path, m.council_key);
  const unfinished = unfinishedRound(rows0, events0, m.council_key);
  if (!unfinished && !FEDERATING_AGENTS.some((a) => consent[a])) {
    throw nothingToSend({
      round: 0,
      agents: FEDERATING_AGENTS.map((agent) => ({ agent, verdict: 'no_consent', detail: null })),
    });
  }

  const health = await call('asking the council', () => t.health()).catch((err: unknown) => {
    throw isNotACouncil(err) ? notACouncil(t.where, err, 'nothing was sent') : err;
  });
  if (health.protocol !== PROTOCOL_VERSION) {
    throw new KouraiError(
      `the council at ${t.where} now speaks protocol v${health.protocol}; this kourai speaks v${PROTOCOL_VERSION}: nothing was sent`,
      { exitCode: ExitCode.network, code: 'protocol_mismatch' },
    );
  }
  let status = await call('asking the council for the current round', () => t.currentRound());
  if (status.you.exiled) {
    const trust = await call('asking the council for this forge’s trust', () => t.trust());
    recordExile(d, status, trust, events0);
    throw new KouraiError(
      `this forge was exiled by the council (the Stoa Falls): it refuses the forge's updates; nothing was sent`,
      { exitCode: ExitCode.network, code: 'forge_exiled', hint: 'kourai federate status' },
    );
  }
  if (!status.accepted_base_fingerprints.includes(d.learner.fingerprint)) {
    throw new EnvironmentError(
      `the council accepts base model ${status.accepted_base_fingerprints.join(', ') || '(none)'}; this forge now runs ${d.learner.fingerprint}: nothing was sent`,
      'a forge federates only with a council of its base model (see `learn` in config.json)',
    );
  }
  const resuming = unfinished !== null;
  if (unfinished && unfinished.round !== status.round)
    status = await call(`asking the council for round ${unfinished.round}`, () => t.round(unfinished.round));
  // Not sampled into this round's cohort: nothing is trained, released, spent or sent.
  if (!resuming && status.cohort && !status.cohort.you)
    throw notInCohort(status.round, status.cohort.size, status.cohort.next_check);
  const n = status.round;
  const key = roundKey(m.council_key, n);
  const trustBefore = await call('asking the council for this forge’s trust', () => t.trust());
  // The ledger against this round's memoir and what the council holds: its receipts and each round's policy.
  const past: RoundStatus[] = [];
  for (const r of spentRounds(rows0, m.council_key, n))
    past.push(await call(`asking the council for round ${r}`, () => t.round(r)));
  checkLedger(rows0, d.gate.ledger.envelopes(), {
    ...memoirLedgerAnchors([d.events.path]),
    ...councilAnchors(m.council_key, [status, ...past], trustBefore),
  });

  // A global is checked against the public initialisation it descends from (adapter-check.ts).
  const statuses = new Map<number, Promise<RoundStatus>>([
    [n, Promise.resolve(status)],
    ...past.map((p) => [p.round, Promise.resolve(p)] as const),
  ]);
  const statusOf = (r: number): Promise<RoundStatus> => {
    let st = statuses.get(r);
    if (!st) statuses.set(r, (st = call(`asking the council for round ${r}`, () => t.round(r))));
    return st;
  };
  const checkedGlobal = async (agent: FederatingAgent, g: number, layout: ReturnType<typeof d.learner.layout>) => {
    const x = await call(`downloading ${agent}'s global adapter`, () => t.aggregate(g, agent, { layout }));
    await checkGlobalDescent(x, { layout, round: g, publicInit: status.public_init, statusOf });
    return x;
  };

  const published = status.privacy_policy ?? null;
  const decision = applyCouncilPolicy(
    d.gate.config,
    published && { clipNorm: published.clip_norm, noiseMultiplier: published.noise_multiplier },
  );
  if (!decision.ok) {
    if (decision.reason === 'unaffordable') throw new BudgetExhaustedError(decision.message, decision.hint);
    if (decision.reason === 'floor')
      throw new KouraiError(decision.message, {
        exitCode: ExitCode.budgetExhausted,
        code: 'privacy_floor',
        hint: decision.hint,
      });
    throw new KouraiError(decision.message, {
      exitCode: ExitCode.conflict,
      code: 'council_policy',
      hint: decision.hint,
    });
  }
  const gate = d.gate.withConfig(decision.config);
  const config: PrivacyConfig = decision.config;

  // The plan: who speaks, with what, at what cost.
  const counts = new Map(FEDERATING_AGENTS.map((a) => [a as Agent, d.learner.count(a)]));
  const shareable: Partial<Record<Agent, number>> = {};
  for (const [a, c] of counts) shareable[a] = c.tooLittle ? 0 : c.examples;
  const drawn = new Set(rows0.filter((r) => r.round === key).map((r) => r.agent));
  const plan = planFederationRound({
    council: { url: m.url, forge: m.forge, council_key: m.council_key },
    status,
    roundKey: key,
    resuming,
    floor: privacyFloor(d.gate.config),
    baseFingerprint: d.learner.fingerprint,
    config,
    source: decision.source,
    encoding: o.encoding ?? 'json',
    budget: gate.planRound({ round: key, shareable }),
    counts,
    drawn,
    layout: (a) => d.learner.layout(a),
  });
  emit({ type: 'plan', plan });
  if (o.dryRun) return { outcome: 'dry_run', plan };
  if (plan.speakers.length === 0) throw nothingToSend(plan);

  // Each speaker: train, draw, send.
  const sent: SentAgent[] = [];
  const silent: SilentAgent[] = plan.agents
    .filter((a) => !a.speaks && !isBondOnly(a.agent))
    .map((a) => ({ agent: a.agent, reason: a.verdict, detail: a.detail ?? AGENT_VERDICT_TEXT[a.verdict] }));
  const mine = new Map<FederatingAgent, NamedTensor[]>();
  const startOf = new Map<FederatingAgent, NamedTensor[]>();
  const hush = (agent: FederatingAgent, verdict: AgentVerdict | 'refused', detail: string): void => {
    silent.push({ agent, reason: verdict, detail });
    emit({ type: 'silent', agent, verdict, detail });
  };
  for (const agent of plan.speakers) {
    checkCancel(`before ${agent} spoke`);
    const p = plan.agents.find((a) => a.agent === agent);
    let out: ReleaseOutcome | null = null;
    const resumed = p?.verdict === 'resumes';
    if (resumed) {
      out = gate.released(agent, key, d.learner.fingerprint);
    } else {
      // The global she trains from (round 0: the council's public initialisation); the plan made sure there is one.
      const g = status.globals[agent] as number;
      emit({ type: 'download', agent, what: 'global', round: g });
      const layout = d.learner.layout(agent);
      const global = await checkedGlobal(agent, g, layout);
      const start = global.tensors;
      startOf.set(agent, start);
      const trained = await d.learner.train(agent, start, (progress) => emit({ type: 'training', agent, progress }));
      checkCancel(`after training ${agent}`);
      if (trained.status === 'skipped') {
        hush(agent, 'too_little_data', trained.reason);
        continue;
      }
      emit({ type: 'trained', agent, examples: trained.examples });
      mine.set(agent, trained.tensors);
      // Before spending: is the round still taking updates?
      const now = await call(`asking the council about round ${n}`, () => t.round(n));
      if (now.state !== 'open' || now.you.sealed) {
        hush(agent, 'round_closed', `round ${n} closed while ${agent} trained (nothing spent)`);
        continue;
      }
      // Always the change from the global she trained from (protocol v2): clipping touches only what was learned.
      const delta = sub(trained.tensors, start);
      checkFiniteDelta(agent, g, delta);
      try {
        out = gate.recordRelease({ round: key, agent, delta, baseFingerprint: d.learner.fingerprint });
      } catch (err) {
        if (err instanceof BudgetExhaustedError) {
          hush(agent, 'agent_budget', err.message);
          continue;
        }
        if (err instanceof KouraiError && err.code === 'no_consent') {
          hush(agent, 'no_consent', 'consent was withdrawn during the round (nothing spent)');
          continue;
        }
        throw err;
      }
    }
    if (!out) continue;
    checkCancel(`before sending ${agent}`);
    emit({ type: 'upload', agent, resumed });
    let receipt: Receipt;
    try {
      receipt = await call(`sending ${agent}'s update`, () => t.submitRelease(n, (out as ReleaseOutcome).release));
    } catch (err) {
      if (err instanceof CouncilRequestError && err.status < 500) {
        gate.recordOutcome(out.releaseId, 'failed', `${err.councilCode}: ${err.message}`);
        if (err.councilCode === 'forge_exiled') throw err;
        hush(
          agent,
          err.councilCode === 'late_submission' ? 'round_closed' : 'refused',
          `the council refused it: ${err.message} (its budget stays spent)`,
        );
        continue;
      }
      if (!(err instanceof CancelledError)) gate.recordOutcome(out.releaseId, 'failed', (err as Error).message);
      throw err;
    }
    gate.recordOutcome(out.releaseId, 'acknowledged', receipt.digest);
    emit({ type: 'submitted', agent, digest: receipt.digest, replay: resumed });
    const row = gate.ledger.find(agent, key);
    const before = rows0.filter((r) => r.agent === agent && r.round !== key);
    sent.push({
      agent,
      receipt_digest: receipt.digest,
      resumed,
      epsilon_cost: resumed ? 0 : (p?.epsilon_cost ?? 0),
      epsilon_after: row?.epsilonAgent ?? before[before.length - 1]?.epsilonAgent ?? 0,
    });
  }
  if (sent.length === 0)
    throw nothingToSend({
      round: n,
      mechanism: plan.mechanism,
      agents: plan.agents.map((a) => ({
        agent: a.agent,
        verdict: silent.filter((x) => x.agent === a.agent).at(-1)?.reason ?? a.verdict,
        detail: a.detail,
      })),
    });

  if (!status.you.sealed) {
    try {
      await call(`sealing round ${n}`, () => t.seal(n));
      emit({ type: 'sealed', round: n });
    } catch (err) {
      if (!(err instanceof CouncilRequestError && err.councilCode === 'late_submission')) throw err;
    }
  }

  // Wait for the council's aggregate.
  const waitStart = d.now().getTime();
  let poll = o.pollMs;
  let s: RoundStatus = status;
  for (;;) {
    s = await call(`waiting for round ${n}`, () => t.round(n));
    if (s.state === 'aggregated') break;
    emit({
      type: 'waiting',
      round: n,
      state: s.state,
      sealed: s.forges_sealed,
      min_forges: s.min_forges,
      deadline: s.deadline,
    });
    if (!o.wait || d.now().getTime() - waitStart + poll > o.waitForMs)
      return { outcome: 'waiting', plan, round: n, sent, silent, state: s.state };
    await d.sleep(poll, d.signal);
    poll = Math.min(30_000, poll * 2);
  }

  // Bring it home: each aggregated agent's adapter becomes a new council version.
  const stored: { agent: FederatingAgent; version: number }[] = [];
  const cameBack: CouncilEventDetails['came_back'] = [];
  const learned: CouncilEventDetails['learned'] = [];
  for (const outcome of s.outcomes) {
    const agent = outcome.agent as FederatingAgent;
    if (!FEDERATING_AGENTS.includes(agent)) continue;
    let version: number | null = null;
    let strategy = s.strategy.strategy;
    let updateNorm: number | null = null;
    let noiseNorm: number | null = null;
    let validation: CouncilEventDetails['came_back'][number]['validation'] = null;
    if (outcome.aggregated) {
      version = d.adapters.storedFor(agent, key);
      if (version === null) {
        checkCancel(`before ${agent}'s adapter was stored`);
        const from = status.globals[agent];
        const layout = d.learner.layout(agent);
        // The global this round started from: what the aggregate may move by at most the policy's bound.
        const downloadFrom = async (g: number): Promise<NamedTensor[]> =>
          (await checkedGlobal(agent, g, layout)).tensors;
        const startGlobal = startOf.get(agent) ?? (from !== undefined ? await downloadFrom(from) : null);
        const before = startOf.get(agent) ?? d.adapters.current(agent)?.tensors ?? startGlobal;
        emit({ type: 'download', agent, what: 'aggregate', round: n });
        const a = await call(`downloading ${agent}'s new council adapter`, () => t.aggregate(n, agent, { layout }));
        checkCouncilAdapter(a, {
          layout,
          ...(startGlobal
            ? {
                moved: {
                  from: startGlobal,
                  policy: s.privacy_policy,
                  used: outcome.used,
                  serverLr: s.strategy.server_lr,
                },
              }
            : {}),
        });
        strategy = a.strategy;
        updateNorm = before ? globalL2(sub(a.tensors, before)) : null;
        const coords = a.tensors.reduce((x, tt) => x + tt.data.length, 0);
        noiseNorm = config.noiseMultiplier * config.clipNorm * Math.sqrt(coords / Math.max(1, outcome.used));
        // Measured against what this player applies now, so before the new version is stored.
        const checked = (await d.learner.validate?.(agent, a.tensors)) ?? null;
        const yours = (await d.learner.probeYours?.(agent)) ?? [];
        version = d.adapters.save(agent, a.tensors, {
          councilKey: m.council_key,
          round: n,
          roundKey: key,
          strategy: a.strategy,
          metrics: { signal: signalOf(updateNorm, noiseNorm, outcome.used), validation: checked },
        });
        emit({ type: 'stored', agent, version });
        validation = checked && validationSummary(checked);
        learned.push({ agent, probes: await probes(d, agent, before, a.tensors, mine.get(agent) ?? null, yours) });
      }
      stored.push({ agent, version });
    }
    cameBack.push({
      agent,
      aggregated: outcome.aggregated,
      strategy,
      updates: outcome.updates,
      used: outcome.used,
      skipped_reason: outcome.skipped_reason,
      version,
      update_norm: updateNorm,
      noise_norm: noiseNorm,
      validation,
    });
  }

  const trust: Trust = await call('asking the council for this forge’s trust', () => t.trust());
  const previous = events0.filter((e) => e.details.beat === 'council_of_sisters').at(-1);
  const details: CouncilEventDetails = {
    format: 'kourai.council-event/1',
    beat: 'council_of_sisters',
    council: m.council_key,
    forge: m.forge,
    round: n,
    round_key: key,
    forges: s.forges_submitted,
    spoke: sent.map((x) => ({
      agent: x.agent,
      epsilon_cost: x.epsilon_cost,
      epsilon_after: x.epsilon_after,
      receipt_digest: x.receipt_digest,
      used: s.outcomes.find((oc) => oc.agent === x.agent)?.yours_used ?? null,
      resumed: x.resumed,
    })),
    silent: dedupe(silent),
    came_back: cameBack,
    learned,
    trust: {
      before: previous?.details.trust.after ?? trustBefore.trust,
      after: trust.trust,
      exiled: trust.exiled,
      exiled_round: trust.exiled_round,
    },
    exiles: (s.exiles ?? []).map((e) => ({ forge: e.forge, round: e.round, you: e.forge === m.forge })),
    ledger_head: ledgerHead(gate.ledger.releases()),
  };
  const entryIds = [d.events.append(details)];
  emit({ type: 'recorded', beat: 'council_of_sisters', entry_id: entryIds[0] as string });
  if (details.exiles.length > 0) {
    const id = d.events.append({ ...details, beat: 'stoa_falls' });
    entryIds.push(id);
    emit({ type: 'recorded', beat: 'stoa_falls', entry_id: id });
  }
  return { outcome: 'completed', plan, round: n, details, entry_ids: entryIds, stored };
}

function dedupe(silent: readonly SilentAgent[]): SilentAgent[] {
  const byAgent = new Map<string, SilentAgent>();
  for (const s of silent) byAgent.set(s.agent, s); // the latest reason wins (e.g. planned to speak, then too little data)
  return FEDERATING_AGENTS.filter((a) => byAgent.has(a)).map((a) => byAgent.get(a) as SilentAgent);
}

async function probes(
  d: RoundDeps,
  agent: FederatingAgent,
  before: readonly NamedTensor[] | null,
  after: readonly NamedTensor[],
  mine: readonly NamedTensor[] | null,
  yours: readonly Probe[],
): Promise<CouncilEventDetails['learned'][number]['probes']> {
  const b: Probe[] = before ? await d.learner.probe(agent, before) : [];
  const a = await d.learner.probe(agent, after);
  const m: Probe[] = mine ? await d.learner.probe(agent, mine) : [];
  const at = (ps: readonly Probe[], pref: string): number | null =>
    ps.find((y) => y.preference === pref)?.value ?? null;
  // No adapter before the round: the base alone, which prefers nothing (0.5).
  return a.map((x) => ({
    preference: x.preference,
    measure: 'accuracy' as const,
    n: x.n,
    before: at(b, x.preference) ?? (x.preference === 'routing' ? 0 : 0.5),
    after: x.value,
    mine: at(m, x.preference),
    yours: at(yours, x.preference),
  }));
}

/** The scene's summary of a validation: accuracies by lean, and what is applied now. */
function validationSummary(v: CouncilValidation): NonNullable<CouncilEventDetails['came_back'][number]['validation']> {
  const acc = (lean: number): number => v.choice.overall.scores.find((x) => x.lean === lean)?.accuracy ?? 0;
  return {
    bond_version: v.bond_version,
    scenes: v.scenes,
    examples: v.examples,
    before: v.before,
    bond_only: acc(0),
    council_only: acc(1),
    both: acc(0.5),
    lean: v.choice.overall.lean,
    after: acc(v.choice.overall.lean),
    passed: v.passed,
  };
}

/** Records the forge's own exile once (a Stoa Falls council_event), the first time a run learns of it. */
function recordExile(d: RoundDeps, status: RoundStatus, trust: Trust, events: ReturnType<typeof councilEvents>): void {
  if (events.some((e) => e.details.beat === 'stoa_falls' && e.details.exiles.some((x) => x.you))) return;
  const m = d.membership;
  const previous = events.at(-1);
  d.events.append({
    format: 'kourai.council-event/1',
    beat: 'stoa_falls',
    council: m.council_key,
    forge: m.forge,
    round: status.round,
    round_key: roundKey(m.council_key, status.round),
    forges: null,
    spoke: [],
    silent: [],
    came_back: [],
    learned: [],
    trust: {
      before: previous?.details.trust.after ?? null,
      after: trust.trust,
      exiled: true,
      exiled_round: trust.exiled_round,
    },
    exiles: [{ forge: m.forge, round: trust.exiled_round ?? status.round, you: true }],
    ledger_head: ledgerHead(d.gate.ledger.releases()),
  });
}
