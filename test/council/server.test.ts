import { SERVER_LR } from '../../src/council/config.js';
import { sampleCohort } from '../../src/protocol/cohort.js';
import trustCommand from '../../src/commands/council/trust.js';
import { trustListView } from '../../src/council/views.js';
import type { Ctx } from '../../src/context.js';
import { request } from 'node:http';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  ErrorBodySchema,
  HealthSchema,
  MeSchema,
  ReceiptSchema,
  RoundStatusSchema,
  AdapterSchema,
  SealReceiptSchema,
} from '../../src/protocol/wire.js';
import { f32FromBase64 } from '../../src/tensor/float-codec.js';
import { VirtualClock } from '../../src/runtime/clock.js';
import {
  body,
  call,
  COORDS,
  FINGERPRINT,
  SPECS,
  startTestCouncil,
  update,
  type TestCouncil,
  BACKENDS,
  useBackend,
  rawSql,
} from './helpers.js';

let c: TestCouncil;
afterEach(async () => c?.close());

function expectError(r: { status: number; json: unknown }, status: number, code: string, message?: RegExp): void {
  expect(r.status, JSON.stringify(r.json)).toBe(status);
  const e = ErrorBodySchema.parse(r.json).error;
  expect(e.code).toBe(code);
  expect(e.status).toBe(status);
  if (message) expect(e.message).toMatch(message);
}

