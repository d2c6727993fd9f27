import { afterEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { NamedTensor } from '../../src/tensor/tensor.js';
import { CouncilClient, CouncilRequestError } from '../../src/federation/council-client.js';
import { ExitCode } from '../../src/errors.js';
import { FINGERPRINT, SPECS, startTestCouncil, update, type TestCouncil, BACKENDS, useBackend } from './helpers.js';

let c: TestCouncil;
afterEach(async () => c?.close());

interface Fixture {
  lambda: number;
  round1: Record<'A' | 'B', number[]>[];
  global1: Record<'A' | 'B', number[]>;
  deltas: Record<'A' | 'B', number[]>[];
  global2: Record<'A' | 'B', number[]>;
  weighted_updates: Record<'A' | 'B', number[]>[];
  weights: number[];
  weighted_fedavg: Record<'A' | 'B', number[]>;
}
/** Computed by NumPy from closed forms (test/fixtures/council/make-client-round.py), not by kourai. */
const fx = JSON.parse(
  readFileSync(new URL('../fixtures/council/client-round.json', import.meta.url), 'utf8'),
) as Fixture;
const tensors = (u: Record<'A' | 'B', number[]>): NamedTensor[] => [
  { name: SPECS[0]!.name, shape: SPECS[0]!.shape, data: Float32Array.from(u.A) },
  { name: SPECS[1]!.name, shape: SPECS[1]!.shape, data: Float32Array.from(u.B) },
];
function expectClose(got: NamedTensor[], want: Record<'A' | 'B', number[]>, rel: number): void {
  const w = [...want.A, ...want.B];
  const g = got.flatMap((t) => [...t.data]);
  expect(g).toHaveLength(w.length);
  g.forEach((x, k) =>
    expect(Math.abs(x - w[k]!), `coordinate ${k}: ${x} vs ${w[k]}`).toBeLessThanOrEqual(
      rel * Math.max(1e-3, Math.abs(w[k]!)),
    ),
  );
}

for (const backend of BACKENDS) {
  describe(`on ${backend}`, () => {
    useBackend(backend);

    describe('CouncilClient: a federation round from the forge side', () => {
      it('register/auth, current round, submit, seal, poll, download aggregate and own trust; LoRA-FAIR on deltas in round 2 (NumPy closed form)', async () => {
        // The NumPy figures are the rule's own output: the server step (server-step.test.ts) is held at 1.
        c = await startTestCouncil({
          min_forges: 3,
          strategy: 'lora-fair',
          server_lr: 1,
          byzantine: 0,
          lora_fair_solver: 'ridge',
          lora_fair_lambda: fx.lambda,
        });
        const names = ['athens', 'sparta', 'thebes'];
        const clients = await Promise.all(
          names.map(async (n) => new CouncilClient({ url: c.url, token: await c.token(n), backoffMs: 10 })),
        );
        expect(await clients[0]!.health()).toMatchObject({ ok: true, protocol: 2 });
        expect(await clients[1]!.me()).toMatchObject({ forge: 'sparta', exiled: false });
        const r1 = await clients[0]!.currentRound();
        expect(r1).toMatchObject({
          round: 1,
          state: 'open',
          globals: { techne: 0, metis: 0 },
          strategy: { strategy: 'lora-fair', selection: 'none' },
          privacy_policy: { clip_norm: 1, accepted: { clip_norm: { min: 0, max: 1 } } },
        });
        expect((await clients[0]!.layouts()).techne).toEqual(SPECS);
        // Round 0 is the public initialisation (protocol v2); round-1 updates are the difference from it,
        // so global 1 (LoRA-FAIR on round 0 + delta) is the fixture's, computed on the factors.
        const g0 = await clients[0]!.globalAdapter('techne');
        expect(g0).toMatchObject({ agent: 'techne', round: 0, strategy: 'public-init' });
        expect(await clients[1]!.aggregate(0, 'techne')).toEqual(g0);
        const minus = (a: NamedTensor[], b: NamedTensor[]): NamedTensor[] =>
          a.map((t, k) => ({ ...t, data: Float32Array.from(t.data, (v, j) => v - b[k]!.data[j]!) }));
        for (let i = 0; i < 3; i++) {
          const update = {
            tensors: minus(tensors(fx.round1[i]!), g0!.tensors),
            baseFingerprint: FINGERPRINT,
            clipNorm: 1,
            noiseMultiplier: 0,
          };
          const receipt = await clients[i]!.submit(1, 'techne', update);
          expect(receipt).toMatchObject({ round: 1, agent: 'techne', forge: names[i], coords: 28 });
          // a retry (e.g. after a timeout) gets the same receipt
          expect(await clients[i]!.submit(1, 'techne', update)).toEqual(receipt);
          expect(await clients[i]!.seal(1)).toMatchObject({ round: 1, agents: ['techne'] });
        }
        const done = await clients[0]!.waitForRound(1, { pollMs: 20 });
        expect(done.outcomes).toEqual([
          { agent: 'techne', updates: 3, aggregated: true, skipped_reason: null, used: 3, yours_used: true },
        ]);
        const g1 = await clients[1]!.aggregate(1, 'techne');
        expect(g1).toMatchObject({ agent: 'techne', round: 1, strategy: 'lora-fair' });
        expectClose(g1.tensors, fx.global1, 1e-5);
        expect(await clients[2]!.globalAdapter('techne')).toEqual(g1);

        // Round 2: forges send deltas from the round-1 global; LoRA-FAIR works on global + delta.
        expect(await clients[0]!.currentRound()).toMatchObject({ round: 2, globals: { techne: 1 } });
        for (let i = 0; i < 3; i++) {
          await clients[i]!.submit(2, 'techne', {
            tensors: tensors(fx.deltas[i]!),
            baseFingerprint: FINGERPRINT,
            clipNorm: 1,
            noiseMultiplier: 0,
          });
          await clients[i]!.seal(2);
        }
        await clients[0]!.waitForRound(2, { pollMs: 20 });
        expectClose((await clients[0]!.aggregate(2, 'techne')).tensors, fx.global2, 1e-5);

        const trust = await clients[0]!.trust();
        expect(trust).toMatchObject({ forge: 'athens', rounds_scored: 2, exiled: false, threshold: 0.4, warmup: 3 });
        expect(trust.history).toHaveLength(2);
      });

      it('weighted FedAvg (--weights counts) serves Σwᵢxᵢ/Σwᵢ (NumPy, naive sum)', async () => {
        c = await startTestCouncil({ min_forges: 3, strategy: 'fedavg', weights: 'counts', server_lr: 1 });
        const clients = await Promise.all(
          ['athens', 'sparta', 'thebes'].map(
            async (n) => new CouncilClient({ url: c.url, token: await c.token(n), backoffMs: 10 }),
          ),
        );
        for (const [i, client] of clients.entries()) {
          await client.submit(1, 'kallos', {
            tensors: tensors(fx.weighted_updates[i]!),
            baseFingerprint: FINGERPRINT,
            clipNorm: 1,
            noiseMultiplier: 0,
            weight: fx.weights[i]!,
          });
          await client.seal(1);
        }
        await clients[0]!.waitForRound(1, { pollMs: 20 });
        // round 0 (the public initialisation) + the weighted mean
        const g0 = (await clients[0]!.aggregate(0, 'kallos')).tensors;
        const got = (await clients[0]!.aggregate(1, 'kallos')).tensors.map((t, k) => ({
          ...t,
          data: Float32Array.from(t.data, (v, j) => v - g0[k]!.data[j]!),
        }));
        expectClose(got, fx.weighted_fedavg, 1e-5);
        // and not the unweighted mean
        const plain = [...fx.weighted_updates[0]!.A].map(
          (_, k) => fx.weighted_updates.reduce((a, u) => a + u.A[k]!, 0) / 3,
        );
        expect(Math.abs(got[0]!.data[0]! - plain[0]!)).toBeGreaterThan(1e-3);
      });

      it('refusals throw CouncilRequestError with the machine code and a documented exit code', async () => {
        c = await startTestCouncil();
        const client = new CouncilClient({ url: c.url, token: await c.token('athens'), backoffMs: 10 });
        const err = await client
          .submit(1, 'cupid', { tensors: update(1), baseFingerprint: FINGERPRINT, clipNorm: 1, noiseMultiplier: 0 })
          .catch((e: unknown) => e);
        expect(err).toBeInstanceOf(CouncilRequestError);
        expect(err).toMatchObject({ status: 422, councilCode: 'bond_only_agent', exitCode: ExitCode.invalidData });
        const nf = await client.round(9).catch((e: unknown) => e);
        expect(nf).toMatchObject({ status: 404, councilCode: 'round_not_found', exitCode: ExitCode.notFound });
        const bad = new CouncilClient({
          url: c.url,
          token: 'kourai_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA',
          backoffMs: 10,
        });
        expect(await bad.me().catch((e: unknown) => e)).toMatchObject({
          status: 401,
          councilCode: 'unauthorized',
          exitCode: ExitCode.network,
        });
      });

      it('retries network failures and 5xx with the same body, then reports the network error', async () => {
        c = await startTestCouncil();
        const token = await c.token('athens');
        let calls = 0;
        const flaky: typeof fetch = async (input, init) => {
          calls++;
          if (calls === 1) throw new TypeError('fetch failed: socket hang up');
          if (calls === 2)
            return new Response('{"error":{"status":503,"code":"busy","message":"busy"}}', {
              status: 503,
              headers: { 'retry-after': '0' },
            });
          return fetch(input, init);
        };
        const client = new CouncilClient({ url: c.url, token, fetch: flaky, backoffMs: 5 });
        const r = await client.submit(1, 'metis', {
          tensors: update(1),
          baseFingerprint: FINGERPRINT,
          clipNorm: 1,
          noiseMultiplier: 0,
        });
        expect(r.agent).toBe('metis');
        expect(calls).toBe(3);
        const dead = new CouncilClient({ url: 'http://127.0.0.1:9', token, retries: 1, backoffMs: 5 });
        expect(await dead.health().catch((e: unknown) => e)).toMatchObject({
          exitCode: ExitCode.network,
          message: expect.stringMatching(/cannot reach http:\/\/127\.0\.0\.1:9/),
        });
      });
    });
  });
}
