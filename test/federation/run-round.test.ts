import { randomBytes } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import type { CouncilConfig } from '../../src/council/config.js';
import { ExitCode, KouraiError, NetworkError } from '../../src/errors.js';
import type { CouncilAdapters } from '../../src/federation/round/council-adapters.js';
import { memoirEventsWriter } from '../../src/federation/round/events-memoir.js';
import type { CouncilLearner } from '../../src/federation/round/learner.js';
import { requireMembership, type Membership } from '../../src/federation/round/membership.js';
import {
  runRound,
  type RoundEvent,
  type RoundOptions,
  type RoundResult,
} from '../../src/federation/round/run-round.js';
import { httpTransport, type CouncilTransport } from '../../src/federation/round/transport.js';
import { FEDERATING_AGENTS, type FederatingAgent } from '../../src/memoir/format/agents.js';
import { readCouncilEvents } from '../../src/memoir/derive/council-event.js';
import type { CouncilRelease } from '../../src/privacy/release.js';
import { DEFAULT_PRIVACY_CONFIG, type PrivacyConfig } from '../../src/privacy/privacy-config.js';
import { PrivacyGate } from '../../src/privacy/round-gate.js';
import { mulberry32 } from '../../src/runtime/seeded-random.js';
import type { NamedTensor } from '../../src/tensor/tensor.js';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import { VirtualClock } from '../../src/runtime/clock.js';
import { SPECS, startTestCouncil, type TestCouncil } from '../council/helpers.js';
import { testCtx, type TestCtx } from '../helpers/ctx.js';
import { runCli } from '../helpers/run.js';

/**
 * The round as a function against a real council on 127.0.0.1, with a small learner in place of
 * the trainer (the council's layout for every agent is two small tensors, and "training" adds a
 * seeded step): what is under test here is the round's protocol — retries, a council that restarts
 * mid-round, resuming without new noise or new spending, refusals — not learning.
 */
const join = () => import('../../src/commands/federate/join.js');
const consent = () => import('../../src/commands/federate/consent.js');

const councils: TestCouncil[] = [];
const homes: TestCtx[] = [];
afterEach(async () => {
  for (const c of councils.splice(0)) await c.close().catch(() => undefined);
  for (const h of homes.splice(0)) h.cleanup();
});

async function council(over: Partial<CouncilConfig> = {}, dir?: string): Promise<TestCouncil> {
  const c = await startTestCouncil(
    { base_fingerprints: [BUILTIN_FINGERPRINT], layouts: { '*': SPECS }, min_forges: 1, strategy: 'fedavg', ...over },
    dir,
  );
  councils.push(c);
  return c;
}

async function forge(
  c: TestCouncil,
  name: string,
  allow: string[] = ['all'],
): Promise<{ ctx: TestCtx; membership: Membership }> {
  const ctx = testCtx();
  homes.push(ctx);
  await runCli(join, { server: c.url, token: await c.token(name) }, ctx);
  if (allow.length) await runCli(consent, { allow }, ctx);
  return { ctx, membership: requireMembership(ctx.home) };
}

function smallLearner(
  seed: number,
  opts: { examples?: Partial<Record<FederatingAgent, number>> } = {},
): CouncilLearner & { trained: FederatingAgent[] } {
  const trained: FederatingAgent[] = [];
  return {
    trained,
    fingerprint: BUILTIN_FINGERPRINT,
    rank: 2,
    alpha: 2,
    layout: () => SPECS.map((s) => ({ name: s.name, shape: [...s.shape] })),
    count: (agent) => {
      const n = opts.examples?.[agent] ?? 20;
      return { examples: n, scenes: 4, tooLittle: n < 8 ? `${n} council examples (needs at least 8)` : null };
    },
    async train(agent, start) {
      trained.push(agent);
      const r = mulberry32(seed * 131 + FEDERATING_AGENTS.indexOf(agent));
      return {
        status: 'trained',
        examples: 20,
        tensors: start.map((t) => ({
          name: t.name,
          shape: [...t.shape],
          data: Float32Array.from(t.data, (v) => v + 0.05 * (r() - 0.5)),
        })),
      };
    },
    probe: async () => [],
  };
}

