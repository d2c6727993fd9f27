import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/runtime/clock.js';
import { body, call, startTestCouncil, update, type TestCouncil } from './helpers.js';

/**
 * Upload slots are fair across forges, and an upload's deadline follows the bytes that actually
 * arrive: real sockets on 127.0.0.1 that declare a large body and then stall.
 */
let c: TestCouncil | undefined;
const sockets: Socket[] = [];
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  await c?.close();
  c = undefined;
});

/** Opens an upload that declares `length` bytes, sends `first` of them, and stalls. */
function stall(
  url: string,
  token: string,
  agent: string,
  length: number,
  first: string,
): Promise<{ socket: Socket; response: Promise<string> }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname, () => {
      socket.write(
        `PUT /v1/rounds/1/updates/${agent} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\nkourai-protocol: 2\r\nauthorization: Bearer ${token}\r\ncontent-length: ${length}\r\n\r\n${first}`,
      );
      let got = '';
      const response = new Promise<string>((res) => {
        socket.on('data', (d: Buffer) => (got += d.toString()));
        socket.on('close', () => res(got));
      });
      resolve({ socket, response });
    });
    sockets.push(socket);
    socket.on('error', reject);
  });
}

describe('upload slots are fair across forges', () => {
  it('an honest forge’s upload is accepted promptly while 4 forges stall 8 uploads of 64 MiB', async () => {
    c = await startTestCouncil({ max_in_flight: 8, max_uploads_per_forge: 2 });
    const stallers = await Promise.all(['argos', 'corinth', 'delphi', 'elis'].map((n) => c!.token(n)));
    const honest = await c.token('athens');
    const held = await Promise.all(
      stallers.flatMap((t) => ['metis', 'techne'].map((agent) => stall(c!.url, t, agent, 64 * 1024 * 1024, '{"base'))),
    );
    // Wait until the council has taken every upload it will (some of the 8 may be refused at once).
    for (let i = 0; i < 200 && c.server.uploadsInFlight() + held.filter((h) => h.socket.destroyed).length < 8; i++)
      await new Promise((r) => setTimeout(r, 10));
    const t0 = Date.now();
    const r = await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', honest, body(update(1)));
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    expect(Date.now() - t0).toBeLessThan(2000);
    // A second honest forge too.
    const r2 = await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', await c.token('sparta'), body(update(2)));
    expect(r2.status, JSON.stringify(r2.json)).toBe(201);
  });

  it('a stalled upload declaring 64 MiB is cut after the grace, not after its declared size’s time (virtual clock)', async () => {
    const clock = new VirtualClock(Date.UTC(2026, 0, 1));
    c = await startTestCouncil({ max_in_flight: 1, upload_grace: 10, upload_rate: 128 * 1024 }, undefined, clock);
    const t = await c.token('athens');
    const s = await stall(c.url, t, 'metis', 64 * 1024 * 1024, '{"base');
    while (c.server.uploadsInFlight() === 0) await new Promise((r) => setImmediate(r));
    clock.advance(10_000 - 1);
    expect(c.server.uploadsInFlight()).toBe(1);
    clock.advance(100); // the headers and the few body bytes that came buy a couple of milliseconds, not 512 s
    expect(await s.response).toMatch(/^HTTP\/1\.1 408[\s\S]*"code":"request_timeout"[\s\S]*stopped arriving/);
    while (c.server.uploadsInFlight() > 0) await new Promise((r) => setImmediate(r));
    expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(update(1)))).status).toBe(201);
  });
});
