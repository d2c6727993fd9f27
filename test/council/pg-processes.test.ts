import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { defaults, type CouncilConfig } from '../../src/council/config.js';
import { addForge, revokeForge } from '../../src/council/forges.js';
import { PG_MIGRATIONS, PG_SCHEMA_VERSION } from '../../src/council/pg-schema.js';
import { PgCouncilStorage } from '../../src/council/pg-storage.js';
import { startCouncilServer, type CouncilServer } from '../../src/council/server.js';
import { ExitCode } from '../../src/errors.js';
import { AdapterSchema, HealthSchema, RoundStatusSchema } from '../../src/protocol/wire.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { freshDatabase, postgres, privateCluster, type PgCluster } from '../helpers/postgres.js';
import { body, call, FINGERPRINT, pgQuery, SPECS, update } from './helpers.js';

/**
 * Several council processes on one PostgreSQL database (here: several servers in one test
 * process, each with its own pool, process id and timers, as separate processes would have; the
 * kill -9 of a real process is in test/e2e/council-pg.e2e.test.ts and the council-scale bench).
 */
let cluster: PgCluster | null = null;
let reason = '';
beforeAll(async () => {
  const c = await postgres();
  if ('reason' in c) reason = `PostgreSQL could not start: ${c.reason}`;
  else cluster = c;
}, 180_000);

const opened: { server: CouncilServer; dir: string }[] = [];
afterEach(async () => {
  for (const o of opened.splice(0)) {
    await o.server.close().catch(() => undefined);
    removeDir(o.dir);
  }
});

async function migrated(): Promise<string> {
  const url = await freshDatabase(cluster as PgCluster, 'procs');
  const s = await PgCouncilStorage.open(url, { anySchema: true, max: 1 });
  await s.migrate();
  await s.close();
  return url;
}

function configFor(database: string, over: Partial<CouncilConfig> = {}): CouncilConfig {
  const dir = tempDir('kourai-procs-');
  return {
    ...defaults(dir),
    data_dir: join(dir, 'council'),
    port: 0,
    base_fingerprints: [FINGERPRINT],
    strategy: 'fedavg',
    min_forges: 4,
    layouts: { '*': SPECS },
    noise_multiplier: { min: 0, max: 10 },
    database,
    ...over,
  };
}

async function serve(config: CouncilConfig, processId: string): Promise<CouncilServer & { logs: string[] }> {
  const logs: string[] = [];
  const server = await startCouncilServer({ config, log: (l) => logs.push(l), processId, aggregation: 'thread' });
  opened.push({ server, dir: join(config.data_dir, '..') });
  return Object.assign(server, { logs });
}

