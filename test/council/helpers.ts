import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { defaults, type CouncilConfig } from '../../src/council/config.js';
import { addForge } from '../../src/council/forges.js';
import { startCouncilServer, type CouncilServer } from '../../src/council/server.js';
import { f32ToBase64 } from '../../src/tensor/float-codec.js';
import { PROTOCOL_HEADER, PROTOCOL_VERSION, type Submission } from '../../src/protocol/wire.js';
import type { Clock } from '../../src/runtime/clock.js';
import { gaussian, rng } from '../aggregation/helpers.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { freshDatabase, postgres } from '../helpers/postgres.js';
import { randomBytes } from 'node:crypto';
import { beforeAll, beforeEach } from 'vitest';
import type { CouncilStorage } from '../../src/council/storage.js';

export const FINGERPRINT = 'sha256:base-model-test';
export const SPECS = [
  { name: 'layers.0.q_proj.lora_A.weight', shape: [2, 8] },
  { name: 'layers.0.q_proj.lora_B.weight', shape: [6, 2] },
];
export const COORDS = 28;

export interface TestCouncil {
  server: CouncilServer;
  dir: string;
  config: CouncilConfig;
  logs: string[];
  url: string;
  token(name: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * Every council test runs on both storage backends (so the two cannot drift): a test file wraps
 * its suites in `for (const backend of BACKENDS) describe(backend, () => { useBackend(backend); … })`.
 * On PostgreSQL each test council gets a fresh, migrated database in the run's throw-away cluster
 * (test/helpers/postgres.ts); when PostgreSQL cannot start, those tests skip loudly with the reason.
 */
export type Backend = 'sqlite' | 'postgres';
export const BACKENDS: readonly Backend[] = ['sqlite', 'postgres'];

let backend: Backend = 'sqlite';
let pgUrl: (() => Promise<string>) | null = null;

export function useBackend(b: Backend): void {
  let reason: string | null = null;
  beforeAll(async () => {
    if (b !== 'postgres') return;
    const cluster = await postgres();
    if ('reason' in cluster) reason = `PostgreSQL could not start: ${cluster.reason}`;
    else pgUrl = () => freshDatabase(cluster, 'council');
  }, 180_000);
  beforeEach((ctx) => {
    backend = b;
    if (reason) ctx.skip(true, reason);
  });
}

export function currentBackend(): Backend {
  return backend;
}

/** A migrated, empty council database of the current backend (null: SQLite in data_dir). */
export async function testDatabase(): Promise<string | null> {
  if (backend === 'sqlite') return null;
  if (!pgUrl) throw new Error('useBackend("postgres") found no cluster');
  const url = await pgUrl();
  const { PgCouncilStorage } = await import('../../src/council/pg-storage.js');
  const s = await PgCouncilStorage.open(url, { anySchema: true, max: 1 });
  await s.migrate();
  await s.close();
  return url;
}

/** Runs one SQL statement against a test council's storage, whichever the backend (tests that tamper with state). */
export async function rawSql(storage: CouncilStorage, sql: string, params: unknown[] = []): Promise<void> {
  if (storage.info().backend === 'sqlite') {
    (storage as unknown as { db: { prepare(s: string): { run(...a: unknown[]): void } } }).db
      .prepare(sql)
      .run(...params);
    return;
  }
  const pool = (storage as unknown as { pool: { query(s: string, p: unknown[]): Promise<unknown> } }).pool;
  await pool.query(
    sql.replace(
      /\?/g,
      (() => {
        let i = 0;
        return () => `$${++i}`;
      })(),
    ),
    params,
  );
}

/** One statement on a PostgreSQL database by its URL (the council's own pool may be closed). */
export async function pgQuery(url: string, sql: string, params: unknown[] = []): Promise<void> {
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql, params);
  } finally {
    await client.end();
  }
}

/** The council configuration the tests share: FedAvg over the test layouts, three forges to close a round early. */
export function testConfig(dir: string, over: Partial<CouncilConfig> = {}): CouncilConfig {
  return {
    ...defaults(dir),
    data_dir: join(dir, 'council'),
    base_fingerprints: [FINGERPRINT],
    strategy: 'fedavg',
    min_forges: 3,
    layouts: { '*': SPECS },
    noise_multiplier: { min: 0, max: 10 },
    ...over,
  };
}

