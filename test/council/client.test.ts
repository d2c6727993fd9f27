import { afterEach, describe, expect, it } from 'vitest';
import { aggregateUpdates, inMemorySource } from '../../src/aggregation/strategy.js';
import { layoutOf } from '../../src/tensor/layout.js';
import { CouncilClient, CouncilRequestError } from '../../src/federation/council-client.js';
import { ExitCode } from '../../src/errors.js';
import { FINGERPRINT, SPECS, startTestCouncil, update, type TestCouncil } from './helpers.js';

let c: TestCouncil;
afterEach(async () => c?.close());

const flat = (ts: { data: Float32Array }[]): Float64Array => Float64Array.from(ts.flatMap((t) => [...t.data]));

describe('CouncilClient: a federation round from the forge side', () => {
  it('register/auth, current round, submit, seal, poll, download aggregate and own trust; LoRA-FAIR on deltas in round 2', async () => {
    c = await startTestCouncil({ min_forges: 3, strategy: 'lora-fair', byzantine: 0, lora_fair_steps: 300, lora_fair_lr: 0.05 });
    const names = ['athens', 'sparta', 'thebes'];
    const clients = await Promise.all(names.map(async (n) => new CouncilClient({ url: c.url, token: await c.token(n), backoffMs: 10 })));
    expect(await clients[0]!.health()).toMatchObject({ ok: true, protocol: 1 });
    expect(await clients[1]!.me()).toMatchObject({ forge: 'sparta', exiled: false });
    const r1 = await clients[0]!.currentRound();
    expect(r1).toMatchObject({ round: 1, state: 'open', globals: {}, strategy: { strategy: 'lora-fair', selection: 'none' } });
    expect(await clients[0]!.globalAdapter('techne')).toBeNull();
    const round1 = names.map((_, i) => update(40 + i, { centre: 0.3, spread: 0.1 }));
    for (let i = 0; i < 3; i++) {
      const receipt = await clients[i]!.submit(1, 'techne', { tensors: round1[i]!, baseFingerprint: FINGERPRINT, clipNorm: 10, noiseMultiplier: 0 });
      expect(receipt).toMatchObject({ round: 1, agent: 'techne', forge: names[i], coords: 28 });
      // a retry (e.g. after a timeout) gets the same receipt
      expect(await clients[i]!.submit(1, 'techne', { tensors: round1[i]!, baseFingerprint: FINGERPRINT, clipNorm: 10, noiseMultiplier: 0 })).toEqual(receipt);
      expect(await clients[i]!.seal(1)).toMatchObject({ round: 1, agents: ['techne'] });
    }
    const done = await clients[0]!.waitForRound(1, { pollMs: 20 });
    expect(done.outcomes).toEqual([{ agent: 'techne', updates: 3, aggregated: true, skipped_reason: null, used: 3, yours_used: true }]);
    const layout = layoutOf(SPECS);
    const expected1 = aggregateUpdates(inMemorySource(round1.map(flat), layout), { strategy: 'lora-fair', f: 0, loraFair: { steps: 300, lr: 0.05 } });
    const g1 = await clients[1]!.aggregate(1, 'techne');
    expect(g1).toMatchObject({ agent: 'techne', round: 1, strategy: 'lora-fair' });
    const got1 = flat(g1.tensors);
    got1.forEach((x, k) => expect(x).toBeCloseTo(expected1.aggregate[k]!, 6));
    expect(await clients[2]!.globalAdapter('techne')).toEqual(g1);

    // Round 2: forges send deltas from the round-1 global; LoRA-FAIR works on global + delta.
    const r2 = await clients[0]!.currentRound();
    expect(r2).toMatchObject({ round: 2, globals: { techne: 1 } });
    const deltas = names.map((_, i) => update(50 + i, { spread: 0.05 }));
    for (let i = 0; i < 3; i++) {
      await clients[i]!.submit(2, 'techne', { tensors: deltas[i]!, baseFingerprint: FINGERPRINT, clipNorm: 10, noiseMultiplier: 0 });
      await clients[i]!.seal(2);
    }
    await clients[0]!.waitForRound(2, { pollMs: 20 });
    const base = Float64Array.from(got1);
    const expected2 = aggregateUpdates(inMemorySource(deltas.map(flat), layout, { base: Float32Array.from(got1) }), { strategy: 'lora-fair', f: 0, loraFair: { steps: 300, lr: 0.05 } });
    const got2 = flat((await clients[0]!.aggregate(2, 'techne')).tensors);
    got2.forEach((x, k) => expect(x).toBeCloseTo(base[k]! + expected2.aggregate[k]!, 5));

    const trust = await clients[0]!.trust();
    expect(trust).toMatchObject({ forge: 'athens', rounds_scored: 2, exiled: false, threshold: 0.4, warmup: 3 });
    expect(trust.history).toHaveLength(2);
  });

  it('refusals throw CouncilRequestError with the machine code and a documented exit code', async () => {
    c = await startTestCouncil();
    const client = new CouncilClient({ url: c.url, token: await c.token('athens'), backoffMs: 10 });
    const err = await client.submit(1, 'cupid', { tensors: update(1), baseFingerprint: FINGERPRINT, clipNorm: 10, noiseMultiplier: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CouncilRequestError);
    expect(err).toMatchObject({ status: 422, councilCode: 'bond_only_agent', exitCode: ExitCode.invalidData });
    const nf = await client.round(9).catch((e: unknown) => e);
    expect(nf).toMatchObject({ status: 404, councilCode: 'round_not_found', exitCode: ExitCode.notFound });
    const bad = new CouncilClient({ url: c.url, token: 'kourai_1_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', backoffMs: 10 });
    expect(await bad.me().catch((e: unknown) => e)).toMatchObject({ status: 401, councilCode: 'unauthorized', exitCode: ExitCode.network });
  });

  it('retries network failures and 5xx with the same body, then reports the network error', async () => {
    c = await startTestCouncil();
    const token = await c.token('athens');
    let calls = 0;
    const flaky: typeof fetch = async (input, init) => {
      calls++;
      if (calls === 1) throw new TypeError('fetch failed: socket hang up');
      if (calls === 2) return new Response('{"error":{"status":503,"code":"busy","message":"busy"}}', { status: 503, headers: { 'retry-after': '0' } });
      return fetch(input, init);
    };
    const client = new CouncilClient({ url: c.url, token, fetch: flaky, backoffMs: 5 });
    const r = await client.submit(1, 'metis', { tensors: update(1), baseFingerprint: FINGERPRINT, clipNorm: 10, noiseMultiplier: 0 });
    expect(r.agent).toBe('metis');
    expect(calls).toBe(3);
    const dead = new CouncilClient({ url: 'http://127.0.0.1:9', token, retries: 1, backoffMs: 5 });
    expect(await dead.health().catch((e: unknown) => e)).toMatchObject({ exitCode: ExitCode.network, message: expect.stringMatching(/cannot reach http:\/\/127\.0\.0\.1:9/) });
  });
});