async function until(what: string, check: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('several council processes on one PostgreSQL database', () => {
  it('forges use either process; the round closes and is aggregated exactly once, byte-identical to a single SQLite process', async (ctx) => {
    if (!cluster) return ctx.skip(true, reason);
    void ctx.annotate(
      'two council processes on one PostgreSQL database aggregated a round once, byte-identical to SQLite',
      'proof',
    );
    const url = await migrated();
    const a = await serve(configFor(url), 'proc-a');
    const b = await serve(configFor(url), 'proc-b');
    const names = ['athens', 'sparta', 'thebes', 'argos'];
    const tokens: string[] = [];
    for (const n of names) tokens.push((await addForge(a.storage, n, randomBytes, new Date())).token);
    // Every forge uploads through one process and seals through the other.
    for (const [i, t] of tokens.entries()) {
      const up = i % 2 ? a : b;
      expect((await call(up.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(update(300 + i)))).status).toBe(201);
      expect((await call(up.url, 'PUT', '/v1/rounds/1/updates/kallos', t, body(update(400 + i)))).status).toBe(201);
    }
    await Promise.all(tokens.map((t, i) => call((i % 2 ? b : a).url, 'POST', '/v1/rounds/1/seal', t, {})));
    await until(
      'round 1 is aggregated',
      async () =>
        RoundStatusSchema.parse((await call(a.url, 'GET', '/v1/rounds/1', tokens[0]!)).json).state === 'aggregated',
    );
    await Promise.all([a.council.idle(), b.council.idle()]);
    const events = await a.storage.events(100);
    expect(events.filter((e) => e.kind === 'round_aggregated' && e.round === 1)).toHaveLength(1);
    expect(events.filter((e) => e.kind === 'round_closed' && e.round === 1)).toHaveLength(1);
    expect((await a.storage.aggregatesOf(1)).map((x) => x.agent)).toEqual(['kallos', 'metis']);
    expect((await b.storage.latestRound())?.round).toBe(2);
    const pgDigests = await Promise.all(
      ['metis', 'kallos'].map(async (agent) =>
        AdapterSchema.parse((await call(b.url, 'GET', `/v1/rounds/1/aggregate/${agent}`, tokens[1]!)).json),
      ),
    );

    // The same submissions to one SQLite council.
    const single = await startCouncilServer({
      config: { ...configFor(url), database: null },
      log: () => undefined,
      aggregation: 'thread',
    });
    opened.push({ server: single, dir: tempDir('kourai-procs-unused-') });
    const sTokens: string[] = [];
    for (const n of names) sTokens.push((await addForge(single.storage, n, randomBytes, new Date())).token);
    for (const [i, t] of sTokens.entries()) {
      await call(single.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(update(300 + i)));
      await call(single.url, 'PUT', '/v1/rounds/1/updates/kallos', t, body(update(400 + i)));
      await call(single.url, 'POST', '/v1/rounds/1/seal', t, {});
    }
    await single.council.idle();
    for (const [i, agent] of ['metis', 'kallos'].entries()) {
      const s = AdapterSchema.parse(
        (await call(single.url, 'GET', `/v1/rounds/1/aggregate/${agent}`, sTokens[0]!)).json,
      );
      expect(pgDigests[i]?.digest).toBe(s.digest);
      expect(pgDigests[i]?.tensors).toEqual(s.tensors);
    }
    // Health names the backend and the process.
    const h = HealthSchema.parse((await call(b.url, 'GET', '/v1/health', null)).json);
    expect(h).toMatchObject({
      database: { backend: 'postgres', ok: true },
      process: { id: 'proc-b', role: 'serving' },
    });
    expect((await a.storage.processes(new Date(Date.now() - 60_000).toISOString())).map((p) => p.id).sort()).toEqual([
      'proc-a',
      'proc-b',
    ]);
  });

  it('a claimer that dies (its lease runs out) loses the round to another process, which aggregates it once', async (ctx) => {
    if (!cluster) return ctx.skip(true, reason);
    const url = await migrated();
    const a = await serve(configFor(url, { min_forges: 2, aggregation_lease: 2 }), 'proc-a');
    const tokens: string[] = [];
    for (const n of ['athens', 'sparta']) tokens.push((await addForge(a.storage, n, randomBytes, new Date())).token);
    for (const [i, t] of tokens.entries())
      expect((await call(a.url, 'PUT', '/v1/rounds/1/updates/metis', t, body(update(10 + i)))).status).toBe(201);
    // A process claimed the round and died: stop this one from aggregating (as if it were that one), close, claim as a ghost.
    await a.close();
    opened.length = 0;
    const storage = await PgCouncilStorage.open(url);
    await storage.closeRound(1, new Date().toISOString(), 'min_forges');
    const t0 = Date.now();
    expect(await storage.claimRound(1, 'ghost', new Date().toISOString(), new Date(t0 + 2000).toISOString())).toBe(
      true,
    );
    await storage.close();
    const b = await serve(configFor(url, { min_forges: 2, aggregation_lease: 2 }), 'proc-b');
    // While the ghost's lease runs, b leaves the round alone.
    expect((await b.storage.round(1))?.state).toBe('closing');
    await until(
      'round 1 is aggregated by proc-b',
      async () => (await b.storage.round(1))?.state === 'aggregated',
      15_000,
    );
    expect(Date.now() - t0).toBeGreaterThanOrEqual(2000);
    const events = await b.storage.events(50);
    expect(
      events
        .filter((e) => e.kind === 'aggregation_taken_over')
        .map((e) => JSON.parse(e.detailJson) as { from: string; to: string }),
    ).toMatchObject([{ from: 'ghost', to: 'proc-b' }]);
    expect(events.filter((e) => e.kind === 'round_aggregated')).toHaveLength(1);
  });

  it('a revoked token is refused by every process at once (each request reads the database)', async (ctx) => {
    if (!cluster) return ctx.skip(true, reason);
    const url = await migrated();
    const a = await serve(configFor(url), 'proc-a');
    const b = await serve(configFor(url), 'proc-b');
    const { token } = await addForge(a.storage, 'athens', randomBytes, new Date());
    expect((await call(b.url, 'GET', '/v1/me', token)).status).toBe(200);
    await revokeForge(a.storage, 'athens', new Date());
    for (const s of [a, b]) expect((await call(s.url, 'GET', '/v1/me', token)).json.error.code).toBe('forge_revoked');
  });

  it('a second council of other settings or layouts on the same database refuses to start (exit 7)', async (ctx) => {
    if (!cluster) return ctx.skip(true, reason);
    const url = await migrated();
    await serve(configFor(url), 'proc-a');
    await expect(serve(configFor(url, { strategy: 'median' }), 'proc-b')).rejects.toMatchObject({
      exitCode: ExitCode.conflict,
      message: expect.stringMatching(
        /another council process \(proc-a at http:\/\/127\.0\.0\.1:\d+\) serves this database with other settings: round differ/,
      ),
    });
    await expect(
      serve(configFor(url, { layouts: { '*': [{ name: 'x', shape: [2, 2] }] } }), 'proc-c'),
    ).rejects.toMatchObject({ exitCode: ExitCode.conflict });
  });

  it('bad databases: a wrong password, an unmigrated and a newer schema are one-line errors with exit 3', async (ctx) => {
    if (!cluster) return ctx.skip(true, reason);
    const url = await freshDatabase(cluster, 'bad');
    const wrong = url.replace(`:${cluster.password}@`, ':not-the-password@');
    const e1 = (await PgCouncilStorage.open(wrong).catch((e: unknown) => e)) as Error & {
      exitCode: number;
      hint: string;
    };
    expect(e1).toMatchObject({
      exitCode: ExitCode.environment,
      message: expect.stringMatching(
        /^cannot connect to the council database postgres:\/\/kourai:\*\*\*@127\.0\.0\.1:\d+\/bad_\w+: password authentication failed/,
      ),
    });
    expect(e1.message).not.toContain('\n');
    expect(e1.message).not.toContain('not-the-password');
    const e2 = await PgCouncilStorage.open(url).catch((e: unknown) => e as Error & { exitCode: number; hint: string });
    expect(e2).toMatchObject({
      exitCode: ExitCode.environment,
      message: `council database ${url.replace(`:${cluster.password}@`, ':***@')} has schema version 0, this kourai needs ${PG_SCHEMA_VERSION}`,
      hint: expect.stringMatching(/kourai council migrate --database/),
    });
    const s = await PgCouncilStorage.open(url, { anySchema: true });
    await s.migrate();
    await s.close();
    await pgQuery(url, "INSERT INTO kourai_schema (version, applied_at) VALUES (99, 'later')");
    const e3 = await PgCouncilStorage.open(url).catch((e: unknown) => e as Error & { exitCode: number });
    expect(e3).toMatchObject({
      exitCode: ExitCode.environment,
      message: expect.stringContaining(
        `has schema version 99, newer than this kourai understands (${PG_SCHEMA_VERSION})`,
      ),
    });
  });

  it("a database of schema 1 migrates to 2: an update's chunks may be written before its row, checked at commit", async (ctx) => {
    if (!cluster) return ctx.skip(true, reason);
    const url = await freshDatabase(cluster, 'old');
    await pgQuery(url, 'CREATE TABLE kourai_schema (version integer PRIMARY KEY, applied_at text NOT NULL)');
    await pgQuery(url, PG_MIGRATIONS.find((m) => m.version === 1)!.up);
    await pgQuery(url, "INSERT INTO kourai_schema (version, applied_at) VALUES (1, 'earlier')");
    const s = await PgCouncilStorage.open(url, { anySchema: true });
    try {
      expect(await s.migrate()).toEqual({ from: 1, to: PG_SCHEMA_VERSION });
      const pool = (s as unknown as { pool: { query(q: string): Promise<{ rows: unknown[] }> } }).pool;
      const r = await pool.query(
        "SELECT condeferrable, condeferred FROM pg_constraint WHERE conname = 'submission_chunks_submission_id_fkey'",
      );
      expect(r.rows).toEqual([{ condeferrable: true, condeferred: true }]);
    } finally {
      await s.close();
    }
  });

  it(
    'a database that goes away mid-round: 503 meanwhile, then it recovers, and no acknowledged submission is lost',
    { timeout: 120_000 },
    async (ctx) => {
      if (!cluster) return ctx.skip(true, reason);
      const own = await privateCluster();
      if ('reason' in own) return ctx.skip(true, `PostgreSQL could not start: ${own.reason}`);
      try {
        const dbUrl = await freshDatabase(own, 'away');
        const m = await PgCouncilStorage.open(dbUrl, { anySchema: true, max: 1 });
        await m.migrate();
        await m.close();
        const a = await serve(configFor(dbUrl, { min_forges: 3 }), 'proc-a');
        const tokens: string[] = [];
        for (const n of ['athens', 'sparta', 'thebes'])
          tokens.push((await addForge(a.storage, n, randomBytes, new Date())).token);
        const first = await call(a.url, 'PUT', '/v1/rounds/1/updates/metis', tokens[0]!, body(update(1)));
        expect(first.status).toBe(201);
        own.stop();
        const down = await call(a.url, 'PUT', '/v1/rounds/1/updates/metis', tokens[1]!, body(update(2)));
        expect(down.status).toBe(503);
        expect(down.json.error).toMatchObject({ code: 'unavailable' });
        expect(down.headers.get('retry-after')).toBe('5');
        expect((await call(a.url, 'GET', '/v1/health', null)).status).toBe(503);
        own.start();
        await until(
          'the council answers again',
          async () => (await call(a.url, 'GET', '/v1/health', null)).status === 200,
        );
        // The acknowledged one is kept (a retry is a replay, 200), the refused one is accepted now.
        const again = await call(a.url, 'PUT', '/v1/rounds/1/updates/metis', tokens[0]!, body(update(1)));
        expect(again.status).toBe(200);
        expect(again.json).toEqual(first.json);
        expect((await call(a.url, 'PUT', '/v1/rounds/1/updates/metis', tokens[1]!, body(update(2)))).status).toBe(201);
        expect((await call(a.url, 'PUT', '/v1/rounds/1/updates/metis', tokens[2]!, body(update(3)))).status).toBe(201);
        for (const t of tokens) await call(a.url, 'POST', '/v1/rounds/1/seal', t, {});
        await until('round 1 is aggregated', async () => (await a.storage.round(1))?.state === 'aggregated');
      } finally {
        for (const o of opened.splice(0)) await o.server.close().catch(() => undefined);
        own.destroy();
      }
    },
  );
});
