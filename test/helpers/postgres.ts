import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A throw-away PostgreSQL cluster for the tests that need one: `initdb` into the run's temporary
 * directory as an unprivileged user (PostgreSQL refuses to run as root), `pg_ctl` on a free port
 * on 127.0.0.1 with its unix socket in that directory, password authentication (so a wrong
 * password can be tested). One cluster per test run, started by the first test file that asks
 * (a lock directory decides which), stopped by the global teardown (test/global-setup.ts); each
 * test file gets databases of its own (`freshDatabase`).
 *
 * When PostgreSQL truly cannot start (not installed, or initdb/pg_ctl fail) `postgres()` returns
 * the reason, and the tests skip loudly with it through ctx.skip.
 */
export interface PgCluster {
  port: number;
  user: string;
  password: string;
  /** A URL of the cluster (database `postgres` unless given). */
  url(database?: string): string;
}

const USER = 'kourai';
const STATE = 'postgres.json';

/** The run's own temporary root (global-setup sets TMPDIR per run). */
function runRoot(): string {
  return process.env.TMPDIR ?? tmpdir();
}

function binDir(): string | null {
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  if (onPath.status === 0 && onPath.stdout.trim()) return join(onPath.stdout.trim(), '..');
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return null;
  const versions = readdirSync(base)
    .filter((v) => existsSync(join(base, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(base, versions[0], 'bin') : null;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

interface Started {
  ok: true;
  dir: string;
  bin: string;
  port: number;
  password: string;
  asUser: string[];
}
type State = Started | { ok: false; reason: string };

function idOf(flag: '-u' | '-g', user: string): number {
  return Number(spawnSync('id', [flag, user], { encoding: 'utf8' }).stdout.trim());
}

async function startCluster(root: string): Promise<State> {
  const bin = binDir();
  if (!bin)
    return {
      ok: false,
      reason:
        'PostgreSQL is not installed (no initdb on PATH or under /usr/lib/postgresql; Debian: apt-get install postgresql)',
    };
  const dir = join(root, 'pg-cluster');
  mkdirSync(dir, { recursive: true });
  const asRoot = process.getuid?.() === 0;
  let asUser: string[] = [];
  if (asRoot) {
    const uid = idOf('-u', 'nobody');
    const gid = idOf('-g', 'nobody');
    if (!Number.isInteger(uid) || spawnSync('setpriv', ['--version']).status !== 0)
      return {
        ok: false,
        reason: 'running as root, and there is no `nobody` user or no setpriv to run PostgreSQL unprivileged',
      };
    chmodSync(root, 0o711);
    if (root !== runRoot()) chmodSync(runRoot(), 0o711);
    chownSync(dir, uid, gid);
    asUser = ['setpriv', '--reuid', String(uid), '--regid', String(gid), '--clear-groups', '--'];
  }
  const password = randomBytes(12).toString('hex');
  const pwfile = join(dir, 'pw');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (asRoot) chownSync(pwfile, idOf('-u', 'nobody'), idOf('-g', 'nobody'));
  const run = (cmd: string, args: string[]) => {
    const argv = [...asUser, join(bin, cmd), ...args];
    return spawnSync(argv[0] as string, argv.slice(1), {
      cwd: dir,
      encoding: 'utf8',
      timeout: 120_000,
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' },
    });
  };
  const data = join(dir, 'data');
  const init = run('initdb', [
    '-D',
    data,
    '-U',
    USER,
    '--pwfile',
    pwfile,
    '--auth',
    'scram-sha-256',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  if (init.status !== 0)
    return {
      ok: false,
      reason: `initdb failed: ${(init.stderr || init.stdout || String(init.error)).trim().split('\n').slice(-2).join(' ')}`,
    };
  for (let attempt = 0; attempt < 3; attempt++) {
    const port = await freePort();
    const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=32MB`;
    const start = run('pg_ctl', ['-D', data, '-l', join(dir, 'log'), '-o', opts, '-w', '-t', '60', 'start']);
    if (start.status === 0) return { ok: true, dir: data, bin, port, password, asUser };
    if (attempt === 2) {
      const log = existsSync(join(dir, 'log'))
        ? readFileSync(join(dir, 'log'), 'utf8').trim().split('\n').slice(-2).join(' ')
        : '';
      return { ok: false, reason: `pg_ctl start failed: ${(start.stderr || start.stdout).trim()} ${log}` };
    }
  }
  return { ok: false, reason: 'pg_ctl start failed' };
}

let cached: Promise<State> | undefined;

async function state(): Promise<State> {
  const root = runRoot();
  const file = join(root, STATE);
  const lock = join(root, 'postgres.lock');
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as State;
    try {
      mkdirSync(lock);
    } catch {
      if (Date.now() > deadline)
        return { ok: false, reason: 'timed out waiting for another test process to start PostgreSQL' };
      await new Promise((r) => setTimeout(r, 200));
      continue;
    }
    const s = await startCluster(root);
    // Written whole, then renamed: a reader never sees half of it.
    writeFileSync(`${file}.tmp`, JSON.stringify(s));
    renameSync(`${file}.tmp`, file);
    return s;
  }
}

/** The run's cluster, or why there is none. */
export async function postgres(): Promise<PgCluster | { reason: string }> {
  cached ??= state();
  const s = await cached;
  if (!s.ok) return { reason: s.reason };
  return {
    port: s.port,
    user: USER,
    password: s.password,
    url: (database = 'postgres') => `postgres://${USER}:${s.password}@127.0.0.1:${s.port}/${database}`,
  };
}

/** A new, empty database in the cluster; its URL. */
export async function freshDatabase(cluster: PgCluster, prefix = 'kourai'): Promise<string> {
  const { default: pg } = await import('pg');
  const name = `${prefix.replace(/[^a-z0-9_]/g, '_')}_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: cluster.url() });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  return cluster.url(name);
}

/** Stops the run's cluster if one was started (global teardown). */
export function stopPostgres(root: string): void {
  const file = join(root, STATE);
  if (!existsSync(file)) return;
  const s = JSON.parse(readFileSync(file, 'utf8')) as State;
  if (!s.ok) return;
  const argv = [...s.asUser, join(s.bin, 'pg_ctl'), '-D', s.dir, '-m', 'immediate', '-w', 'stop'];
  spawnSync(argv[0] as string, argv.slice(1), { encoding: 'utf8', timeout: 60_000 });
  rmSync(file, { force: true });
}

/**
 * A cluster of its own, for a test that stops and restarts PostgreSQL (the run's shared cluster
 * must stay up for the other test files). `stop`/`start` keep its data and port; `destroy` ends it.
 */
export async function privateCluster(): Promise<
  (PgCluster & { stop(): void; start(): void; destroy(): void }) | { reason: string }
> {
  const root = mkdtempSync(join(runRoot(), 'pg-private-'));
  const s = await startCluster(root);
  if (!s.ok) return { reason: s.reason };
  const dir = join(s.dir, '..');
  const ctl = (args: string[]): void => {
    const argv = [...s.asUser, join(s.bin, 'pg_ctl'), ...args];
    const r = spawnSync(argv[0] as string, argv.slice(1), { cwd: dir, encoding: 'utf8', timeout: 60_000 });
    if (r.status !== 0) throw new Error(`pg_ctl ${args.at(-1)} failed: ${r.stderr || r.stdout}`);
  };
  const opts = `-p ${s.port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c max_connections=200 -c shared_buffers=32MB`;
  return {
    port: s.port,
    user: USER,
    password: s.password,
    url: (database = 'postgres') => `postgres://${USER}:${s.password}@127.0.0.1:${s.port}/${database}`,
    stop: () => ctl(['-D', s.dir, '-m', 'fast', '-w', 'stop']),
    start: () => ctl(['-D', s.dir, '-l', join(dir, 'log'), '-o', opts, '-w', '-t', '60', 'start']),
    destroy: () => {
      try {
        ctl(['-D', s.dir, '-m', 'immediate', '-w', 'stop']);
      } catch {
        // already stopped
      }
      rmSync(root, { recursive: true, force: true });
    },
  };
}