function memoryAdapters(): CouncilAdapters & { saved: Map<string, NamedTensor[]> } {
  const saved = new Map<string, NamedTensor[]>();
  const versions = new Map<string, { version: number; key: string }[]>();
  return {
    saved,
    current: (agent) => {
      const v = versions.get(agent)?.at(-1);
      return v ? { version: v.version, tensors: saved.get(`${agent}@${v.version}`) ?? [] } : null;
    },
    storedFor: (agent, key) => versions.get(agent)?.find((v) => v.key === key)?.version ?? null,
    save(agent, tensors, from) {
      const list = versions.get(agent) ?? [];
      const version = list.length + 1;
      list.push({ version, key: from.roundKey });
      versions.set(agent, list);
      saved.set(
        `${agent}@${version}`,
        tensors.map((t) => ({ ...t, data: Float32Array.from(t.data) })),
      );
      return version;
    },
  };
}

/** Every release the round handed to the transport, in order (what would cross the wire). */
function recording(t: CouncilTransport): CouncilTransport & { releases: CouncilRelease[] } {
  const releases: CouncilRelease[] = [];
  return { ...t, releases, submitRelease: (n, r) => (releases.push(r), t.submitRelease(n, r)) };
}

const OPTS: RoundOptions = {
  dryRun: false,
  wait: true,
  waitForMs: 60_000,
  pollMs: 10,
  retryForMs: 120_000,
  encoding: 'json',
};

function deps(
  f: { ctx: TestCtx; membership: Membership },
  p: {
    transport: CouncilTransport;
    learner: CouncilLearner;
    adapters?: CouncilAdapters;
    config?: PrivacyConfig;
    signal?: AbortSignal;
    sleep?: (ms: number) => Promise<void>;
    events?: RoundEvent[];
    onEvent?: (e: RoundEvent) => void;
    options?: Partial<RoundOptions>;
  },
) {
  const gate = PrivacyGate.open({ home: f.ctx.home, config: p.config ?? DEFAULT_PRIVACY_CONFIG, random: randomBytes });
  const events = p.events ?? [];
  return {
    gate,
    run: (): Promise<RoundResult> =>
      runRound({
        transport: p.transport,
        membership: f.membership,
        gate,
        learner: p.learner,
        adapters: p.adapters ?? memoryAdapters(),
        events: memoirEventsWriter(f.membership.events_memoir, () => new Date()),
        now: () => new Date(),
        signal: p.signal ?? new AbortController().signal,
        sleep: p.sleep ?? (() => new Promise((r) => setTimeout(r, 5))),
        onEvent: (e) => {
          events.push(e);
          p.onEvent?.(e);
        },
        options: { ...OPTS, ...p.options },
      }),
  };
}