export async function startTestCouncil(
  over: Partial<CouncilConfig> = {},
  dir = tempDir('kourai-council-'),
  clock?: Clock,
): Promise<TestCouncil> {
  const database = over.database !== undefined ? over.database : await testDatabase();
  const config = testConfig(dir, { port: 0, ...over, database });
  const logs: string[] = [];
  const server = await startCouncilServer({ config, log: (l) => logs.push(l), ...(clock ? { clock } : {}) });
  return {
    server,
    dir,
    config,
    logs,
    url: server.url,
    token: async (name) => (await addForge(server.storage, name, randomBytes, new Date())).token,
    close: async () => {
      await server.close();
      removeDir(dir);
    },
  };
}

/** A small update: values ~ N(centre, spread²) per coordinate, seeded. */
export function update(
  seed: number,
  opts: { centre?: number; spread?: number; specs?: typeof SPECS } = {},
): { name: string; shape: number[]; data: Float32Array }[] {
  const rand = rng(seed);
  return (opts.specs ?? SPECS).map((s) => {
    const n = s.shape.reduce((a, b) => a * b, 1);
    return {
      name: s.name,
      shape: s.shape,
      data: Float32Array.from({ length: n }, () => (opts.centre ?? 0) + (opts.spread ?? 0.05) * gaussian(rand)),
    };
  });
}

export function body(
  tensors: { name: string; shape: number[]; data: Float32Array }[],
  over: Partial<Submission> = {},
): Submission {
  return {
    base_fingerprint: FINGERPRINT,
    privacy: { clip_norm: 1, noise_multiplier: 0 },
    tensors: tensors.map((t) => ({ name: t.name, shape: t.shape, dtype: 'F32', data: f32ToBase64(t.data) })),
    ...over,
  };
}

export async function call(
  url: string,
  method: string,
  route: string,
  token: string | null,
  payload?: unknown,
): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(`${url}${route}`, {
    method,
    headers: {
      [PROTOCOL_HEADER]: String(PROTOCOL_VERSION),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(payload !== undefined ? { body: typeof payload === 'string' ? payload : JSON.stringify(payload) } : {}),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json, headers: res.headers };
}

/**
 * An HTTP relay in front of a council that records each request's Kourai-Protocol header and, with
 * `rewrite`, replaces it — a forge of another protocol version, from a real client or binary.
 */
export async function protocolRelay(
  target: string,
  rewrite: string | null,
): Promise<{ url: string; seen: (string | null)[]; close(): Promise<void> }> {
  const seen: (string | null)[] = [];
  const server = createServer((req, res) => {
    const value = req.headers[PROTOCOL_HEADER];
    seen.push(Array.isArray(value) ? value.join(', ') : (value ?? null));
    const chunks: Buffer[] = [];
    req.on('data', (d: Buffer) => chunks.push(d));
    req.on('end', () => {
      const headers: Record<string, string> = {};
      for (const [k, v] of Object.entries(req.headers))
        if (typeof v === 'string' && k !== 'host' && k !== 'connection' && k !== 'content-length') headers[k] = v;
      if (rewrite !== null) headers[PROTOCOL_HEADER] = rewrite;
      fetch(`${target}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers,
        ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
      }).then(
        async (r) => {
          res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
          res.end(Buffer.from(await r.arrayBuffer()));
        },
        () => res.destroy(),
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** How many rows a table of a test council's storage holds, whichever the backend. */
export async function rowCount(storage: CouncilStorage, table: string): Promise<number> {
  if (storage.info().backend === 'sqlite') {
    const db = (storage as unknown as { db: { prepare(s: string): { get(): { n: number } } } }).db;
    return db.prepare(`SELECT count(*) AS n FROM ${table}`).get().n;
  }
  const pool = (storage as unknown as { pool: { query(s: string): Promise<{ rows: { n: number }[] }> } }).pool;
  return (await pool.query(`SELECT count(*)::int AS n FROM ${table}`)).rows[0]?.n ?? 0;
}
