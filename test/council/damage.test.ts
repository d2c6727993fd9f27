import { SERVER_LR } from '../../src/council/config.js';
import { closeSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AdapterSchema, RoundStatusSchema } from '../../src/protocol/wire.js';
import { f32FromBase64, toLE } from '../../src/tensor/float-codec.js';
import { body, call, startTestCouncil, update, type TestCouncil, BACKENDS, pgQuery, useBackend } from './helpers.js';

let c: TestCouncil | undefined;
afterEach(async () => {
  await c?.close();
  c = undefined;
});

for (const backend of BACKENDS) {
  describe(`on ${backend}`, () => {
    useBackend(backend);

    describe('stored updates carry digests, verified before aggregation', () => {
      it('64 overwritten bytes of one stored update: that update is left out, loudly, and the aggregate is the mean of the others', async () => {
        c = await startTestCouncil({ min_forges: 3, strategy: 'fedavg' });
        const names = ['athens', 'sparta', 'thebes'];
        const tokens = await Promise.all(names.map((n) => c!.token(n)));
        const ups = names.map((_, i) => update(70 + i));
        for (const [i, t] of tokens.entries())
          expect((await call(c.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(ups[i]!))).status).toBe(201);
        const dir = c.dir;
        await c.server.close();
        const database = c.config.database;
        if (database) {
          // Overwrite 64 bytes of sparta's stored data, in place, in its chunk row.
          await pgQuery(
            database,
            "UPDATE submission_chunks SET data = overlay(data placing $1 from 9) WHERE chunk = 0 AND submission_id = (SELECT s.id FROM submissions s JOIN forges f ON f.id = s.forge_id WHERE f.name = 'sparta')",
            [Buffer.alloc(64, 0x41)],
          );
        } else {
          // Overwrite 64 bytes of sparta's stored data, in place, inside council.db.
          const path = join(dir, 'council', 'council.db');
          const needle = toLE(ups[1]![0]!.data);
          const at = readFileSync(path).indexOf(needle);
          expect(at).toBeGreaterThan(0);
          const fd = openSync(path, 'r+');
          writeSync(fd, Buffer.alloc(64, 0x41), 0, 64, at + 8);
          closeSync(fd);
        }

        const restarted = await startTestCouncil({ min_forges: 3, strategy: 'fedavg', database }, dir);
        c = restarted;
        for (const t of tokens) await call(c.url, 'POST', '/v1/rounds/1/seal', t, {});
        await c.server.council.idle();
        const s = RoundStatusSchema.parse((await call(c.url, 'GET', '/v1/rounds/1', tokens[0]!)).json);
        expect(s.outcomes).toEqual([
          { agent: 'metis', updates: 2, aggregated: true, skipped_reason: null, used: 2, yours_used: true },
        ]);
        expect(c.logs.some((l) => /metis: the stored update of forge "sparta" does not match its digest/.test(l))).toBe(
          true,
        );
        const events = await c.server.storage.events(20);
        expect(events.filter((e) => e.kind === 'update_damaged').map((e) => JSON.parse(e.detailJson))).toEqual([
          { agent: 'metis', forges: ['sparta'] },
        ]);
        const agg = AdapterSchema.parse((await call(c.url, 'GET', '/v1/rounds/1/aggregate/metis', tokens[0]!)).json);
        // round 0 (the public initialisation) + the server step × the mean of the two intact updates
        const base = AdapterSchema.parse(
          (await call(c.url, 'GET', '/v1/rounds/0/aggregate/metis', tokens[0]!)).json,
        ).tensors.map((t) => f32FromBase64(t.data));
        agg.tensors.forEach((t, ti) =>
          f32FromBase64(t.data).forEach((x, k) =>
            expect(x).toBeCloseTo(base[ti]![k]! + (SERVER_LR * (ups[0]![ti]!.data[k]! + ups[2]![ti]!.data[k]!)) / 2, 6),
          ),
        );
      });

      it('a damaged stored global is never served (503, not wrong numbers)', async () => {
        // A server step of 1: the global's B factor is then the update's, byte for byte.
        c = await startTestCouncil({ min_forges: 1, strategy: 'fedavg', server_lr: 1 });
        const t = await c.token('athens');
        const u = update(5);
        await call(c.url, 'PUT', '/v1/rounds/1/updates/kallos', t, body(u));
        await call(c.url, 'POST', '/v1/rounds/1/seal', t, {});
        await c.server.council.idle();
        expect((await call(c.url, 'GET', '/v1/global/kallos', t)).status).toBe(200);
        const dir = c.dir;
        await c.server.close();
        const database = c.config.database;
        if (database) {
          await pgQuery(
            database,
            "UPDATE aggregate_chunks SET data = overlay(data placing $1 from 1) WHERE round = 1 AND agent = 'kallos' AND chunk = 0",
            [Buffer.alloc(8, 0x7f)],
          );
        } else {
          const path = join(dir, 'council', 'council.db');
          const bytes = readFileSync(path);
          // The global equals the one update (FedAvg of one): its bytes appear twice in council.db (update and global); damage the last.
          const needle = toLE(u[1]!.data);
          const at = bytes.lastIndexOf(needle);
          expect(at).toBeGreaterThan(bytes.indexOf(needle));
          const fd = openSync(path, 'r+');
          writeSync(fd, Buffer.alloc(8, 0x7f), 0, 8, at);
          closeSync(fd);
        }
        c = await startTestCouncil({ min_forges: 1, strategy: 'fedavg', server_lr: 1, database }, dir);
        const r = await call(c.url, 'GET', '/v1/global/kallos', t);
        expect(r.status).toBe(503);
        expect(r.json.error).toMatchObject({
          code: 'unavailable',
          message: expect.stringMatching(/kallos global from round 1 does not match its digest/),
        });
      });
    });
  });
}
