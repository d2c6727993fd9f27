import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdapterSchema, HealthSchema, RoundStatusSchema } from '../../src/protocol/wire.js';
import { body, call, FINGERPRINT, SPECS, update } from '../council/helpers.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { freshDatabase, postgres, type PgCluster } from '../helpers/postgres.js';
import { BIN, kourai } from './run-bin.js';
import { PG_SCHEMA_VERSION } from '../../src/council/pg-schema.js';

/**
 * The operator's recipe with the real binary: `council migrate`, forges added with --database,
 * two `council serve --database` processes on one PostgreSQL, forges joining through either, and
 * kill -9 of the process aggregating a round: the other takes over when the lease runs out, the
 * round is aggregated once, and its aggregate is the one an undisturbed council computes.
 */
let home: string;
let cluster: PgCluster | null = null;
let reason = '';
beforeAll(async () => {
  home = tempDir('kourai-council-pg-e2e-');
  const c = await postgres();
  if ('reason' in c) reason = `PostgreSQL could not start: ${c.reason}`;
  else cluster = c;
}, 180_000);
afterAll(() => removeDir(home));

interface Serving {
  proc: ChildProcess;
  url: string;
  stderr: () => string;
}

const LEASE = '2s';
// Long enough that the kill lands mid-aggregation, short enough for the suite.
const ARGS = [
  '--base-fingerprint',
  FINGERPRINT,
  '--layouts',
  JSON.stringify({ '*': SPECS }),
  '--noise-multiplier',
  '0..10',
  '--min-forges',
  '3',
  '--strategy',
  'lora-fair',
  '--lora-fair-steps',
  '300000',
  '--aggregation-lease',
  LEASE,
  '--threads',
  '1',
];

function serve(database: string): Promise<Serving> {
  const proc = spawn(
    process.execPath,
    [BIN, 'council', 'serve', '--port', '0', '--database', database, '--json', ...ARGS],
    {
      env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home, CI: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  proc.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    const lines = createInterface({ input: proc.stdout as NodeJS.ReadableStream });
    lines.once('line', (line) => resolve({ proc, url: (JSON.parse(line) as { url: string }).url, stderr: () => err }));
    proc.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}

function exited(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((r) => p.once('exit', () => r()));
}

async function council(): Promise<{ database: string; tokens: string[] }> {
  const database = await freshDatabase(cluster as PgCluster, 'e2e');
  // Not migrated: serve refuses, naming the command.
  const refused = kourai(['council', 'forge', 'add', 'athens', '--database', database, '--json'], { home });
  expect(refused.code, refused.stderr).toBe(3);
  expect(refused.stderr).toContain(`schema version 0, this kourai needs ${PG_SCHEMA_VERSION}`);
  expect(refused.stderr).toMatch(/kourai council migrate --database/);
  const m = kourai(['council', 'migrate', '--database', database, '--json'], { home });
  expect(m.code, m.stderr).toBe(0);
  expect(JSON.parse(m.stdout)).toMatchObject({ backend: 'postgres', from_version: 0, to_version: PG_SCHEMA_VERSION });
  const tokens = ['athens', 'sparta', 'thebes'].map((n) => {
    const r = kourai(['council', 'forge', 'add', n, '--database', database, '--json'], { home });
    expect(r.code, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { token: string }).token;
  });
  return { database, tokens };
}

async function submitAll(urls: string[], tokens: string[]): Promise<void> {
  for (const [i, t] of tokens.entries()) {
    const url = urls[i % urls.length] as string;
    for (const [a, agent] of ['metis', 'kallos'].entries())
      expect((await call(url, 'PUT', `/v1/rounds/1/updates/${agent}`, t, body(update(i * 10 + a)))).status).toBe(201);
  }
  for (const [i, t] of tokens.entries())
    expect((await call(urls[(i + 1) % urls.length] as string, 'POST', '/v1/rounds/1/seal', t, {})).status).toBe(200);
}

async function aggregated(url: string, token: string, ms = 120_000): Promise<void> {
  const end = Date.now() + ms;
  while (RoundStatusSchema.parse((await call(url, 'GET', '/v1/rounds/1', token)).json).state !== 'aggregated') {
    if (Date.now() > end) throw new Error('round 1 was not aggregated in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('kourai council on PostgreSQL (the real binary, two processes)', () => {
  it(
    'kill -9 of the process aggregating a round: the other takes over after the lease; aggregated once, equal to an undisturbed run',
    { timeout: 240_000 },
    async (ctx) => {
      if (!cluster) return ctx.skip(true, reason);
      // The undisturbed run.
      const calm = await council();
      const c1 = await serve(calm.database);
      await submitAll([c1.url], calm.tokens);
      await aggregated(c1.url, calm.tokens[0]!);
      const want = await Promise.all(
        ['metis', 'kallos'].map(
          async (agent) =>
            AdapterSchema.parse((await call(c1.url, 'GET', `/v1/rounds/1/aggregate/${agent}`, calm.tokens[0]!)).json)
              .digest,
        ),
      );
      c1.proc.kill('SIGTERM');
      await exited(c1.proc);

      // Two processes; forges go through both; the aggregator is killed mid-aggregation.
      const hard = await council();
      const a = await serve(hard.database);
      const b = await serve(hard.database);
      try {
        await submitAll([a.url, b.url], hard.tokens);
        // Who aggregates is observed, not assumed: the process whose health says so.
        let victim: Serving | null = null;
        const end = Date.now() + 60_000;
        while (!victim && Date.now() < end) {
          for (const s of [a, b]) {
            const h = HealthSchema.parse((await call(s.url, 'GET', '/v1/health', null)).json);
            if (h.process?.role === 'aggregating round 1') victim = s;
          }
        }
        expect(victim, 'one process was seen aggregating round 1').not.toBeNull();
        const survivor = victim === a ? b : a;
        victim!.proc.kill('SIGKILL');
        await exited(victim!.proc);
        expect(
          RoundStatusSchema.parse((await call(survivor.url, 'GET', '/v1/rounds/1', hard.tokens[0]!)).json).state,
          'killed mid-aggregation',
        ).toBe('closing');
        await aggregated(survivor.url, hard.tokens[0]!);
        const got = await Promise.all(
          ['metis', 'kallos'].map(
            async (agent) =>
              AdapterSchema.parse(
                (await call(survivor.url, 'GET', `/v1/rounds/1/aggregate/${agent}`, hard.tokens[0]!)).json,
              ).digest,
          ),
        );
        expect(got).toEqual(want);
        expect(survivor.stderr()).toMatch(/round 1 aggregated/);
        const status = kourai(['council', 'status', '--database', hard.database, '--json'], { home });
        expect(status.code, status.stderr).toBe(0);
        const s = JSON.parse(status.stdout) as {
          round: { round: number; state: string };
          processes: { stale: boolean }[];
        };
        expect(s.round).toMatchObject({ round: 2, state: 'open' });
        expect(s.processes.length).toBe(2);
        const rounds = JSON.parse(
          kourai(['council', 'rounds', '--database', hard.database, '--json'], { home }).stdout,
        ) as { rounds: { round: number; state: string }[] };
        expect(rounds.rounds.map((r) => [r.round, r.state])).toEqual([
          [2, 'open'],
          [1, 'aggregated'],
        ]);
      } finally {
        a.proc.kill('SIGKILL');
        b.proc.kill('SIGKILL');
      }
    },
  );
});
