import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { CouncilClient } from '../../src/federation/council-client.js';
import { ErrorBodySchema } from '../../src/protocol/wire.js';
import { ExitCode } from '../../src/errors.js';
import {
  FINGERPRINT,
  protocolRelay,
  startTestCouncil,
  update,
  type TestCouncil,
  BACKENDS,
  useBackend,
} from './helpers.js';

/**
 * The refusal is two-sided: a forge refuses a council of another protocol version (its health), and
 * the council refuses a request of another version — every forge request says its version in the
 * `Kourai-Protocol` header. Hard-coded here on purpose (not imported): the header's name and the
 * version are the wire contract this test pins.
 */
const HEADER = 'kourai-protocol';
const V = '2';

let c: TestCouncil | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

/** A raw request with exactly these headers; the body text exactly as received. */
async function raw(
  url: string,
  method: string,
  route: string,
  headers: Record<string, string>,
): Promise<{ status: number; text: string; connection: string | null }> {
  const res = await fetch(`${url}${route}`, { method, headers });
  return { status: res.status, text: await res.text(), connection: res.headers.get('connection') };
}

function expectMismatch(r: { status: number; text: string }, message: RegExp): void {
  expect(r.status).toBe(400);
  // one line of JSON, the protocol's error shape
  expect(r.text).not.toContain('\n');
  const e = ErrorBodySchema.parse(JSON.parse(r.text)).error;
  expect(e).toMatchObject({ status: 400, code: 'protocol_mismatch' });
  expect(e.message).toMatch(message);
  expect(e.details).toMatchObject({ council_protocol: 2 });
}

for (const backend of BACKENDS) {
  describe(`on ${backend}`, () => {
    useBackend(backend);

    describe('the council refuses a request of another protocol version', () => {
      it('no header: taken for a forge older than the header (v1), refused naming both versions', async () => {
        c = await startTestCouncil();
        const t = await c.token('athens');
        const r = await raw(c.url, 'GET', '/v1/me', { authorization: `Bearer ${t}` });
        expectMismatch(r, /speaks protocol v2.*no Kourai-Protocol header.*v1/);
        expect(JSON.parse(r.text).error.details).toEqual({ council_protocol: 2, request_protocol: 1, header: null });
      });

      it('another version: refused naming both, before the token is even looked at', async () => {
        c = await startTestCouncil();
        const t = await c.token('athens');
        const r = await raw(c.url, 'GET', '/v1/rounds/current', { authorization: `Bearer ${t}`, [HEADER]: '3' });
        expectMismatch(r, /speaks protocol v2.*request.*v3/);
        expect(JSON.parse(r.text).error.details).toEqual({ council_protocol: 2, request_protocol: 3, header: '3' });
        // no token at all: still the version that is refused, not the token
        expectMismatch(await raw(c.url, 'GET', '/v1/trust', { [HEADER]: '1' }), /v1/);
      });

      it('a header that is not a version: refused naming what it says', async () => {
        c = await startTestCouncil();
        const t = await c.token('athens');
        for (const bad of ['two', '2.0', '2, 2', '-2', '02x']) {
          const r = await raw(c.url, 'GET', '/v1/me', { authorization: `Bearer ${t}`, [HEADER]: bad });
          expectMismatch(r, new RegExp(`"${bad.replace(/[.]/g, '\\.')}" is not a protocol version`));
          expect(JSON.parse(r.text).error.details).toMatchObject({ request_protocol: null, header: bad });
        }
      });

      it('an upload of another version is refused from its headers, before its body is read, and the connection closed', async () => {
        c = await startTestCouncil();
        const t = await c.token('athens');
        const u = new URL(c.url);
        const answer = await new Promise<string>((resolve, reject) => {
          const s = connect(Number(u.port), u.hostname, () => {
            s.write(
              `PUT /v1/rounds/1/updates/metis HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\nauthorization: Bearer ${t}\r\n${HEADER}: 1\r\n\r\n{`,
            );
          });
          let got = '';
          s.on('data', (d: Buffer) => (got += d.toString()));
          s.on('close', () => resolve(got));
          s.on('error', reject);
        });
        // answered while 999,999 body bytes are still missing
        expect(answer).toMatch(/^HTTP\/1\.1 400[\s\S]*connection: close[\s\S]*"code":"protocol_mismatch"/i);
        expect(c.server.uploadsInFlight()).toBe(0);
      });

      it('the right version is served; health answers every client (it is how a client learns the version)', async () => {
        c = await startTestCouncil();
        const t = await c.token('athens');
        expect((await raw(c.url, 'GET', '/v1/me', { authorization: `Bearer ${t}`, [HEADER]: V })).status).toBe(200);
        const h = await raw(c.url, 'GET', '/v1/health', {});
        expect(h.status).toBe(200);
        expect(JSON.parse(h.text)).toMatchObject({ ok: true, protocol: 2 });
      });
    });

    describe('the forge says its version on every request, and maps the council’s refusal to exit 9', () => {
      let relayed: Awaited<ReturnType<typeof protocolRelay>> | undefined;
      afterEach(async () => {
        await relayed?.close();
        relayed = undefined;
      });

      it('every CouncilClient request carries Kourai-Protocol: 2 (health included), and the council serves it', async () => {
        c = await startTestCouncil();
        const t = await c.token('athens');
        relayed = await protocolRelay(c.url, null);
        const client = new CouncilClient({ url: relayed.url, token: t, retries: 0 });
        await client.health();
        await client.me();
        await client.currentRound();
        await client.layouts();
        await client.submit(1, 'metis', {
          tensors: update(1),
          baseFingerprint: FINGERPRINT,
          clipNorm: 1,
          noiseMultiplier: 0,
        });
        await client.seal(1);
        await client.trust();
        expect(relayed.seen).toEqual(Array.from({ length: 7 }, () => V));
      });

      it('a refusal: exit 9 (network), code protocol_mismatch, naming both versions, with the side to upgrade', async () => {
        c = await startTestCouncil();
        const t = await c.token('athens');
        for (const [sent, hint] of [
          ['3', /council runs an older kourai.*operator/],
          ['1', /upgrade kourai on this forge/],
        ] as const) {
          relayed = await protocolRelay(c.url, sent);
          const err = await new CouncilClient({ url: relayed.url, token: t, retries: 0 }).me().then(
            () => null,
            (e: unknown) => e,
          );
          expect(err).toMatchObject({ exitCode: ExitCode.network, councilCode: 'protocol_mismatch', status: 400 });
          expect((err as Error).message).toMatch(new RegExp(`speaks protocol v2 and refused this request's v${sent}`));
          expect((err as { hint?: string }).hint).toMatch(hint);
          await relayed.close();
          relayed = undefined;
        }
      });
    });
  });
}
