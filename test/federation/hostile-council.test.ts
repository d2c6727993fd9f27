import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { CancelledError, ExitCode, KouraiError } from '../../src/errors.js';
import {
  membershipPath,
  redactError,
  requireMembership,
  type Membership,
} from '../../src/federation/round/membership.js';
import { httpTransport } from '../../src/federation/round/transport.js';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import { DEFAULT_PRIVACY_CONFIG } from '../../src/privacy/privacy-config.js';
import { PrivacyGate } from '../../src/privacy/round-gate.js';
import { SPECS, startTestCouncil, type TestCouncil } from '../council/helpers.js';
import { testCtx, type TestCtx } from '../helpers/ctx.js';
import { runCli } from '../helpers/run.js';
import { startHostileProxy, type HostileProxy, type PoisonKind } from './hostile-proxy.js';
import { memoryAdapters, recording, roundDeps, smallLearner } from './round-harness.js';

/**
 * The forge against its own council: a real council on 127.0.0.1 behind a hostile proxy. Each
 * case says what left the forge (the proxy's record, and what reached the host a redirect points
 * at) and what was spent (the privacy ledger).
 */
const join = () => import('../../src/commands/federate/join.js');
const consent = () => import('../../src/commands/federate/consent.js');
const synth = () => import('../../src/commands/memoir/synth.js');
const round = () => import('../../src/commands/federate/round.js');
const status = () => import('../../src/commands/federate/status.js');
const whisper = () => import('../../src/commands/whisper.js');

// Each case starts a council, a proxy and a forge: generous on a loaded machine (timings that matter are asserted).
vi.setConfig({ testTimeout: 60_000 });

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup(
  over: Parameters<typeof startTestCouncil>[0] = {},
): Promise<{ council: TestCouncil; proxy: HostileProxy; f: { ctx: TestCtx; membership: Membership } }> {
  const council = await startTestCouncil({
    base_fingerprints: [BUILTIN_FINGERPRINT],
    layouts: { '*': SPECS },
    min_forges: 1,
    strategy: 'fedavg',
    ...over,
  });
  cleanups.push(() => council.close());
  const proxy = await startHostileProxy(council.url);
  cleanups.push(() => proxy.close());
  const ctx = testCtx();
  cleanups.push(() => ctx.cleanup());
  await runCli(join, { server: proxy.url, token: await council.token('athens') }, ctx);
  await runCli(consent, { allow: ['all'] }, ctx);
  return { council, proxy, f: { ctx, membership: requireMembership(ctx.home) } };
}

const puts = (p: HostileProxy): number => p.seen.filter((r) => r.method === 'PUT').length;