for (const backend of BACKENDS) {
  describe(`on ${backend}`, () => {
    useBackend(backend);

    describe('authentication', () => {
      beforeEach(async () => {
        c = await startTestCouncil();
      });

      it('health needs no token; everything else needs a valid one', async () => {
        const h = await call(c.url, 'GET', '/v1/health', null);
        expect(HealthSchema.parse(h.json)).toMatchObject({ ok: true, protocol: 2, round: 1 });
        expectError(await call(c.url, 'GET', '/v1/me', null), 401, 'unauthorized', /missing bearer token/);
        expectError(await call(c.url, 'GET', '/v1/me', 'not-a-token'), 401, 'unauthorized');
        const token = await c.token('athens');
        const forged = token.replace(/.$/, (ch) => (ch === 'A' ? 'B' : 'A'));
        expectError(await call(c.url, 'GET', '/v1/me', forged), 401, 'unauthorized', /unknown or revoked token/);
        expectError(await call(c.url, 'GET', '/v1/me', token.replace('kourai_1_', 'kourai_99_')), 401, 'unauthorized');
        const me = await call(c.url, 'GET', '/v1/me', token);
        expect(MeSchema.parse(me.json)).toMatchObject({ forge: 'athens', trust: 1, exiled: false });
      });

      it('the token is stored only as a hash', async () => {
        const token = await c.token('sparta');
        const f = await c.server.storage.forgeByName('sparta');
        expect(f?.tokenHash.length).toBe(32);
        expect(f?.tokenHash.includes(Buffer.from(token.slice(-20)))).toBe(false);
      });

      it('unknown routes answer a JSON 404', async () => {
        expectError(await call(c.url, 'GET', '/v2/whatever', null), 404, 'not_found', /protocol v2 under \/v1/);
      });
    });

    describe('submissions', () => {
      let token: string;
      beforeEach(async () => {
        c = await startTestCouncil({ payload_limit: 64 * 1024 });
        token = await c.token('athens');
      });

      it('accepts an update (201) and answers a retry of the same body with the same receipt (200)', async () => {
        const b = body(update(1));
        const first = await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', token, b);
        expect(first.status).toBe(201);
        const receipt = ReceiptSchema.parse(first.json);
        expect(receipt).toMatchObject({ round: 1, forge: 'athens', agent: 'metis', coords: COORDS });
        // same content, different key order and whitespace
        const again = await call(
          c.url,
          'PUT',
          '/v1/rounds/1/updates/metis',
          token,
          JSON.stringify({ tensors: b.tensors, privacy: b.privacy, base_fingerprint: b.base_fingerprint }, null, 2),
        );
        expect(again.status).toBe(200);
        expect(again.json).toEqual(first.json);
        const other = await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', token, body(update(2)));
        expectError(other, 409, 'duplicate_submission', /already accepted from this forge, with different content/);
        // the first one is still the stored one
        expect((await c.server.storage.submission(1, 1, 'metis'))?.digest).toBe(receipt.digest);
      });

      it('refuses, precisely and before storing anything, every kind of bad update', async () => {
        const good = update(3);
        const bad = (f: (t: ReturnType<typeof update>) => void): ReturnType<typeof update> => {
          const t = update(3);
          f(t);
          return t;
        };
        const cases: [string, unknown, number, string, RegExp][] = [
          ['hermes', body(good), 404, 'unknown_agent', /unknown agent "hermes"/],
          ['cupid', body(good), 422, 'bond_only_agent', /cupid is bond-only/],
          ['puck', body(good), 422, 'bond_only_agent', /puck is bond-only/],
          [
            'metis',
            body(good, { base_fingerprint: 'sha256:other' }),
            422,
            'base_fingerprint_mismatch',
            /not one this council accepts/,
          ],
          [
            'metis',
            body(bad((t) => (t[0]!.data[5] = NaN))),
            422,
            'non_finite',
            /"layers\.0\.q_proj\.lora_A\.weight" holds NaN at flat index 5/,
          ],
          ['metis', body(bad((t) => (t[1]!.data[0] = -Infinity))), 422, 'non_finite', /-Infinity at flat index 0/],
          [
            'metis',
            body(bad((t) => t[0]!.data.fill(100))),
            422,
            'norm_exceeds_clip',
            /exceeds .* the most clip_norm=1 with noise_multiplier=0 allows over 28 coordinates/,
          ],
          [
            'metis',
            { ...body(good), tensors: body(good).tensors.map((t) => ({ ...t, data: t.data.slice(0, 8) })) },
            422,
            'tensor_data_length',
            /carries 6 bytes; shape \[2, 8\] of float32 needs 64/,
          ],
          [
            'metis',
            { ...body(good), tensors: [...body(good).tensors, body(good).tensors[0]] },
            422,
            'tensor_names_mismatch',
            /tensor "layers\.0\.q_proj\.lora_A\.weight" appears twice/,
          ],
          [
            'metis',
            { ...body(good), privacy: { clip_norm: -1, noise_multiplier: 0 } },
            400,
            'invalid_body',
            /privacy\.clip_norm/,
          ],
          ['metis', { tensors: [] }, 400, 'invalid_body', /base_fingerprint/],
          ['metis', '{"not json', 400, 'invalid_body', /not valid JSON/],
        ];
        for (const [agent, payload, status, code, msg] of cases) {
          expectError(await call(c.url, 'PUT', `/v1/rounds/1/updates/${agent}`, token, payload), status, code, msg);
        }
        expect((await c.server.storage.forgeCounts(1)).submitted).toBe(0);
        // Names and shapes must match the configured layout.
        expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', token, body(good))).status).toBe(201);
        const other = await c.token('sparta');
        const renamed = update(4).map((t, i) => (i === 0 ? { ...t, name: 'layers.0.k_proj.lora_A.weight' } : t));
        expectError(
          await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', other, body(renamed)),
          422,
          'tensor_names_mismatch',
          /missing "layers\.0\.q_proj\.lora_A\.weight"; unexpected "layers\.0\.k_proj\.lora_A\.weight"/,
        );
        const reshaped = update(4, { specs: [{ name: SPECS[0]!.name, shape: [4, 4] }, SPECS[1]!] });
        expectError(
          await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', other, body(reshaped)),
          422,
          'tensor_shape_mismatch',
          /has shape \[4, 4\], metis's layout says \[2, 8\]/,
        );
        expectError(
          await call(
            c.url,
            'PUT',
            '/v1/rounds/1/updates/metis',
            other,
            body([...update(4), { name: 'extra', shape: [1], data: new Float32Array(1) }]),
          ),
          422,
          'tensor_names_mismatch',
          /unexpected "extra"/,
        );
        expect((await c.server.storage.forgeCounts(1)).submitted).toBe(1);
      });

      it('the norm bound admits declared noise: S(1 + σ(√d + t))', async () => {
        const noisy = update(5, { spread: 1 }); // norm ≈ √28 ≈ 5.3
        expectError(
          await call(
            c.url,
            'PUT',
            '/v1/rounds/1/updates/metis',
            token,
            body(noisy, { privacy: { clip_norm: 1, noise_multiplier: 0 } }),
          ),
          422,
          'norm_exceeds_clip',
        );
        const ok = await call(
          c.url,
          'PUT',
          '/v1/rounds/1/updates/metis',
          token,
          body(noisy, { privacy: { clip_norm: 1, noise_multiplier: 1 } }),
        );
        expect(ok.status).toBe(201);
        expect(ok.json.norm_bound).toBeCloseTo(1 * (1 + 1 * (Math.sqrt(28) + 10)) * (1 + 1e-6), 9);
      });

      it('refuses oversize bodies with 413 before reading them', async () => {
        const big = body([{ name: 'w', shape: [20000], data: new Float32Array(20000) }]);
        expectError(
          await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', token, big),
          413,
          'payload_too_large',
          /this route's limit of 65536 bytes \(update uploads\)/,
        );
      });

      it('refuses rounds that do not exist or are over, and updates after the forge sealed', async () => {
        expectError(
          await call(c.url, 'PUT', '/v1/rounds/7/updates/metis', token, body(update(1))),
          404,
          'round_not_found',
          /round 7 does not exist \(the current round is 1\)/,
        );
        expectError(
          await call(c.url, 'PUT', '/v1/rounds/x/updates/metis', token, body(update(1))),
          400,
          'invalid_body',
          /round must be a positive whole number/,
        );
        expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', token, body(update(1)))).status).toBe(201);
        const seal = await call(c.url, 'POST', '/v1/rounds/1/seal', token, {});
        expect(SealReceiptSchema.parse(seal.json)).toMatchObject({ round: 1, forge: 'athens', agents: ['metis'] });
        expect((await call(c.url, 'POST', '/v1/rounds/1/seal', token, {})).json).toEqual(seal.json);
        expectError(
          await call(c.url, 'PUT', '/v1/rounds/1/updates/kallos', token, body(update(1))),
          409,
          'late_submission',
          /sealed round 1/,
        );
        // the sealed update itself can still be replayed
        expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', token, body(update(1)))).status).toBe(200);
      });

      it('refuses exiled forges (403) but still answers retries of what they sent before', async () => {
        expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', token, body(update(1)))).status).toBe(201);
        await rawSql(
          c.server.storage,
          "UPDATE forges SET exiled_at = 'x', exiled_round = 0, trust = 0.1 WHERE name = 'athens'",
        );
        expectError(
          await call(c.url, 'PUT', '/v1/rounds/1/updates/kallos', token, body(update(1))),
          403,
          'forge_exiled',
          /forge "athens" was exiled after round 0 \(trust 0\.100 below 0\.4\)/,
        );
        expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', token, body(update(1)))).status).toBe(200);
        const status = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/current', token)).json);
        expect(status.you).toMatchObject({ exiled: true, submitted: ['metis'] });
      });

      it('answers 503 busy (Retry-After) when max_in_flight submissions are being read', async () => {
        await c.close();
        c = await startTestCouncil({ max_in_flight: 1 });
        token = await c.token('athens');
        const other = await c.token('sparta');
        const u = new URL(c.url);
        // A submission whose body never finishes arriving holds the one slot.
        const slow = request({
          host: u.hostname,
          port: u.port,
          method: 'PUT',
          path: '/v1/rounds/1/updates/metis',
          headers: {
            'content-type': 'application/json',
            'content-length': '1000',
            'kourai-protocol': '2',
            authorization: `Bearer ${token}`,
          },
        });
        slow.on('error', () => undefined);
        slow.write('{"base');
        // No sleeping: wait until the server holds the slow upload in its slot.
        while (c.server.uploadsInFlight() === 0) await new Promise((res) => setImmediate(res));
        const r = await call(c.url, 'PUT', '/v1/rounds/1/updates/kallos', other, body(update(1)));
        expectError(r, 503, 'busy');
        expect(r.headers.get('retry-after')).toBe('1');
        slow.destroy();
        // The slot comes back once the server has seen the connection close.
        while (c.server.uploadsInFlight() > 0) await new Promise((res) => setImmediate(res));
        expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/kallos', token, body(update(1)))).status).toBe(201);
      });
    });

    describe('a round closing and aggregating', () => {
      it('closes when min_forges have sealed, aggregates exactly once, opens the next round', async () => {
        c = await startTestCouncil({ min_forges: 3, strategy: 'fedavg' });
        const names = ['athens', 'sparta', 'thebes'];
        const tokens = await Promise.all(names.map((n) => c.token(n)));
        const ups = names.map((_, i) => update(10 + i));
        for (let i = 0; i < 3; i++) {
          expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', tokens[i]!, body(ups[i]!))).status).toBe(201);
          if (i < 2)
            expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/kallos', tokens[i]!, body(ups[i]!))).status).toBe(
              201,
            );
        }
        // Before any aggregate, the global is round 0: the public initialisation (protocol v2).
        const init = AdapterSchema.parse((await call(c.url, 'GET', '/v1/global/metis', tokens[0]!)).json);
        expect(init).toMatchObject({ agent: 'metis', round: 0, strategy: 'public-init' });
        const base = init.tensors.map((t) => f32FromBase64(t.data));
        for (let i = 0; i < 2; i++) await call(c.url, 'POST', '/v1/rounds/1/seal', tokens[i]!, {});
        expect(RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/1', tokens[0]!)).json).state).toBe('open');
        await call(c.url, 'POST', '/v1/rounds/1/seal', tokens[2]!, {});
        await c.server.council.idle();
        const s = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/1', tokens[2]!)).json);
        expect(s).toMatchObject({
          state: 'aggregated',
          close_reason: 'min_forges',
          forges_submitted: 3,
          forges_sealed: 3,
        });
        expect(s.outcomes).toEqual([
          { agent: 'kallos', updates: 2, aggregated: true, skipped_reason: null, used: 2, yours_used: null },
          { agent: 'metis', updates: 3, aggregated: true, skipped_reason: null, used: 3, yours_used: true },
        ]);
        // The aggregate is round 0 + the server step × the mean of the three updates (float32 storage).
        const agg = AdapterSchema.parse((await call(c.url, 'GET', '/v1/rounds/1/aggregate/metis', tokens[0]!)).json);
        expect(agg).toMatchObject({ agent: 'metis', round: 1, strategy: 'fedavg' });
        agg.tensors.forEach((t, ti) => {
          const got = f32FromBase64(t.data);
          got.forEach((x, k) =>
            expect(x).toBeCloseTo(
              base[ti]![k]! + (SERVER_LR * (ups[0]![ti]!.data[k]! + ups[1]![ti]!.data[k]! + ups[2]![ti]!.data[k]!)) / 3,
              6,
            ),
          );
        });
        expect((await call(c.url, 'GET', '/v1/global/metis', tokens[0]!)).json).toEqual(agg);
        // Round 2 is open and tells forges which globals to start from.
        const cur = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/current', tokens[0]!)).json);
        expect(cur).toMatchObject({ round: 2, state: 'open', globals: { metis: 1, kallos: 1 }, forges_submitted: 0 });
        expectError(
          await call(c.url, 'PUT', '/v1/rounds/1/updates/aidos', tokens[0]!, body(ups[0]!)),
          409,
          'late_submission',
          /round 1 is closed \(min_forges/,
        );
        expect((await c.server.storage.aggregatesOf(1)).length).toBe(2);
        // Trust: everyone close to the mean keeps full trust.
        const trust = await call(c.url, 'GET', '/v1/trust', tokens[0]!);
        expect(trust.json).toMatchObject({
          forge: 'athens',
          trust: 1,
          rounds_scored: 1,
          exiled: false,
          history: [{ round: 1, similarity: 1, trust: 1 }],
        });
      });

      it('closes at the deadline with whatever arrived; an empty round is extended instead (virtual clock)', async () => {
        const clock = new VirtualClock(Date.UTC(2026, 0, 1));
        c = await startTestCouncil({ min_forges: 3, round_deadline: 60 }, undefined, clock);
        const t = await c.token('athens');
        clock.advance(60_000);
        const s1 = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/current', t)).json);
        expect(s1).toMatchObject({ round: 1, state: 'open', deadline: '2026-01-01T00:02:00.000Z' });
        expect((await c.server.storage.events(10)).map((e) => e.kind)).toContain('round_extended');
        expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(update(1)))).status).toBe(201);
        clock.advance(60_000);
        // The timer closed the round (or the next request does); aggregation follows.
        expect(RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/1', t)).json).state).not.toBe('open');
        // Aggregation runs in the background; idle() waits for it, whichever of the timer and the request closed the round.
        await c.server.council.idle();
        expect(RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/current', t)).json).round).toBe(2);
        const s = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/1', t)).json);
        expect(s).toMatchObject({ state: 'aggregated', close_reason: 'deadline' });
        expect(s.outcomes[0]).toMatchObject({ agent: 'metis', aggregated: true, used: 1 });
      });

      it('skips an agent whose updates are too few for the Byzantine bound, keeping its global', async () => {
        c = await startTestCouncil({ min_forges: 1, strategy: 'krum', byzantine: 1 });
        const t = await c.token('athens');
        await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(update(1)));
        await call(c.url, 'POST', '/v1/rounds/1/seal', t, {});
        await c.server.council.idle();
        const s = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/1', t)).json);
        expect(s.outcomes[0]).toMatchObject({
          agent: 'metis',
          aggregated: false,
          skipped_reason: 'krum with f=1 needs n > 2f+2 (at least 5 updates); got 1',
        });
        expectError(
          await call(c.url, 'GET', '/v1/rounds/1/aggregate/metis', t),
          404,
          'no_aggregate',
          /did not update metis/,
        );
      });
    });

    describe('trust and exile: the Stoa Falls', () => {
      it('a forge that keeps sending far-off updates loses trust and is exiled after the warm-up', async () => {
        c = await startTestCouncil({
          min_forges: 5,
          strategy: 'multikrum',
          byzantine: 1,
          trust_warmup: 3,
          clip_norm: { min: 0, max: 10 },
        });
        const names = ['athens', 'sparta', 'thebes', 'argos', 'stoa'];
        const tokens = await Promise.all(names.map((n) => c.token(n)));
        for (let round = 1; round <= 3; round++) {
          for (let i = 0; i < 5; i++) {
            const u =
              i === 4
                ? update(100 + round, { centre: 1.5, spread: 0.05 })
                : update(round * 10 + i, { centre: 0.2, spread: 0.05 });
            expect(
              (
                await call(
                  c.url,
                  'PUT',
                  `/v1/rounds/${round}/updates/aidos`,
                  tokens[i]!,
                  body(u, { privacy: { clip_norm: 10, noise_multiplier: 0 } }),
                )
              ).status,
            ).toBe(201);
          }
          for (const t of tokens) await call(c.url, 'POST', `/v1/rounds/${round}/seal`, t, {});
          await c.server.council.idle();
          const s = RoundStatusSchema.parse((await call(c.url, 'GET', `/v1/rounds/${round}`, tokens[4]!)).json);
          expect(s.state).toBe('aggregated');
          expect(s.outcomes[0]).toMatchObject({ used: 4, yours_used: false });
        }
        const stoa = (await call(c.url, 'GET', '/v1/trust', tokens[4]!)).json;
        expect(stoa).toMatchObject({ forge: 'stoa', exiled: true, exiled_round: 3, rounds_scored: 3 });
        expect(stoa.trust).toBeLessThan(0.4);
        expect(stoa.history.map((h: { trust: number }) => h.trust)).toEqual(
          [...stoa.history.map((h: { trust: number }) => h.trust)].sort((a: number, b: number) => b - a),
        );
        for (const t of tokens.slice(0, 4))
          expect((await call(c.url, 'GET', '/v1/trust', t)).json).toMatchObject({ trust: 1, exiled: false });
        const events = await c.server.storage.events(50);
        expect(events.filter((e) => e.kind === 'stoa_falls').map((e) => JSON.parse(e.detailJson).forge)).toEqual([
          'stoa',
        ]);
        expect(c.logs.some((l) => /THE STOA FALLS — forge "stoa" exiled after round 3/.test(l))).toBe(true);
        expectError(
          await call(c.url, 'PUT', '/v1/rounds/4/updates/aidos', tokens[4]!, body(update(7))),
          403,
          'forge_exiled',
        );
        const s4 = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/current', tokens[4]!)).json);
        expect(s4.you.exiled).toBe(true);
      });

      it('colluders sending one vector and a forge sending noise fall after the warm-up, whatever their distance', async () => {
        // An adapter large enough for correlation to mean something (|cos|·√d of a random vector ~ N(0, 1)).
        // The twins and the noise are as far from the aggregate as honest updates are: distance alone spares them.
        const specs = [
          { name: 'layers.0.q_proj.lora_A.weight', shape: [8, 4096] },
          { name: 'layers.0.q_proj.lora_B.weight', shape: [4096, 8] },
        ];
        c = await startTestCouncil({
          min_forges: 8,
          strategy: 'multikrum',
          byzantine: 2,
          trust_warmup: 3,
          clip_norm: { min: 0, max: 10 },
          layouts: { '*': specs },
        });
        const names = ['athens', 'sparta', 'thebes', 'argos', 'corinth', 'twin-a', 'twin-b', 'static'];
        const tokens = await Promise.all(names.map((n) => c.token(n)));
        for (let round = 1; round <= 4; round++) {
          for (let i = 0; i < names.length; i++) {
            if (round === 4 && i >= 5) continue;
            const u =
              i >= 5 && i <= 6
                ? update(900 + round, { centre: 0.01, spread: 0.015, specs })
                : i === 7
                  ? update(800 + round, { centre: 0, spread: 0.018, specs })
                  : update(round * 10 + i, { centre: 0.01, spread: 0.015, specs });
            const r = await call(
              c.url,
              'PUT',
              `/v1/rounds/${round}/updates/aidos`,
              tokens[i]!,
              body(u, { privacy: { clip_norm: 10, noise_multiplier: 0 } }),
            );
            expect(r.status).toBe(201);
          }
          if (round === 4) break;
          for (const t of tokens) await call(c.url, 'POST', `/v1/rounds/${round}/seal`, t, {});
          await c.server.council.idle();
          const s = RoundStatusSchema.parse((await call(c.url, 'GET', `/v1/rounds/${round}`, tokens[0]!)).json);
          expect(s.state).toBe('aggregated');
        }
        for (const [i, t] of tokens.entries()) {
          const trust = (await call(c.url, 'GET', '/v1/trust', t)).json;
          if (i < 5) expect(trust).toMatchObject({ trust: 1, exiled: false });
          else expect(trust).toMatchObject({ exiled: true, exiled_round: 3, rounds_scored: 3 });
        }
        const rounds = await c.server.storage.aggregatesOf(1);
        expect(JSON.parse(rounds[0]!.outcomeJson).details.evidence).toEqual({
          'twin-a': 'echo',
          'twin-b': 'echo',
          static: 'structureless',
        });
        const events = await c.server.storage.events(50);
        expect(
          events
            .filter((e) => e.kind === 'stoa_falls')
            .map((e) => JSON.parse(e.detailJson).forge)
            .sort(),
        ).toEqual(['static', 'twin-a', 'twin-b']);
        expect(
          Object.fromEntries(
            events
              .filter((e) => e.kind === 'stoa_falls')
              .map((e) => [JSON.parse(e.detailJson).forge, JSON.parse(e.detailJson).evidence]),
          ),
        ).toEqual({ static: ['structureless'], 'twin-a': ['echo'], 'twin-b': ['echo'] });
        expect(
          c.logs.some((l) =>
            /THE STOA FALLS — forge "static" exiled after round 3: .*this round: structureless/.test(l),
          ),
        ).toBe(true);
        // `kourai council trust` says why each fell.
        const list = {
          data_dir: '',
          alpha: 0.3,
          threshold: 0.4,
          warmup: 3,
          ...(await trustListView(c.server.storage)),
        };
        expect(list.stoa_falls.map((f) => [f.forge, f.evidence])).toEqual(
          expect.arrayContaining([
            ['static', ['structureless']],
            ['twin-a', ['echo']],
          ]),
        );
        const text = trustCommand.render?.(list, { colorLevel: 0 } as Ctx) ?? '';
        expect(text).toMatch(
          /the Stoa falls: static exiled after round 3 \(trust 0\.343; its last update: no structure \(noise\),/,
        );
        expect(text).toMatch(
          /the Stoa falls: twin-a exiled after round 3 \(trust 0\.343; its last update: an echo of another forge’s,/,
        );
      });
    });

    describe('fingerprints', () => {
      it('lists the accepted base fingerprints in the round status', async () => {
        c = await startTestCouncil();
        const t = await c.token('athens');
        expect(
          RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/current', t)).json).accepted_base_fingerprints,
        ).toEqual([FINGERPRINT]);
      });
    });

    describe('crash recovery (in-process)', () => {
      it('a round left closing (crash after close, one agent already recorded) is finished on restart, each agent once', async () => {
        c = await startTestCouncil({ min_forges: 3 });
        const tokens = await Promise.all(['athens', 'sparta', 'thebes'].map((n) => c.token(n)));
        for (const [i, t] of tokens.entries()) {
          await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(update(i)));
          await call(c.url, 'PUT', '/v1/rounds/1/updates/kallos', t, body(update(i + 5)));
        }
        const { storage } = c.server;
        // Simulate the crash: the round was closed and kallos recorded, then the process died.
        await c.server.council.stop();
        expect(await storage.closeRound(1, new Date().toISOString(), 'min_forges')).toBe(true);
        await storage.recordAggregate(
          {
            round: 1,
            agent: 'kallos',
            updated: false,
            outcomeJson: JSON.stringify({
              strategy: 'fedavg',
              byzantine: 0,
              forges: [],
              used: [],
              non_finite: [],
              skipped_reason: 'recorded before the crash',
              details: {},
            }),
            recordedAt: new Date().toISOString(),
          },
          null,
          [],
        );
        const dir = c.dir;
        const database = c.config.database;
        await c.server.close();
        const { startTestCouncil: start } = await import('./helpers.js');
        c = await start({ min_forges: 3, database }, dir);
        // The council answers while it resumes; the round is aggregated once the resumed work is done.
        expect((await call(c.url, 'GET', '/v1/health', null)).status).toBe(200);
        await c.server.council.idle();
        const s = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/1', tokens[0]!)).json);
        expect(s.state).toBe('aggregated');
        expect(s.outcomes.map((o) => [o.agent, o.aggregated, o.skipped_reason])).toEqual([
          ['kallos', false, 'recorded before the crash'],
          ['metis', true, null],
        ]);
        expect(c.logs.some((l) => /round 1 was closed but not aggregated .* resuming/.test(l))).toBe(true);
        expect((await c.server.storage.latestRound())?.round).toBe(2);
        // aggregateRound again is a no-op: exactly once
        await c.server.council.aggregateRound(1);
        expect((await c.server.storage.aggregatesOf(1)).length).toBe(2);
        expect((await c.server.storage.trustHistory(1)).length).toBe(1);
      });
    });

    describe('cohorts', () => {
      it('each round samples K forges with sampleCohort and the council secret seed; the others are refused 403 not_in_cohort', async () => {
        const clock = new VirtualClock(Date.now());
        c = await startTestCouncil({ min_forges: 2, cohort: 2, round_deadline: 60 }, undefined, clock);
        const names = ['argos', 'athens', 'sparta', 'thebes'];
        const tokens = new Map<string, string>();
        for (const n of names) tokens.set(n, await c.token(n));
        // Round 1 opened before the forges joined: at its empty deadline it is extended and sampled afresh.
        clock.advance(61_000);
        const s = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/current', tokens.get('athens')!)).json);
        const seed = await c.server.storage.setting('cohort_seed');
        expect(seed?.length).toBe(32);
        expect(s.cohort).toMatchObject({
          size: 2,
          forges: sampleCohort(names, { round: 1, seed: seed!, size: 2 }),
          you: s.cohort?.forges.includes('athens'),
          next_check: s.deadline,
        });
        const inside = s.cohort!.forges;
        const outside = names.filter((n) => !inside.includes(n));
        for (const n of outside) {
          const r = await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', tokens.get(n)!, body(update(1)));
          expectError(
            r,
            403,
            'not_in_cohort',
            new RegExp(`forge "${n}" is not in the cohort of round 1 \\(2 forges sampled\\)`),
          );
          expect(r.json.error.details).toMatchObject({ round: 1, cohort_size: 2, retry_after: s.deadline });
          expectError(
            await call(c.url, 'POST', '/v1/rounds/1/seal', tokens.get(n)!, {}),
            403,
            'not_in_cohort',
            /not in the cohort/,
          );
        }
        for (const [i, n] of inside.entries()) {
          expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', tokens.get(n)!, body(update(i)))).status).toBe(
            201,
          );
          expect((await call(c.url, 'POST', '/v1/rounds/1/seal', tokens.get(n)!, {})).status).toBe(200);
        }
        await c.server.council.idle();
        const next = RoundStatusSchema.parse(
          (await call(c.url, 'GET', '/v1/rounds/current', tokens.get('athens')!)).json,
        );
        expect(next.round).toBe(2);
        expect(next.cohort?.forges).toEqual(sampleCohort(names, { round: 2, seed: seed!, size: 2 }));
        expect((await c.server.storage.forgeCounts(1)).submitted).toBe(2);
      });
    });
  });
}