describe('a federation round against a real council (small learner)', () => {
  it('interrupted after the first update, the next run resumes: the same noised bytes, nothing spent twice, nobody retrained', async () => {
    const c = await council();
    const f = await forge(c, 'athens');
    const stop = new AbortController();
    const first = recording(httpTransport(c.url, f.membership.token));
    // Ctrl-C right after the council accepted the first agent's update.
    const d1 = deps(f, {
      transport: first,
      learner: smallLearner(1),
      signal: stop.signal,
      onEvent: (e) => e.type === 'submitted' && stop.abort(),
    });
    await expect(d1.run()).rejects.toMatchObject({ exitCode: ExitCode.cancelled });
    const spentAfter1 = d1.gate.ledger.releases();
    d1.gate.close();
    expect(spentAfter1).toHaveLength(1);
    expect(first.releases.length).toBe(1);
    expect(readCouncilEvents(f.membership.events_memoir)).toEqual([]);

    const second = recording(httpTransport(c.url, f.membership.token));
    const learner2 = smallLearner(1);
    const d2 = deps(f, { transport: second, learner: learner2 });
    const r = (await d2.run()) as RoundResult & { outcome: 'completed' };
    expect(r.outcome).toBe('completed');
    expect(r.plan.resuming).toBe(true);
    const resumed = first.releases[0] as CouncilRelease;
    expect(r.plan.agents.find((a) => a.agent === resumed.agent)).toMatchObject({ verdict: 'resumes', epsilon_cost: 0 });
    // The same document, byte for byte: no new noise was drawn for it.
    expect(JSON.stringify(second.releases.find((x) => x.agent === resumed.agent))).toBe(JSON.stringify(resumed));
    expect(learner2.trained).not.toContain(resumed.agent);
    // One ledger row per agent that spoke, the resumed one included, none twice.
    const rows = d2.gate.ledger.releases();
    expect(rows.map((x) => x.agent).sort()).toEqual(r.details.spoke.map((s) => s.agent).sort());
    expect(rows.filter((x) => x.agent === resumed.agent)).toHaveLength(1);
    expect(r.details.spoke.find((s) => s.agent === resumed.agent)).toMatchObject({ resumed: true, epsilon_cost: 0 });
    d2.gate.close();
  });

  it('Ctrl-C mid-upload: exit 130, the half-sent update is resent as it was by the next run, nothing spent twice', async () => {
    const c = await council();
    const f = await forge(c, 'athens');
    const stop = new AbortController();
    const base = httpTransport(c.url, f.membership.token, { signal: stop.signal });
    const inFlight: CouncilRelease[] = [];
    const cut: CouncilTransport = {
      ...base,
      submitRelease: (n, r) => {
        inFlight.push(r);
        const sending = base.submitRelease(n, r);
        if (inFlight.length === 2) setImmediate(() => stop.abort()); // the second agent's upload is on its way
        return sending;
      },
    };
    const d1 = deps(f, { transport: cut, learner: smallLearner(11), signal: stop.signal });
    await expect(d1.run()).rejects.toMatchObject({ exitCode: ExitCode.cancelled });
    const drawn = d1.gate.ledger.releases();
    d1.gate.close();
    expect(drawn).toHaveLength(2);
    const again = recording(httpTransport(c.url, f.membership.token));
    const d2 = deps(f, { transport: again, learner: smallLearner(11) });
    const r = (await d2.run()) as RoundResult & { outcome: 'completed' };
    expect(r.outcome).toBe('completed');
    const cutOff = inFlight[1] as CouncilRelease;
    expect(JSON.stringify(again.releases.find((x) => x.agent === cutOff.agent))).toBe(JSON.stringify(cutOff));
    const rows = d2.gate.ledger.releases();
    expect(rows.filter((x) => x.agent === cutOff.agent)).toHaveLength(1);
    expect(new Set(rows.map((x) => x.agent)).size).toBe(rows.length);
    d2.gate.close();
  });

  it('--no-wait returns `waiting`; a later run brings the round home, sending and spending nothing again', async () => {
    const c = await council({ min_forges: 2 });
    const a = await forge(c, 'athens', ['metis', 'techne']);
    const b = await forge(c, 'sparta', ['metis', 'techne']);
    const first = recording(httpTransport(c.url, a.membership.token));
    const da = deps(a, { transport: first, learner: smallLearner(14), options: { wait: false } });
    const w = await da.run();
    expect(w).toMatchObject({ outcome: 'waiting', round: 1, state: 'open' });
    const spent = da.gate.ledger.releases().length;
    da.gate.close();
    // The other forge completes the round.
    const db = deps(b, { transport: httpTransport(c.url, b.membership.token), learner: smallLearner(15) });
    expect((await db.run()).outcome).toBe('completed');
    db.gate.close();
    const later = recording(httpTransport(c.url, a.membership.token));
    const learner = smallLearner(14);
    const again = deps(a, { transport: later, learner });
    const r = (await again.run()) as RoundResult & { outcome: 'completed' };
    expect(r).toMatchObject({ outcome: 'completed', round: 1 });
    expect(r.plan.resuming).toBe(true);
    expect(learner.trained).toEqual([]);
    expect(again.gate.ledger.releases()).toHaveLength(spent);
    // The stored releases are offered again as they were (idempotent on the council): the same documents.
    expect(later.releases.map((x) => JSON.stringify(x))).toEqual(first.releases.map((x) => JSON.stringify(x)));
    expect(r.details.spoke.every((s) => s.resumed && s.epsilon_cost === 0)).toBe(true);
    again.gate.close();
  });

  it('a council that fails, then restarts mid-round: retried with backoff, the round completes', async () => {
    const c = await council();
    const f = await forge(c, 'athens');
    const base = httpTransport(c.url, f.membership.token, { retries: 0 });
    let failures = 2;
    const flaky: CouncilTransport = {
      ...base,
      submitRelease: async (n, r) => {
        if (failures-- > 0) throw new NetworkError(`the council at ${c.url} did not answer`);
        return base.submitRelease(n, r);
      },
    };
    const waits: number[] = [];
    const events: RoundEvent[] = [];
    let restarted = false;
    const d = deps(f, {
      transport: flaky,
      learner: smallLearner(2),
      events,
      sleep: async (ms) => {
        waits.push(ms);
        // The second time the round waits for the council, the council goes down and comes back on its port with its data.
        if (events.some((e) => e.type === 'sealed') && !restarted) {
          restarted = true;
          const port = Number(new URL(c.url).port);
          await c.server.close();
          const again = await startTestCouncil({ ...c.config, port }, c.dir);
          councils.push(again);
        }
      },
    });
    const r = await d.run();
    expect(r.outcome).toBe('completed');
    const retries = events.filter((e): e is Extract<RoundEvent, { type: 'retry' }> => e.type === 'retry');
    expect(retries.slice(0, 2).map((e) => e.in_ms)).toEqual([1000, 2000]);
    expect(waits.slice(0, 2)).toEqual([1000, 2000]);
    expect(restarted).toBe(true);
    // Nothing sent twice: one ledger row per speaker.
    const rows = d.gate.ledger.releases();
    expect(new Set(rows.map((x) => x.agent)).size).toBe(rows.length);
    d.gate.close();
  });

  it('a council gone for longer than --retry-for: exit 9 after the backoff, nothing trained or spent', async () => {
    const c = await council();
    const f = await forge(c, 'athens');
    await c.server.close();
    const learner = smallLearner(12);
    const events: RoundEvent[] = [];
    const d = deps(f, {
      transport: httpTransport(c.url, f.membership.token, { retries: 0 }),
      learner,
      events,
      options: { retryForMs: 3000 },
    });
    await expect(d.run()).rejects.toMatchObject({ exitCode: ExitCode.network, code: 'network' });
    expect(events.filter((e) => e.type === 'retry').map((e) => (e as { in_ms: number }).in_ms)).toEqual([1000, 2000]);
    expect(learner.trained).toEqual([]);
    expect(d.gate.ledger.releases()).toEqual([]);
    d.gate.close();
  });

  it('a revoked token: refused before anything is trained or spent (exit 9-class council error), the token never in the message', async () => {
    const c = await council();
    const f = await forge(c, 'athens');
    const learner = smallLearner(3);
    const d = deps(f, { transport: httpTransport(c.url, `kourai_1_${'x'.repeat(43)}`), learner });
    const err = (await d.run().catch((e: unknown) => e)) as KouraiError;
    expect(err).toBeInstanceOf(KouraiError);
    expect(err.code).toBe('council_unauthorized');
    expect(err.message).not.toContain('xxxxxxxx');
    expect(learner.trained).toEqual([]);
    expect(d.gate.ledger.releases()).toEqual([]);
    d.gate.close();
  });

  it('a base mismatch: exit 3, nothing trained, spent or sent', async () => {
    const c = await council({ base_fingerprints: ['sha256:another-base'] });
    // join checks the base too: join while the council accepted ours, then the council moves on.
    const c2 = await council();
    const f = await forge(c2, 'athens');
    const transport = recording(httpTransport(c.url, await c.token('athens')));
    const learner = smallLearner(3);
    const d = deps(f, { transport, learner });
    await expect(d.run()).rejects.toMatchObject({
      exitCode: ExitCode.environment,
      message: expect.stringMatching(/accepts base model sha256:another-base.*nothing was sent/),
    });
    expect(learner.trained).toEqual([]);
    expect(transport.releases).toEqual([]);
    expect(d.gate.ledger.releases()).toEqual([]);
    d.gate.close();
  });

  it('the budget spent for some agents: they stay silent with the reason, the others speak; the council_event says who and why', async () => {
    const c = await council();
    const f = await forge(c, 'athens');
    // ε = 4 per agent (the floor: ε 0.5 a release, so the council's σ = 10, ε 0.375, is followed);
    // techne and metis already spent more than 4 in one release by hand at σ = 1.
    const config = { ...DEFAULT_PRIVACY_CONFIG, agentEpsilon: 4, forgeEpsilon: 100 };
    const pre = PrivacyGate.open({
      home: f.ctx.home,
      config: { ...config, agentEpsilon: 100, noiseMultiplier: 1 },
      random: randomBytes,
    });
    for (const agent of ['techne', 'metis'] as const)
      pre.recordRelease({
        round: 'by-hand-1',
        agent,
        delta: SPECS.map((s) => ({ name: s.name, shape: s.shape, data: new Float32Array(s.shape[0]! * s.shape[1]!) })),
        baseFingerprint: BUILTIN_FINGERPRINT,
      });
    pre.close();
    const learner = smallLearner(4, { examples: { aidos: 3 } });
    const d = deps(f, { transport: httpTransport(c.url, f.membership.token), learner, config });
    const r = (await d.run()) as RoundResult & { outcome: 'completed' };
    expect(r.plan.mechanism).toMatchObject({ source: 'council', noise_multiplier: 10 });
    const silent = Object.fromEntries(r.details.silent.map((s) => [s.agent, s.reason]));
    expect(silent).toEqual({ techne: 'agent_budget', metis: 'agent_budget', aidos: 'too_little_data' });
    expect(r.plan.agents.find((a) => a.agent === 'techne')?.detail).toMatch(
      /ε [\d.]+ of 4 spent; one more release at σ = 10 costs/,
    );
    expect(learner.trained.sort()).toEqual(
      FEDERATING_AGENTS.filter((a) => !['techne', 'metis', 'aidos'].includes(a)).sort(),
    );
    const [event] = readCouncilEvents(f.membership.events_memoir);
    expect(event?.details.silent.map((s) => s.agent)).toEqual(['metis', 'techne', 'aidos']); // in the council's agent order
    expect(event?.details.spoke.map((s) => s.agent).sort()).toEqual([...learner.trained].sort());
    d.gate.close();
  });

  it('consent withdrawn during the round (the Sovereignty Moment, re-decided): she stays silent, nothing of hers is spent or sent', async () => {
    const c = await council();
    const f = await forge(c, 'athens', ['metis', 'techne']);
    const transport = recording(httpTransport(c.url, f.membership.token));
    let d: ReturnType<typeof deps> | null = null;
    d = deps(f, {
      transport,
      learner: smallLearner(13),
      // While techne trains, the player takes her voice back.
      onEvent: (e) =>
        e.type === 'trained' &&
        e.agent === 'techne' &&
        d?.gate.consent.record([{ agent: 'techne', allowed: false }], 'flags', new Date()),
    });
    const r = (await d.run()) as RoundResult & { outcome: 'completed' };
    expect(r.details.spoke.map((s) => s.agent)).toEqual(['metis']);
    expect(r.details.silent.find((s) => s.agent === 'techne')).toMatchObject({
      reason: 'no_consent',
      detail: expect.stringMatching(/withdrawn during the round \(nothing spent\)/),
    });
    expect(transport.releases.map((x) => x.agent)).toEqual(['metis']);
    expect(d.gate.ledger.releases().map((x) => x.agent)).toEqual(['metis']);
    d.gate.close();
  });

  it('a σ no Whisper Limit affords: exit 4, nothing trained or sent', async () => {
    const c = await council({ noise_multiplier: { min: 0, max: 0.3 } });
    const f = await forge(c, 'athens');
    const transport = recording(httpTransport(c.url, f.membership.token));
    const learner = smallLearner(5);
    // The player's floor (σ ≥ 0.1 here, ε ≤ 1000/8 a release) lets σ = 0.3 through to the Whisper Limit, which cannot afford it.
    const d = deps(f, {
      transport,
      learner,
      config: { ...DEFAULT_PRIVACY_CONFIG, noiseMultiplier: 0.1, agentEpsilon: 1000 },
    });
    await expect(d.run()).rejects.toMatchObject({
      exitCode: ExitCode.budgetExhausted,
      message: expect.stringMatching(/σ = 0.3: one release costs ε .* nothing was sent/),
    });
    expect(learner.trained).toEqual([]);
    expect(transport.releases).toEqual([]);
    d.gate.close();
  });

  it('the routing head is Hephaestus’s council delta: drawn through the gate, charged to him and to the forge', async () => {
    const c = await council();
    const f = await forge(c, 'athens', ['hephaestus']);
    const transport = recording(httpTransport(c.url, f.membership.token));
    const d = deps(f, { transport, learner: smallLearner(6) });
    const r = (await d.run()) as RoundResult & { outcome: 'completed' };
    expect(r.details.spoke.map((s) => s.agent)).toEqual(['hephaestus']);
    expect(transport.releases.map((x) => x.agent)).toEqual(['hephaestus']);
    const [row] = d.gate.ledger.releases();
    expect(row).toMatchObject({ agent: 'hephaestus', noiseMultiplier: 10 });
    const plan = d.gate.planRound({ shareable: { hephaestus: 20, techne: 20 } });
    expect(plan.forge.releases).toBe(1);
    expect(plan.forge.epsilonSpent).toBeGreaterThan(0);
    expect(plan.agents.find((a) => a.agent === 'hephaestus')?.capacity?.epsilonSpent).toBeCloseTo(
      plan.forge.epsilonSpent,
      9,
    );
    d.gate.close();
  });

  it('exiled by the council: the round it happened in records the Stoa Falls; the next run sends nothing and says so', async () => {
    // Three forges, no warm-up, trust = similarity, the least slack: the forge whose (noised) update lies
    // farthest from the aggregate falls in round 1.
    const c = await council({
      min_forges: 3,
      trust_warmup: 0,
      trust_alpha: 1,
      trust_threshold: 0.999,
      trust_tolerance: 1,
    });
    const fs = await Promise.all(['athens', 'sparta', 'thebes'].map((n) => forge(c, n, ['techne'])));
    const ds = fs.map((f, i) =>
      deps(f, { transport: httpTransport(c.url, f.membership.token), learner: smallLearner(7 + i) }),
    );
    const rs = (await Promise.all(ds.map((d) => d.run()))) as (RoundResult & { outcome: 'completed' })[];
    const fallen = rs.findIndex((r) => r.details.exiles.some((e) => e.you));
    expect(fallen).toBeGreaterThanOrEqual(0);
    for (const [i, f] of fs.entries()) {
      // Every forge sees the Stoa Falls of that round, the fallen one as its own.
      expect(readCouncilEvents(f.membership.events_memoir).map((e) => e.details.beat)).toEqual([
        'council_of_sisters',
        'stoa_falls',
      ]);
      expect(rs[i]?.details.exiles.map((e) => e.you)).toContain(i === fallen);
    }
    const f = fs[fallen] as (typeof fs)[number];
    const transport = recording(httpTransport(c.url, f.membership.token));
    const again = deps(f, { transport, learner: smallLearner(99) });
    await expect(again.run()).rejects.toMatchObject({ code: 'forge_exiled', exitCode: ExitCode.network });
    expect(transport.releases).toEqual([]);
    // The refusal is recorded once, as the forge's own Stoa Falls; a second refusal adds nothing.
    await expect(again.run()).rejects.toMatchObject({ code: 'forge_exiled' });
    expect(readCouncilEvents(f.membership.events_memoir).map((e) => e.details.beat)).toEqual([
      'council_of_sisters',
      'stoa_falls',
    ]);
    for (const g of [...ds.map((d) => d.gate), again.gate]) g.close();
  });

  it('cohorts: a forge the council did not sample sends nothing, trains nothing and spends nothing; a sampled one completes the round', async () => {
    const clock = new VirtualClock(Date.now());
    const c = await startTestCouncil(
      {
        base_fingerprints: [BUILTIN_FINGERPRINT],
        layouts: { '*': SPECS },
        min_forges: 1,
        strategy: 'fedavg',
        cohort: 1,
        round_deadline: 60,
      },
      undefined,
      clock,
    );
    councils.push(c);
    const athens = await forge(c, 'athens');
    const sparta = await forge(c, 'sparta');
    // Round 1 opened before any forge joined: at its deadline, with nothing sent, it is extended and sampled afresh.
    clock.advance(61_000);
    const status = await httpTransport(c.url, athens.membership.token).currentRound();
    expect(status.cohort).toMatchObject({ size: 1 });
    const inside = status.cohort?.forges[0] === 'athens' ? athens : sparta;
    const outside = inside === athens ? sparta : athens;
    const wire = recording(httpTransport(c.url, outside.membership.token));
    const learner = smallLearner(3);
    const d = deps(outside, { transport: wire, learner });
    await expect(d.run()).rejects.toMatchObject({
      exitCode: ExitCode.conflict,
      code: 'not_in_cohort',
      message: expect.stringMatching(/did not sample this forge for round 1 \(a cohort of 1\); no budget was spent/),
    });
    expect(wire.releases).toEqual([]);
    expect(learner.trained).toEqual([]);
    expect(d.gate.ledger.releases()).toEqual([]);
    d.gate.close();
    const d2 = deps(inside, { transport: httpTransport(c.url, inside.membership.token), learner: smallLearner(4) });
    const r = await d2.run();
    expect(r.outcome).toBe('completed');
    d2.gate.close();
    // The council aggregated the cohort alone.
    const done = await httpTransport(c.url, inside.membership.token).round(1);
    expect(done.state).toBe('aggregated');
    expect(done.forges_submitted).toBe(1);
  });
});
