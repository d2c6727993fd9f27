import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AdapterSchema, ErrorBodySchema, RoundStatusSchema } from '../../src/protocol/wire.js';
import { VirtualClock } from '../../src/runtime/clock.js';
import { f32FromBase64, f32ToBase64 } from '../../src/tensor/float-codec.js';
import { defaults } from '../../src/council/config.js';
import {
  body,
  call,
  FINGERPRINT,
  SPECS,
  startTestCouncil,
  update,
  type TestCouncil,
  BACKENDS,
  useBackend,
} from './helpers.js';

/**
 * The council as an attacker meets it, on a real server on 127.0.0.1. Every test here
 * failed before the fix it names.
 */
let c: TestCouncil | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

function expectError(r: { status: number; json: unknown }, status: number, code: string, message?: RegExp): void {
  expect(r.status, JSON.stringify(r.json)).toBe(status);
  const e = ErrorBodySchema.parse(r.json).error;
  expect(e.code).toBe(code);
  if (message) expect(e.message).toMatch(message);
}

const filled = (value: number): ReturnType<typeof update> =>
  SPECS.map((s) => ({ name: s.name, shape: s.shape, data: new Float32Array(s.shape[0]! * s.shape[1]!).fill(value) }));

async function waitForState(url: string, token: string, round: number, state: string): Promise<void> {
  for (;;) {
    const s = RoundStatusSchema.parse((await call(url, 'GET', `/v1/rounds/${round}`, token)).json);
    if (s.state === state) return;
    if (state === 'closing' && s.state === 'aggregated')
      throw new Error(`round ${round} was aggregated before it could be seen closing`);
    await new Promise((r) => setImmediate(r));
  }
}

const allFinite = (tensors: { data: string }[]): boolean =>
  tensors.every((t) => f32FromBase64(t.data).every(Number.isFinite));

