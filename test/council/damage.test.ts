import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AdapterSchema, RoundStatusSchema } from '../../src/protocol/wire.js';
import { f32FromBase64, toLE } from '../../src/tensor/float-codec.js';
import { body, call, startTestCouncil, update, type TestCouncil } from './helpers.js';

let c: TestCouncil | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

describe('stored updates carry digests, verified before aggregation (issue 12, item 4)', () => {
  it('64 overwritten bytes of one stored update: that update is left out, loudly, and the aggregate is the mean of the others', async () => {
    c = await startTestCouncil({ min_forges: 3, strategy: 'fedavg' });
    const names = ['athens', 'sparta', 'thebes'];
    const tokens = await Promise.all(names.map((n) => c!.token(n)));
    const ups = names.map((_, i) => update(70 + i));
    for (const [i, t] of tokens.entries()) expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(ups[i]!))).status).toBe(201);
    const dir = c.dir;
    await c.server.close();
    // Overwrite 64 bytes of sparta's stored data, in place, inside council.db.
    const path = join(dir, 'council', 'council.db');
    const needle = toLE(ups[1]![0]!.data);
    const at = readFileSync(path).indexOf(needle);
    expect(at).toBeGreaterThan(0);
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(64, 0x41), 0, 64, at + 8);
    closeSync(fd);

    const restarted = await startTestCouncil({ min_forges: 3, strategy: 'fedavg' }, dir);
    c = restarted;
    for (const t of tokens) await call(c.url, 'POST', '/v1/rounds/1/seal', t, {});
    await c.server.council.idle();
    const s = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/1', tokens[0]!)).json);
    expect(s.outcomes).toEqual([{ agent: 'metis', updates: 2, aggregated: true, skipped_reason: null, used: 2, yours_used: true }]);
    expect(c.logs.some((l) => /metis: the stored update of forge "sparta" does not match its digest/.test(l))).toBe(true);
    const events = await c.server.storage.events(20);
    expect(events.filter((e) => e.kind === 'update_damaged').map((e) => JSON.parse(e.detailJson))).toEqual([{ agent: 'metis', forges: ['sparta'] }]);
    const agg = AdapterSchema.parse((await call(c.url, 'GET', '/v1/rounds/1/aggregate/metis', tokens[0]!)).json);
    // round 0 (the public initialisation) + the mean of the two intact updates
    const base = AdapterSchema.parse((await call(c.url, 'GET', '/v1/rounds/0/aggregate/metis', tokens[0]!)).json).tensors.map((t) => f32FromBase64(t.data));
    agg.tensors.forEach((t, ti) => f32FromBase64(t.data).forEach((x, k) => expect(x).toBeCloseTo(base[ti]![k]! + (ups[0]![ti]!.data[k]! + ups[2]![ti]!.data[k]!) / 2, 6)));
  });

  it('a damaged stored global is never served (503, not wrong numbers)', async () => {
    c = await startTestCouncil({ min_forges: 1, strategy: 'fedavg' });
    const t = await c.token('athens');
    const u = update(5);
    await call(c.url, 'PUT', '/v1/rounds/1/updates/kallos', t, body(u));
    await call(c.url, 'POST', '/v1/rounds/1/seal', t, {});
    await c.server.council.idle();
    expect((await call(c.url, 'GET', '/v1/global/kallos', t)).status).toBe(200);
    const dir = c.dir;
    await c.server.close();
    const path = join(dir, 'council', 'council.db');
    const bytes = readFileSync(path);
    // The global equals the one update (FedAvg of one): its bytes appear twice (update and global); damage the last.
    const needle = toLE(u[1]!.data);
    const at = bytes.lastIndexOf(needle);
    expect(at).toBeGreaterThan(bytes.indexOf(needle));
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(8, 0x7f), 0, 8, at);
    closeSync(fd);
    c = await startTestCouncil({ min_forges: 1, strategy: 'fedavg' }, dir);
    const r = await call(c.url, 'GET', '/v1/global/kallos', t);
    expect(r.status).toBe(503);
    expect(r.json.error).toMatchObject({ code: 'unavailable', message: expect.stringMatching(/kallos global from round 1 does not match its digest/) });
  });
});