describe('the privacy floor binds whatever the council asks', () => {
  it.each([
    {
      what: 'σ = 0.64 (the forge’s own σ is 8)',
      policy: { noise_multiplier: 0.64 },
      names: /council's σ = 0\.64 .*floor.*σ ≥ 8/,
    },
    { what: 'S = 1e38', policy: { clip_norm: 1e38 }, names: /council's S = 1e\+38 .*floor.*S ≤ 1000/ },
    { what: 'S = 1e300', policy: { clip_norm: 1e300 }, names: /council's S = 1e\+300 / },
    { what: 'S = 5e-324', policy: { clip_norm: 5e-324 }, names: /council's S = 5e-324 .*floor.*S ≥ 0\.001/ },
  ])(
    'a council policy with $what: refused before anything is trained, sent or spent (exit 4)',
    async ({ policy, names }) => {
      const { proxy, f } = await setup();
      proxy.set({ kind: 'policy', ...policy });
      const learner = smallLearner(1);
      const transport = recording(httpTransport(proxy.url, f.membership.token));
      const d = roundDeps(f, { transport, learner });
      const err = (await d.run().catch((e: unknown) => e)) as KouraiError;
      expect(err).toBeInstanceOf(KouraiError);
      expect(err.exitCode).toBe(ExitCode.budgetExhausted);
      expect(err.code).toBe('privacy_floor');
      expect(err.message).toMatch(names);
      expect(err.message.split('\n')).toHaveLength(1);
      expect(learner.trained).toEqual([]);
      expect(transport.releases).toEqual([]);
      expect(puts(proxy)).toBe(0);
      expect(d.gate.ledger.releases()).toEqual([]);
      d.gate.close();
    },
  );

  it('a council policy inside the floor is followed as before', async () => {
    const { proxy, f } = await setup();
    proxy.set({ kind: 'policy', noise_multiplier: 9, clip_norm: 0.5 });
    const transport = recording(httpTransport(proxy.url, f.membership.token));
    const d = roundDeps(f, { transport, learner: smallLearner(2) });
    const r = await d.run();
    expect(r.outcome).toBe('completed');
    expect(transport.releases.every((x) => x.mechanism.noise_multiplier === 9 && x.mechanism.clip_norm === 0.5)).toBe(
      true,
    );
    d.gate.close();
  });
  it('federate status shows the floor beside the council’s policy, and says when the policy is outside it', async () => {
    const { proxy, f } = await setup();
    proxy.set({ kind: 'policy', noise_multiplier: 0.64 });
    const r = await runCli(status, { json: true }, f.ctx);
    const doc = r.json as {
      floor: {
        min_noise_multiplier: number;
        max_release_epsilon: number;
        clip_norm: { min: number; max: number };
        council_policy_outside: string | null;
      };
    };
    expect(doc.floor).toMatchObject({
      min_noise_multiplier: 8,
      max_release_epsilon: 1,
      clip_norm: { min: 0.001, max: 1000 },
    });
    expect(doc.floor.council_policy_outside).toMatch(/σ = 0\.64 is below this forge's privacy floor \(σ ≥ 8\)/);
    const text = await runCli(status, {}, f.ctx);
    expect(text.stdout).toMatch(/privacy floor σ ≥ 8, ε ≤ 1 per release, S ∈ \[0\.001, 1000\]/);
    expect(text.stdout).toMatch(/council policy σ = 0\.64, S = 1 \(outside this forge's privacy floor/);
  });

  it('whisper --next-round shows the floor next to the council’s policy', async () => {
    const council = await startTestCouncil({ base_fingerprints: [BUILTIN_FINGERPRINT], layouts: { '*': SPECS } });
    cleanups.push(() => council.close());
    const ctx = testCtx();
    cleanups.push(() => ctx.cleanup());
    await runCli(synth, { player: 'ariadne', json: true }, ctx);
    await runCli(join, { server: council.url, token: await council.token('athens') }, ctx);
    await runCli(consent, { allow: ['all'] }, ctx);
    const r = await runCli(whisper, { nextRound: true, json: true }, ctx);
    expect((r.json as { next_round: { floor: unknown; mechanism: unknown } }).next_round).toMatchObject({
      mechanism: { source: 'council', noise_multiplier: 10 },
      floor: { min_noise_multiplier: 8, max_release_epsilon: 1 },
    });
    const text = await runCli(whisper, { nextRound: true }, ctx);
    expect(text.stdout).toMatch(/mechanism: S = 1, σ = 10 .*\n.*floor: +σ ≥ 8, ε ≤ 1 per release/);
  }, 60_000);
});

describe('only the joined council hears from the forge', () => {
  it.each([302, 307] as const)(
    'a %i on every request: not followed, nothing reaches the other host, nothing is spent (exit 9)',
    async (status) => {
      const { proxy, f } = await setup();
      proxy.set({ kind: 'redirect', status });
      const learner = smallLearner(3);
      const d = roundDeps(f, {
        transport: httpTransport(proxy.url, f.membership.token, { retries: 0 }),
        learner,
        options: { retryForMs: 0 },
      });
      const err = (await d.run().catch((e: unknown) => e)) as KouraiError;
      expect(err).toMatchObject({ exitCode: ExitCode.network, code: 'council_redirect' });
      expect(err.message).toMatch(new RegExp(`answered ${status} .*not followed`));
      expect(proxy.elsewhere).toEqual([]);
      expect(learner.trained).toEqual([]);
      expect(d.gate.ledger.releases()).toEqual([]);
      d.gate.close();
    },
  );

  it('a 307 on the uploads only: the release goes nowhere else, the round stops (exit 9) and the next run resends the same bytes to the joined council', async () => {
    const { proxy, f } = await setup();
    proxy.set({ kind: 'redirect', status: 307, when: (m) => m === 'PUT' });
    const d = roundDeps(f, {
      transport: httpTransport(proxy.url, f.membership.token, { retries: 0 }),
      learner: smallLearner(4),
      options: { retryForMs: 0 },
    });
    await expect(d.run()).rejects.toMatchObject({ exitCode: ExitCode.network, code: 'council_redirect' });
    expect(proxy.elsewhere).toEqual([]);
    const drawn = d.gate.ledger.releases();
    expect(drawn).toHaveLength(1); // drawn and charged once, never delivered elsewhere
    d.gate.close();
    proxy.set({ kind: 'pass' });
    const again = recording(httpTransport(proxy.url, f.membership.token));
    const d2 = roundDeps(f, { transport: again, learner: smallLearner(4) });
    expect((await d2.run()).outcome).toBe('completed');
    expect(d2.gate.ledger.releases().filter((r) => r.agent === drawn[0]?.agent)).toHaveLength(1);
    d2.gate.close();
  });
});

describe('every answer is bounded', () => {
  it.each([
    { how: 'declaring its size', chunked: false },
    { how: 'chunked, its size unsaid', chunked: true },
  ])('a 400 MB health answer ($how): join stores nothing, reads at most the cap, exit 9', async ({ chunked }) => {
    const council = await startTestCouncil({ base_fingerprints: [BUILTIN_FINGERPRINT], layouts: { '*': SPECS } });
    cleanups.push(() => council.close());
    const proxy = await startHostileProxy(council.url);
    cleanups.push(() => proxy.close());
    proxy.set({ kind: 'huge', bytes: 400 * 1024 * 1024, chunked, when: (_m, p) => p === '/v1/health' });
    const ctx = testCtx();
    cleanups.push(() => ctx.cleanup());
    const before = process.memoryUsage().rss;
    const err = (await runCli(join, { server: proxy.url, token: await council.token('athens') }, ctx).catch(
      (e: unknown) => e,
    )) as KouraiError;
    expect(err).toMatchObject({ exitCode: ExitCode.network, code: 'council_answer_too_large' });
    expect(err.message).toMatch(/GET \/v1\/health answered more than 64 KiB/);
    expect(existsSync(membershipPath(ctx.home))).toBe(false);
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
  });

  it('a silent council: `federate round --retry-for 2s` gives up within --retry-for plus one request deadline, saying so on stderr (exit 9)', async () => {
    const council = await startTestCouncil({ base_fingerprints: [BUILTIN_FINGERPRINT], layouts: { '*': SPECS } });
    cleanups.push(() => council.close());
    const proxy = await startHostileProxy(council.url);
    cleanups.push(() => proxy.close());
    const ctx = testCtx({ env: { KOURAI_COUNCIL_TIMEOUT: '1500ms' } });
    cleanups.push(() => ctx.cleanup());
    await runCli(synth, { player: 'ariadne', json: true }, ctx);
    await runCli(join, { server: proxy.url, token: await council.token('athens') }, ctx);
    await runCli(consent, { allow: ['all'] }, ctx);
    proxy.set({ kind: 'silent' });
    const asked = proxy.seen.length;
    const err = (await runCli(round, { retryFor: '2s', json: true }, ctx).catch((e: unknown) => e)) as KouraiError;
    // From the first request to the council (opening the encoder and the index come before it).
    const took = Date.now() - (proxy.seen[asked]?.at ?? 0);
    expect(err).toMatchObject({ exitCode: ExitCode.network, code: 'network' });
    expect(took).toBeLessThan(2000 + 1500 + 1500);
    expect(ctx.stderr.text).toMatch(/waiting for the council \(GET \/v1\/health\)/);
    const gate = PrivacyGate.openReadOnly({ home: ctx.home, config: DEFAULT_PRIVACY_CONFIG });
    expect(gate.ledger.releases()).toEqual([]);
    gate.close();
  }, 60_000);

  it('a council dripping one byte at a time is cut at the request deadline (exit 9, no TypeError)', async () => {
    const { proxy, f } = await setup();
    proxy.set({ kind: 'drip', everyMs: 100 });
    const d = roundDeps(f, {
      transport: httpTransport(proxy.url, f.membership.token, { timeoutMs: 1000, retries: 0 }),
      learner: smallLearner(6),
      options: { retryForMs: 0 },
    });
    const t0 = Date.now();
    const err = (await d.run().catch((e: unknown) => e)) as KouraiError;
    expect(err).toBeInstanceOf(KouraiError);
    expect(err).toMatchObject({ exitCode: ExitCode.network });
    expect(err.message).toMatch(/did not finish answering within 1 s/);
    expect(Date.now() - t0).toBeLessThan(4000);
    d.gate.close();
  });

  it('Ctrl-C while join waits for a silent council: exit 130, not a TypeError from the redaction', async () => {
    const council = await startTestCouncil({ base_fingerprints: [BUILTIN_FINGERPRINT], layouts: { '*': SPECS } });
    cleanups.push(() => council.close());
    const proxy = await startHostileProxy(council.url);
    cleanups.push(() => proxy.close());
    proxy.set({ kind: 'silent' });
    const stop = new AbortController();
    const ctx = testCtx({ signal: stop.signal });
    cleanups.push(() => ctx.cleanup());
    setTimeout(() => stop.abort(), 300);
    const err = await runCli(join, { server: proxy.url, token: await council.token('athens') }, ctx).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(CancelledError);
    expect((err as KouraiError).exitCode).toBe(ExitCode.cancelled);
  });

  it('the redaction never throws, whatever the error (a DOMException’s message is a getter)', () => {
    const secret = 'kourai_1_secret-token-value';
    const abort = new DOMException(`aborted ${secret}`, 'AbortError');
    let out: unknown;
    expect(() => {
      out = redactError(abort, secret);
    }).not.toThrow();
    expect(String((out as Error).message)).not.toContain(secret);
    const frozen = Object.freeze(new Error(`x ${secret}`));
    expect(() => redactError(frozen, secret)).not.toThrow();
    expect((redactError(frozen, secret) as Error).message).not.toContain(secret);
  });
});

describe('poison from the council is refused before it is stored', () => {
  it.each(['nan', 'infinity', 'extra-tensor', 'renamed-tensor', 'huge-values'] as PoisonKind[])(
    'an aggregate with %s: exit 5, the current adapters stay',
    async (poison) => {
      const { proxy, f } = await setup();
      proxy.set({ kind: 'poison', poison });
      const adapters = memoryAdapters();
      const d = roundDeps(f, {
        transport: httpTransport(proxy.url, f.membership.token),
        learner: smallLearner(7),
        adapters,
      });
      const err = (await d.run().catch((e: unknown) => e)) as KouraiError;
      expect(err).toBeInstanceOf(KouraiError);
      expect(err).toMatchObject({ exitCode: ExitCode.invalidData, code: 'council_adapter_refused' });
      expect(adapters.saved.size).toBe(0);
      d.gate.close();
    },
  );
});