for (const backend of BACKENDS) {
  describe(`on ${backend}`, () => {
    useBackend(backend);

    describe('1. poisoning through a declared clip', () => {
      for (const strategy of ['fedavg', 'lora-fair'] as const) {
        it(`${strategy}: the council's privacy policy, not the forge's declaration, bounds every update (4 rounds)`, async () => {
          // The council's default policy: S ≤ 1, σ = 8 (the forge defaults).
          c = await startTestCouncil({
            strategy,
            min_forges: 3,
            lora_fair_steps: 50,
            noise_multiplier: defaults('').noise_multiplier,
          });
          const honest = await Promise.all(['athens', 'sparta', 'thebes'].map((n) => c!.token(n)));
          const poisoner = await c.token('stoa');
          const status = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/current', poisoner)).json);
          expect(status.privacy_policy).toEqual({
            clip_norm: 1,
            noise_multiplier: 8,
            accepted: { clip_norm: { min: 0, max: 1 }, noise_multiplier: { min: 8, max: 8 } },
            tail_margin: 10,
          });
          for (let round = 1; round <= 4; round++) {
            const huge = await call(
              c.url,
              'PUT',
              `/v1/rounds/${round}/updates/metis`,
              poisoner,
              body(filled(3.4e38), { privacy: { clip_norm: 1e308, noise_multiplier: 8 } }),
            );
            expectError(
              huge,
              422,
              'privacy_policy_violation',
              /clip_norm 1e\+308 is outside the council's policy \(0, 1\]/,
            );
            const sigma = await call(
              c.url,
              'PUT',
              `/v1/rounds/${round}/updates/metis`,
              poisoner,
              body(filled(3.4e38), { privacy: { clip_norm: 1, noise_multiplier: 1e308 } }),
            );
            expectError(
              sigma,
              422,
              'privacy_policy_violation',
              /noise_multiplier 1e\+308 is outside the council's policy 8 /,
            );
            for (const [i, t] of honest.entries()) {
              const r = await call(
                c.url,
                'PUT',
                `/v1/rounds/${round}/updates/metis`,
                t,
                body(update(round * 10 + i, { spread: 0.05 }), { privacy: { clip_norm: 1, noise_multiplier: 8 } }),
              );
              expect(r.status, JSON.stringify(r.json)).toBe(201);
              expect(Number.isFinite(r.json.norm_bound)).toBe(true);
              await call(c.url, 'POST', `/v1/rounds/${round}/seal`, t, {});
            }
            await waitForState(c.url, honest[0]!, round, 'aggregated');
            const g = AdapterSchema.parse((await call(c.url, 'GET', '/v1/global/metis', honest[0]!)).json);
            expect(g.round).toBe(round);
            expect(allFinite(g.tensors)).toBe(true);
          }
        });
      }

      it('an aggregate that is not finite is never stored or served: the agent fails loudly, the previous global stays', async () => {
        // An operator who allows clips up to the float32 limit: each update is within policy, their running sum is not.
        c = await startTestCouncil({
          strategy: 'fedavg',
          min_forges: 3,
          clip_norm: { min: 0, max: 3.4e38 },
          server_lr: 1,
        });
        const tokens = await Promise.all(['athens', 'sparta', 'thebes'].map((n) => c!.token(n)));
        // Each forge's own bytes (the council refuses one forge's exact bytes from another): a small mark in coordinate 1.
        const big = (forge: number): ReturnType<typeof update> =>
          SPECS.map((s, i) => ({
            name: s.name,
            shape: s.shape,
            data: Float32Array.from({ length: s.shape[0]! * s.shape[1]! }, (_, k) =>
              i === 0 && k === 0 ? 1e38 : i === 0 && k === 1 ? forge : 0,
            ),
          }));
        for (let round = 1; round <= 4; round++) {
          for (const [n, t] of tokens.entries()) {
            const r = await call(
              c.url,
              'PUT',
              `/v1/rounds/${round}/updates/metis`,
              t,
              body(big(n), { privacy: { clip_norm: 3.4e38, noise_multiplier: 0 } }),
            );
            expect(r.status, JSON.stringify(r.json)).toBe(201);
            await call(c.url, 'POST', `/v1/rounds/${round}/seal`, t, {});
          }
          await waitForState(c.url, tokens[0]!, round, 'aggregated');
        }
        // global after round 3: 3e38; round 4 would be 4e38, beyond float32.
        const s4 = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/4', tokens[0]!)).json);
        expect(s4.outcomes[0]).toMatchObject({
          agent: 'metis',
          aggregated: false,
          skipped_reason: expect.stringMatching(/aggregate refused: the new global is not finite/),
        });
        const g = AdapterSchema.parse((await call(c.url, 'GET', '/v1/global/metis', tokens[0]!)).json);
        expect(g.round).toBe(3);
        expect(f32FromBase64(g.tensors[0]!.data)[0]).toBeCloseTo(3e38, -33);
        expectError(
          await call(c.url, 'GET', '/v1/rounds/4/aggregate/metis', tokens[0]!),
          404,
          'no_aggregate',
          /aggregate refused/,
        );
        expect(c.logs.some((l) => /round 4: metis: AGGREGATE REFUSED/.test(l))).toBe(true);
        expect((await c.server.storage.events(20)).map((e) => e.kind)).toContain('aggregate_refused');
      });
    });

    describe('2. layout lock-out', () => {
      it('layouts come from the configuration: a forge sending a junk layout first is refused, and real updates are accepted', async () => {
        c = await startTestCouncil({ min_forges: 3, layouts: { '*': SPECS } });
        const [a, b] = await Promise.all(['athens', 'sparta'].map((n) => c!.token(n)));
        const junk = await call(
          c.url,
          'PUT',
          '/v1/rounds/1/updates/aidos',
          a!,
          body([{ name: 'junk', shape: [1], data: new Float32Array(1) }]),
        );
        expectError(junk, 422, 'tensor_names_mismatch', /missing "layers\.0\.q_proj\.lora_A\.weight"/);
        expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/aidos', b!, body(update(1)))).status).toBe(201);
        expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/aidos', a!, body(update(2)))).status).toBe(201);
      });

      it('an agent the configuration gives no layout is refused', async () => {
        c = await startTestCouncil({ layouts: { metis: SPECS } });
        const t = await c.token('athens');
        expectError(
          await call(c.url, 'PUT', '/v1/rounds/1/updates/aidos', t, body(update(1))),
          422,
          'agent_not_configured',
          /no adapter layout for aidos/,
        );
        expect(RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/current', t)).json).agents).toEqual([
          'metis',
        ]);
      });
    });

    /** A raw connection that sends a request head and `bodyBytes` of its body, then stalls. */
    function stall(
      url: string,
      head: Record<string, string>,
      bodyBytes: string,
    ): Promise<{ socket: Socket; response: Promise<string> }> {
      const u = new URL(url);
      return new Promise((resolve, reject) => {
        const socket = connect(Number(u.port), u.hostname, () => {
          const lines = Object.entries(head).map(([k, v]) => `${k}: ${v}`);
          socket.write(
            `PUT /v1/rounds/1/updates/metis HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\nkourai-protocol: 2\r\n${lines.join('\r\n')}\r\n\r\n${bodyBytes}`,
          );
          let got = '';
          const response = new Promise<string>((res) => {
            socket.on('data', (d: Buffer) => (got += d.toString()));
            socket.on('close', () => res(got));
            socket.on('end', () => res(got));
          });
          resolve({ socket, response });
        });
        socket.on('error', reject);
      });
    }

    describe('3. starvation', () => {
      it('unauthenticated uploads are refused at once, before any body is read, and take no upload slot', async () => {
        c = await startTestCouncil({ max_in_flight: 8 });
        const t = await c.token('athens');
        const stalled = await Promise.all(
          Array.from({ length: 8 }, () => stall(c!.url, { 'content-length': '1000000' }, '{')),
        );
        // Each gets its 401 while its body is still 999,999 bytes short, and the connection is closed.
        for (const s of stalled) expect(await s.response).toMatch(/^HTTP\/1\.1 401[\s\S]*"code":"unauthorized"/);
        expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(update(1)))).status).toBe(201);
      });

      it('a forge holding every upload it may have gets 429; other forges still get through', async () => {
        c = await startTestCouncil({ max_in_flight: 8, max_uploads_per_forge: 2 });
        const [a, b] = await Promise.all(['athens', 'sparta'].map((n) => c!.token(n)));
        const held = await Promise.all(
          [0, 1].map(() => stall(c!.url, { 'content-length': '1000', authorization: `Bearer ${a}` }, '{')),
        );
        try {
          while (c.server.uploadsInFlight() < 2) await new Promise((r) => setImmediate(r));
          const third = await call(c.url, 'PUT', '/v1/rounds/1/updates/kallos', a!, body(update(1)));
          expectError(
            third,
            429,
            'too_many_uploads',
            /"athens" already has 2 uploads in progress \(at most 2 at once\)/,
          );
          expect(third.headers.get('retry-after')).toBe('1');
          expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/kallos', b!, body(update(2)))).status).toBe(201);
        } finally {
          for (const h of held) h.socket.destroy();
        }
      });

      it('a stalled body is cut off once it stops arriving (virtual clock), freeing its slot', async () => {
        const clock = new VirtualClock(Date.UTC(2026, 0, 1));
        c = await startTestCouncil({ max_in_flight: 1, upload_grace: 10, upload_rate: 1000 }, undefined, clock);
        const t = await c.token('athens');
        const s = await stall(c.url, { 'content-length': '5000', authorization: `Bearer ${t}` }, '{"base');
        // The slot is held: wait until the server has the upload (no sleeping).
        while (c.server.uploadsInFlight() === 0) await new Promise((r) => setImmediate(r));
        expectError(
          await call(c.url, 'PUT', '/v1/rounds/1/updates/kallos', await c.token('sparta'), body(update(1))),
          503,
          'busy',
        );
        clock.advance(10_000 - 1); // the grace, less a millisecond: the few bytes that came buy a little more
        expect(c.server.uploadsInFlight()).toBe(1);
        clock.advance(1000); // far less than the 5 s its declared 5000 bytes at 1000 B/s would have bought
        expect(await s.response).toMatch(
          /^HTTP\/1\.1 408[\s\S]*"code":"request_timeout"[\s\S]*5000-byte body stopped arriving/,
        );
        expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(update(1)))).status).toBe(201);
      });

      it('/v1/health answers while a long aggregation runs (aggregation is off the event loop)', async () => {
        c = await startTestCouncil({ strategy: 'lora-fair', min_forges: 3, lora_fair_steps: 400_000 });
        const tokens = await Promise.all(['athens', 'sparta', 'thebes'].map((n) => c!.token(n)));
        for (const [i, t] of tokens.entries()) {
          await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(update(i, { centre: 0.1, spread: 0.02 })));
          await call(c.url, 'POST', '/v1/rounds/1/seal', t, {});
        }
        await waitForState(c.url, tokens[0]!, 1, 'closing');
        for (let i = 0; i < 5; i++) expect((await call(c.url, 'GET', '/v1/health', null)).status).toBe(200);
        // All five answers came while the one agent was still being aggregated.
        expect(RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/1', tokens[0]!)).json).state).toBe(
          'closing',
        );
      });
    });

    describe('5. smaller holes', () => {
      it('huge declared shapes are 422, not 500', async () => {
        c = await startTestCouncil();
        const t = await c.token('athens');
        for (const shape of [[2 ** 53 - 1], Array(8).fill(65536)]) {
          const b = body(update(1));
          b.tensors[0] = { ...b.tensors[0]!, shape };
          expectError(await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, b), 422, 'tensor_shape_mismatch');
        }
      });

      it('base64 is checked strictly: junk characters or an extra trailing A are refused, and the clean encoding is then accepted', async () => {
        c = await startTestCouncil();
        const t = await c.token('athens');
        const clean = body(update(1));
        const junk = {
          ...clean,
          tensors: clean.tensors.map((x, i) =>
            i === 0 ? { ...x, data: `${x.data.slice(0, 4)}!${x.data.slice(5)}` } : x,
          ),
        };
        expectError(
          await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, junk),
          422,
          'invalid_base64',
          /tensor "layers\.0\.q_proj\.lora_A\.weight": data: not canonical base64 at character 4/,
        );
        const extra = { ...clean, tensors: clean.tensors.map((x, i) => (i === 1 ? { ...x, data: `${x.data}A` } : x)) };
        expectError(await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, extra), 422, 'invalid_base64');
        expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, clean)).status).toBe(201);
      });

      it('a limit message names the limit of the route that refused', async () => {
        c = await startTestCouncil();
        const t = await c.token('athens');
        const seal = await call(c.url, 'POST', '/v1/rounds/1/seal', t, `{"pad":"${'x'.repeat(1_048_577 - 10)}"}`);
        expectError(seal, 413, 'payload_too_large', /exceeds this route's limit of 1048576 bytes/);
      });

      it('errors raised by the HTTP layer (400, 414, 431) have the protocol error body', async () => {
        c = await startTestCouncil();
        const raw = async (text: string): Promise<{ status: number; json: unknown }> => {
          const u = new URL(c!.url);
          const out = await new Promise<string>((resolve, reject) => {
            const s = connect(Number(u.port), u.hostname, () => s.end(text));
            let got = '';
            s.on('data', (d: Buffer) => (got += d.toString()));
            s.on('close', () => resolve(got));
            s.on('error', reject);
          });
          const [head, ...rest] = out.split('\r\n\r\n');
          return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(head ?? '')?.[1]), json: JSON.parse(rest.join('\r\n\r\n')) };
        };
        expectError(await raw('GARBAGE\r\n\r\n'), 400, 'bad_request');
        expectError(
          await raw(`GET /v1/rounds/1/aggregate/${'m'.repeat(200)} HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n`),
          414,
          'uri_too_long',
        );
        expectError(
          await raw(`GET /v1/health HTTP/1.1\r\nhost: x\r\nx-big: ${'y'.repeat(20_000)}\r\n\r\n`),
          431,
          'headers_too_large',
        );
      });
    });

    describe('15.2 the submission digest covers privacy and weight', () => {
      it('the same tensors with a changed clip, noise multiplier or weight are 409, not a replay', async () => {
        c = await startTestCouncil();
        const t = await c.token('athens');
        const tensors = update(3);
        expect(
          (
            await call(
              c.url,
              'PUT',
              '/v1/rounds/1/updates/metis',
              t,
              body(tensors, { privacy: { clip_norm: 1, noise_multiplier: 0.5 }, weight: 10 }),
            )
          ).status,
        ).toBe(201);
        expect(
          (
            await call(
              c.url,
              'PUT',
              '/v1/rounds/1/updates/metis',
              t,
              body(tensors, { privacy: { clip_norm: 1, noise_multiplier: 0.5 }, weight: 10 }),
            )
          ).status,
        ).toBe(200);
        for (const over of [
          { privacy: { clip_norm: 0.5, noise_multiplier: 0.5 }, weight: 10 },
          { privacy: { clip_norm: 1, noise_multiplier: 0.6 }, weight: 10 },
          { privacy: { clip_norm: 1, noise_multiplier: 0.5 }, weight: 11 },
          { privacy: { clip_norm: 1, noise_multiplier: 0.5 } },
        ]) {
          expectError(
            await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(tensors, over)),
            409,
            'duplicate_submission',
          );
        }
        expect(f32ToBase64(tensors[0]!.data)).toBe(body(tensors).tensors[0]!.data);
        expect(FINGERPRINT).toBeTruthy();
      });
    });
  });
}
