import { createHash, randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { SERVER_LR, type CouncilConfig } from '../../src/council/config.js';
import type { CouncilAdapters } from '../../src/federation/round/council-adapters.js';
import { memoirEventsWriter } from '../../src/federation/round/events-memoir.js';
import type { CouncilLearner } from '../../src/federation/round/learner.js';
import { requireMembership, type Membership } from '../../src/federation/round/membership.js';
import { runRound, type RoundDeps, type RoundResult } from '../../src/federation/round/run-round.js';
import { httpTransport } from '../../src/federation/round/transport.js';
import { FEDERATING_AGENTS, type FederatingAgent } from '../../src/memoir/format/agents.js';
import { DEFAULT_PRIVACY_CONFIG } from '../../src/privacy/privacy-config.js';
import { PrivacyGate } from '../../src/privacy/round-gate.js';
import { f32FromBase64 } from '../../src/tensor/float-codec.js';
import type { NamedTensor } from '../../src/tensor/tensor.js';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import { ExitCode } from '../../src/errors.js';
import { joinCouncil } from '../../src/federation/round/join.js';
import { decodeAdapter } from '../../src/federation/council-client.js';
import { body, call, SPECS, startTestCouncil, type TestCouncil } from '../council/helpers.js';
import { testCtx, type TestCtx } from '../helpers/ctx.js';
import { runCli } from '../helpers/run.js';

/**
 * Protocol v2: a council's round-0 global of every agent is the public PEFT initialisation, and
 * an update is always trained − the global it trained from (round 1 included). Under v1 round 1
 * sent the factors themselves, so clipping to S shrank the public initialisation (‖init‖ ≈ 2.3 at
 * rank 8) along with what was learned. The oracle for the initialisation is written out here from
 * the documented scheme (README, "Council protocol"), not taken from the council's code.
 */
const SCHEME = 'kourai.public-init/1';
const SEED = 0x636f756e;

function mulberry(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The documented scheme: lora_A [r, in] ~ U(±1/√in), row-major, from mulberry32(sha256(scheme|seed|agent|name)[0..4] LE); B zeros. */
function oracleInit(agent: string): Float64Array[] {
  return SPECS.map((s) => {
    const n = s.shape[0]! * s.shape[1]!;
    const out = new Float64Array(n);
    if (s.name.endsWith('lora_A.weight')) {
      const u = mulberry(createHash('sha256').update(`${SCHEME}|${SEED}|${agent}|${s.name}`).digest().readUInt32LE(0));
      const bound = 1 / Math.sqrt(s.shape[1]!);
      for (let i = 0; i < n; i++) out[i] = Math.fround((2 * u() - 1) * bound);
    }
    return out;
  });
}

const l2 = (xs: readonly ArrayLike<number>[]): number =>
  Math.sqrt(xs.reduce((s, x) => s + Array.from(x).reduce((a, v) => a + v * v, 0), 0));

const councils: TestCouncil[] = [];
const homes: TestCtx[] = [];
afterEach(async () => {
  for (const c of councils.splice(0)) await c.close().catch(() => undefined);
  for (const h of homes.splice(0)) h.cleanup();
});

async function council(over: Partial<CouncilConfig> = {}): Promise<TestCouncil> {
  const c = await startTestCouncil({ layouts: { '*': SPECS }, min_forges: 3, strategy: 'fedavg', ...over });
  councils.push(c);
  return c;
}

describe('protocol v2: the public initialisation is every agent’s round-0 global', () => {
  it('round 1 publishes globals = 0 for every accepted agent; round 0 is served like any version (digest, the documented scheme)', async () => {
    const c = await council();
    const token = await c.token('athens');
    const status = await call(c.url, 'GET', '/v1/rounds/current', token);
    expect(status.status).toBe(200);
    expect(status.json.globals).toEqual(Object.fromEntries(FEDERATING_AGENTS.map((a) => [a, 0])));
    expect(status.json.public_init).toEqual({ scheme: SCHEME, seed: SEED });
    for (const agent of ['techne', 'metis'] as const) {
      const r0 = await call(c.url, 'GET', `/v1/rounds/0/aggregate/${agent}`, token);
      expect(r0.status).toBe(200);
      expect(r0.json).toMatchObject({ agent, round: 0, strategy: 'public-init' });
      const got = (r0.json.tensors as { name: string; data: string }[]).map((t) => Array.from(f32FromBase64(t.data)));
      expect(got).toEqual(oracleInit(agent).map((x) => Array.from(x)));
      // B is zero, A is not (PEFT's start: the adapter changes nothing until trained)
      expect(got[1]!.every((v) => v === 0)).toBe(true);
      expect(l2([got[0]!])).toBeGreaterThan(0.5);
      // the digest: sha256 over [name, shape, "F32"] + newline + float32 LE bytes, per tensor in order
      const h = createHash('sha256');
      for (const t of r0.json.tensors as { name: string; shape: number[]; data: string }[]) {
        h.update(`${JSON.stringify([t.name, t.shape, 'F32'])}\n`);
        h.update(Buffer.from(t.data, 'base64'));
      }
      expect(r0.json.digest).toBe(h.digest('hex'));
      // before any aggregate, the current global is round 0 too
      expect((await call(c.url, 'GET', `/v1/global/${agent}`, token)).json).toEqual(r0.json);
    }
    expect(oracleInit('techne')[0]).not.toEqual(oracleInit('metis')[0]);
  });

  it('the round-1 aggregate is the public initialisation + the server step × the mean of the deltas (FedAvg, σ = 0)', async () => {
    const c = await council();
    const tokens = await Promise.all(['athens', 'sparta', 'thebes'].map((n) => c.token(n)));
    const deltas = [0.01, -0.02, 0.03].map((k, i) =>
      SPECS.map((s) => ({
        name: s.name,
        shape: s.shape,
        data: Float32Array.from({ length: s.shape[0]! * s.shape[1]! }, (_, j) => k * Math.sin(j + i)),
      })),
    );
    for (const [i, token] of tokens.entries()) {
      expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/techne', token, body(deltas[i]!))).status).toBe(201);
      expect((await call(c.url, 'POST', '/v1/rounds/1/seal', token, {})).status).toBe(200);
    }
    let g1: { status: number; json: any } = { status: 0, json: null };
    for (let i = 0; i < 200 && g1.status !== 200; i++) {
      g1 = await call(c.url, 'GET', '/v1/rounds/1/aggregate/techne', tokens[0]!);
      if (g1.status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(g1.status).toBe(200);
    const init = oracleInit('techne');
    const got = (g1.json.tensors as { data: string }[]).map((t) => f32FromBase64(t.data));
    got.forEach((t, k) => {
      t.forEach((v, j) => {
        const mean = deltas.reduce((s, d) => s + d[k]!.data[j]!, 0) / deltas.length;
        expect(Math.abs(v - (init[k]![j]! + SERVER_LR * mean))).toBeLessThan(1e-6);
      });
    });
    expect((await call(c.url, 'GET', '/v1/rounds/current', tokens[0]!)).json.globals.techne).toBe(1);
  });
});

/** One real round against a council on 127.0.0.1 that must complete (waits, polls fast). */
async function completedRound(
  url: string,
  membership: Membership,
  gate: PrivacyGate,
  learner: CouncilLearner,
  adapters: RoundDeps['adapters'],
): Promise<RoundResult & { outcome: 'completed' }> {
  return (await runRound({
    transport: httpTransport(url, membership.token),
    membership,
    gate,
    learner,
    adapters,
    events: memoirEventsWriter(membership.events_memoir, () => new Date()),
    now: () => new Date(),
    signal: new AbortController().signal,
    sleep: () => new Promise((res) => setTimeout(res, 5)),
    options: { dryRun: false, wait: true, waitForMs: 60_000, pollMs: 10, retryForMs: 60_000, encoding: 'json' },
  })) as RoundResult & { outcome: 'completed' };
}

function learnerOf(step: number, starts: Map<FederatingAgent, NamedTensor[]>): CouncilLearner {
  // What the real trainer does in spirit: start from `start`, learn a small change.
  return {
    fingerprint: BUILTIN_FINGERPRINT,
    rank: 2,
    alpha: 2,
    layout: () => SPECS.map((s) => ({ name: s.name, shape: [...s.shape] })),
    count: () => ({ examples: 20, scenes: 4, tooLittle: null }),
    async train(agent, start) {
      starts.set(
        agent,
        start.map((t) => ({ ...t, data: Float32Array.from(t.data) })),
      );
      return {
        status: 'trained',
        examples: 20,
        tensors: start.map((t) => ({
          name: t.name,
          shape: [...t.shape],
          data: Float32Array.from(t.data, (v, j) => v + step * Math.cos(j)),
        })),
      };
    },
    probe: async () => [],
    // v1 forges started round 1 from their own copy of the PEFT initialisation (kept here for the v1 path).
    ...{
      publicInit: (agent: FederatingAgent) =>
        SPECS.map((s, k) => ({ name: s.name, shape: [...s.shape], data: Float32Array.from(oracleInit(agent)[k]!) })),
    },
  } as CouncilLearner;
}

describe('the forge’s round 1 sends trained − the global it trained from', () => {
  const adapters = (): CouncilAdapters => {
    let v = 0;
    return { current: () => null, storedFor: () => null, save: () => ++v };
  };

  it('the ledger’s clipped norm of every round-1 release is the learned change’s, not the initialisation’s; she trained from the council’s round 0', async () => {
    const c = await council({ min_forges: 1, base_fingerprints: [BUILTIN_FINGERPRINT] });
    const ctx = testCtx();
    homes.push(ctx);
    await runCli(
      () => import('../../src/commands/federate/join.js'),
      { server: c.url, token: await c.token('athens') },
      ctx,
    );
    await runCli(() => import('../../src/commands/federate/consent.js'), { allow: ['techne', 'metis'] }, ctx);
    const membership: Membership = requireMembership(ctx.home);
    const gate = PrivacyGate.open({ home: ctx.home, config: DEFAULT_PRIVACY_CONFIG, random: randomBytes });
    const starts = new Map<FederatingAgent, NamedTensor[]>();
    const step = 0.01;
    try {
      const r = await completedRound(c.url, membership, gate, learnerOf(step, starts), adapters());
      expect(r.outcome).toBe('completed');
      expect(r.round).toBe(1);
      const learned = l2(
        SPECS.map((s) => Float64Array.from({ length: s.shape[0]! * s.shape[1]! }, (_, j) => step * Math.cos(j))),
      );
      const initNorm = l2(oracleInit('techne'));
      expect(initNorm).toBeGreaterThan(20 * learned); // the two are far apart: the test can tell them apart
      const norms = gate.ledger.norms();
      const rows = gate.ledger.releases();
      expect(rows.map((x) => x.agent).sort()).toEqual(['metis', 'techne']);
      for (const row of rows) {
        const n = norms.get(row.id);
        expect(n?.clippedNorm, `${row.agent}: clipped norm`).toBeCloseTo(learned, 5);
        // she trained from exactly what the council published as round 0
        expect(starts.get(row.agent as FederatingAgent)?.map((t) => Array.from(t.data))).toEqual(
          oracleInit(row.agent).map((x) => Array.from(x)),
        );
      }
    } finally {
      gate.close();
    }
  });
});

describe('the protocol version is honest: a v2 forge refuses a v1 council (which would treat round-1 deltas as factors)', () => {
  /** A council as v1 answered: health says protocol 1. */
  async function v1Council(): Promise<{ url: string; close: () => Promise<void> }> {
    const server: Server = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      if (req.url === '/v1/health') res.end(JSON.stringify({ ok: true, protocol: 1, version: '0.1.0', round: 1 }));
      else res.end(JSON.stringify({ error: { status: 500, code: 'internal', message: 'not expected in this test' } }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
  }

  it('join: exit 9 protocol_mismatch naming both versions, nothing stored; round: the same, nothing trained or spent', async () => {
    const old = await v1Council();
    const ctx = testCtx();
    homes.push(ctx);
    try {
      const transport = httpTransport(old.url, 'kourai_1_token', { retries: 0 });
      const err = await joinCouncil({
        home: ctx.home,
        url: old.url,
        token: 'kourai_1_token',
        forgeFingerprint: BUILTIN_FINGERPRINT,
        transport,
        eventsMemoir: `${ctx.home}/federation.memoir.jsonl`,
        now: new Date(),
      }).catch((e: unknown) => e);
      expect(err).toMatchObject({
        exitCode: ExitCode.network,
        code: 'protocol_mismatch',
        message: expect.stringMatching(/speaks protocol v1; this kourai speaks v2: not joined/),
      });
      // A forge that joined a v2 council whose address now answers as v1.
      const c = await council({ base_fingerprints: [BUILTIN_FINGERPRINT] });
      await runCli(
        () => import('../../src/commands/federate/join.js'),
        { server: c.url, token: await c.token('athens') },
        ctx,
      );
      await runCli(() => import('../../src/commands/federate/consent.js'), { allow: ['techne'] }, ctx);
      const membership = requireMembership(ctx.home);
      const gate = PrivacyGate.open({ home: ctx.home, config: DEFAULT_PRIVACY_CONFIG, random: randomBytes });
      let trained = 0;
      try {
        const r = runRound({
          transport: httpTransport(old.url, membership.token, { retries: 0 }),
          membership,
          gate,
          learner: {
            fingerprint: BUILTIN_FINGERPRINT,
            rank: 2,
            alpha: 2,
            layout: () => SPECS,
            count: () => ({ examples: 20, scenes: 4, tooLittle: null }),
            train: async () => (trained++, { status: 'skipped', reason: 'x', examples: 0 }),
            probe: async () => [],
          },
          adapters: { current: () => null, storedFor: () => null, save: () => 1 },
          events: memoirEventsWriter(membership.events_memoir, () => new Date()),
          now: () => new Date(),
          signal: new AbortController().signal,
          sleep: async () => undefined,
          options: { dryRun: false, wait: true, waitForMs: 1000, pollMs: 10, retryForMs: 0, encoding: 'json' },
        });
        await expect(r).rejects.toMatchObject({
          exitCode: ExitCode.network,
          code: 'protocol_mismatch',
          message: expect.stringMatching(/protocol v1; this kourai speaks v2: nothing was sent/),
        });
        expect(trained).toBe(0);
        expect(gate.ledger.releases()).toEqual([]);
      } finally {
        gate.close();
      }
    } finally {
      await old.close();
    }
  });
});

describe('downloads are checked against the published digest', () => {
  it('a round-0 document whose numbers were changed in transit is refused (exit 5), not trained from', async () => {
    const c = await council();
    const doc = (await call(c.url, 'GET', '/v1/rounds/0/aggregate/techne', await c.token('athens'))).json;
    expect(decodeAdapter(doc).round).toBe(0);
    const data = f32FromBase64(doc.tensors[0].data);
    data[3] = data[3]! + 1e-3;
    const tampered = {
      ...doc,
      tensors: [{ ...doc.tensors[0], data: Buffer.from(data.buffer).toString('base64') }, doc.tensors[1]],
    };
    expect(() => decodeAdapter(tampered)).toThrow(
      expect.objectContaining({
        exitCode: ExitCode.invalidData,
        message: expect.stringMatching(/does not match its published digest/),
      }),
    );
  });
});

describe('an agent the council has no layout for', () => {
  it('is planned silent (not_accepted) and nothing of hers is trained or spent', async () => {
    const c = await council({ min_forges: 1, base_fingerprints: [BUILTIN_FINGERPRINT], layouts: { techne: SPECS } });
    const ctx = testCtx();
    homes.push(ctx);
    await runCli(
      () => import('../../src/commands/federate/join.js'),
      { server: c.url, token: await c.token('athens') },
      ctx,
    );
    await runCli(() => import('../../src/commands/federate/consent.js'), { allow: ['techne', 'metis'] }, ctx);
    const membership = requireMembership(ctx.home);
    const gate = PrivacyGate.open({ home: ctx.home, config: DEFAULT_PRIVACY_CONFIG, random: randomBytes });
    const starts = new Map<FederatingAgent, NamedTensor[]>();
    try {
      const r = await completedRound(c.url, membership, gate, learnerOf(0.01, starts), {
        current: () => null,
        storedFor: () => null,
        save: () => 1,
      });
      expect(r.plan.agents.find((a) => a.agent === 'metis')).toMatchObject({
        verdict: 'not_accepted',
        speaks: false,
        tensors: null,
      });
      expect(r.plan.agents.find((a) => a.agent === 'techne')).toMatchObject({
        verdict: 'speaks',
        starts_from: { kind: 'public_init' },
      });
      expect([...starts.keys()]).toEqual(['techne']);
      expect(gate.ledger.releases().map((x) => x.agent)).toEqual(['techne']);
      expect(r.details.silent.find((x) => x.agent === 'metis')?.reason).toBe('not_accepted');
    } finally {
      gate.close();
    }
  });
});
