// Council at scale (opt-in: npm run bench -- --only council-scale): 1,000 registered forges, a
// cohort of 100, 8 agents, updates of realistic size (135,168 float32 per agent: ~0.72 MB as JSON)
// sent by lightweight forges from a bounded number of client processes (council-scale-client.mjs).
//
// Three runs of the same load, on this machine, in this order:
//   1. PostgreSQL, two `council serve` processes, undisturbed;
//   2. the same, with kill -9 of one process mid-round (a fresh one is started in its place) and
//      kill -9 of the process aggregating the round: 0 acknowledged submissions lost, the round
//      aggregated once, its aggregates equal to run 1's;
//   3. SQLite, one process (the default), as the baseline of the ratios.
// Every run registers the same forges and gives the council the same cohort seed (stored in its
// database before it starts; a real council draws its own from node:crypto), so the three sample
// the same cohort and must produce the same aggregates.
//
// A throw-away PostgreSQL cluster is started for the runs (initdb as `nobody` when running as
// root). Sizes: KOURAI_SCALE_FORGES, KOURAI_SCALE_COHORT, KOURAI_SCALE_COORDS, KOURAI_SCALE_CLIENTS.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'kourai.js');
const CLIENT = fileURLToPath(new URL('./council-scale-client.mjs', import.meta.url));
const dist = (p) => import(join(ROOT, 'dist', p));

const AGENTS = ['hephaestus', 'metis', 'techne', 'dokimasia', 'kallos', 'mneme', 'aidos', 'aletheia'];
const FINGERPRINT = 'bench-scale';
const SEED = createHash('sha256').update('council-scale bench cohort seed').digest();
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))] : NaN;
};

function vmHWM(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

/** A throw-away cluster in `dir`; returns its superuser URL builder and a stop function, or why not. */
async function startCluster(dir) {
  const base = '/usr/lib/postgresql';
  const onPath = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).stdout.trim();
  const bin = onPath
    ? join(onPath, '..')
    : existsSync(base)
      ? readdirSync(base)
          .map((v) => join(base, v, 'bin'))
          .find((b) => existsSync(join(b, 'initdb')))
      : undefined;
  if (!bin) return { reason: 'PostgreSQL is not installed (no initdb)' };
  const asRoot = process.getuid?.() === 0;
  const id = (f) => Number(spawnSync('id', [f, 'nobody'], { encoding: 'utf8' }).stdout.trim());
  const as = asRoot
    ? ['setpriv', '--reuid', String(id('-u')), '--regid', String(id('-g')), '--clear-groups', '--']
    : [];
  const pg = join(dir, 'pg');
  mkdirSync(pg, { recursive: true });
  if (asRoot) {
    chmodSync(dir, 0o711);
    chownSync(pg, id('-u'), id('-g'));
  }
  const pw = join(pg, 'pw');
  writeFileSync(pw, 'bench\n');
  if (asRoot) chownSync(pw, id('-u'), id('-g'));
  const run = (cmd, args) => {
    const argv = [...as, join(bin, cmd), ...args];
    return spawnSync(argv[0], argv.slice(1), {
      cwd: pg,
      encoding: 'utf8',
      env: { PATH: process.env.PATH, LC_ALL: 'C' },
    });
  };
  const init = run('initdb', [
    '-D',
    join(pg, 'data'),
    '-U',
    'kourai',
    '--pwfile',
    pw,
    '--auth',
    'scram-sha-256',
    '-E',
    'UTF8',
    '--no-sync',
  ]);
  if (init.status !== 0) return { reason: `initdb failed: ${init.stderr.trim()}` };
  const port = await freePort();
  // Durable as a production council would run it: fsync and full-page writes stay on.
  const start = run('pg_ctl', [
    '-D',
    join(pg, 'data'),
    '-l',
    join(pg, 'log'),
    '-o',
    `-p ${port} -k ${pg} -c listen_addresses=127.0.0.1 -c max_connections=100 -c shared_buffers=128MB`,
    '-w',
    'start',
  ]);
  if (start.status !== 0) return { reason: `pg_ctl start failed: ${start.stderr.trim()}` };
  return {
    url: (db) => `postgres://kourai:bench@127.0.0.1:${port}/${db}`,
    stop: () => run('pg_ctl', ['-D', join(pg, 'data'), '-m', 'immediate', 'stop']),
  };
}

function serve(args, home) {
  const proc = spawn(
    'nice',
    ['-n', '10', process.execPath, BIN, 'council', 'serve', '--port', '0', '--json', ...args],
    {
      env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home, CI: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  proc.stderr.on('data', (d) => (err = (err + d).slice(-20_000)));
  return new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout }).once('line', (line) =>
      resolve({ proc, url: JSON.parse(line).url, stderr: () => err, rss: () => vmHWM(proc.pid) }),
    );
    proc.once('exit', (code) => reject(new Error(`council serve exited ${code}: ${err}`)));
  });
}

const exited = (p) =>
  p.exitCode !== null || p.signalCode !== null ? Promise.resolve() : new Promise((r) => p.once('exit', r));

async function health(url) {
  try {
    return await (await fetch(`${url}/v1/health`)).json();
  } catch {
    return null;
  }
}

/** Registers the forges (in-process, through the council's own storage API) and fixes the cohort seed. */
async function prepare(storage, n) {
  const { addForge } = await dist('council/forges.js');
  const { randomBytes } = await import('node:crypto');
  await storage.settingOnce('cohort_seed', SEED);
  const forges = [];
  for (let i = 0; i < n; i++) {
    const { token } = await addForge(storage, `forge-${String(i).padStart(4, '0')}`, randomBytes, new Date());
    forges.push({ name: `forge-${String(i).padStart(4, '0')}`, index: i, token });
  }
  await storage.close();
  return forges;
}

/** Runs the client processes over `urls`; `onAck(total)` after every acknowledgement. */
async function drive(tmp, tag, urls, forges, specs, clients, onAck) {
  const per = Math.ceil(forges.length / clients);
  const acks = [];
  const results = await Promise.all(
    Array.from({ length: clients }, (_, c) => {
      const file = join(tmp, `${tag}-client-${c}.json`);
      writeFileSync(
        file,
        JSON.stringify({
          urls,
          forges: forges.slice(c * per, (c + 1) * per),
          agents: AGENTS,
          specs,
          concurrency: 6,
          fingerprint: FINGERPRINT,
        }),
      );
      const proc = spawn(process.execPath, [CLIENT, file], { stdio: ['ignore', 'pipe', 'pipe'] });
      let err = '';
      proc.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
      return new Promise((resolve, reject) => {
        let done = null;
        createInterface({ input: proc.stdout }).on('line', (line) => {
          const m = JSON.parse(line);
          if (m.ack) {
            acks.push(m.ack);
            onAck(acks.length);
          } else if (m.done) done = m.done;
        });
        proc.once('exit', (code) =>
          done ? resolve({ ...done, rss: NaN }) : reject(new Error(`client ${c} exited ${code}: ${err}`)),
        );
      });
    }),
  );
  const counts = {};
  for (const r of results) for (const [k, v] of Object.entries(r.counts)) counts[k] = (counts[k] ?? 0) + v;
  return {
    acks,
    counts,
    latencies: results.flatMap((r) => r.latencies),
    lastSealAt: Math.max(...results.map((r) => r.lastSealAt)),
  };
}

async function waitAggregated(urls, token, ms = 1_800_000) {
  const end = Date.now() + ms;
  for (;;) {
    for (const url of urls) {
      try {
        const r = await fetch(`${url}/v1/rounds/1`, {
          headers: { 'kourai-protocol': '2', authorization: `Bearer ${token}` },
        });
        if (r.ok && (await r.json()).state === 'aggregated') return Date.now();
      } catch {
        // that process is gone: ask the others
      }
    }
    if (Date.now() > end) throw new Error('round 1 was not aggregated in time');
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function aggregateDigests(url, token) {
  const out = {};
  for (const agent of AGENTS) {
    const r = await fetch(`${url}/v1/rounds/1/aggregate/${agent}`, {
      headers: { 'kourai-protocol': '2', authorization: `Bearer ${token}` },
    });
    out[agent] = r.ok ? (await r.json()).digest : `HTTP ${r.status}`;
  }
  return out;
}

export async function run(report, { quick = false } = {}) {
  const N = Number(process.env.KOURAI_SCALE_FORGES ?? 1000);
  const K = Number(process.env.KOURAI_SCALE_COHORT ?? 100);
  const coords = Number(process.env.KOURAI_SCALE_COORDS ?? (quick ? 16_896 : 135_168));
  const clients = Number(process.env.KOURAI_SCALE_CLIENTS ?? 4);
  const rank = 8;
  const width = coords / (2 * 2 * rank);
  const specs = [
    { name: 'q.lora_A.weight', shape: [rank, width] },
    { name: 'q.lora_B.weight', shape: [width, rank] },
    { name: 'v.lora_A.weight', shape: [rank, width] },
    { name: 'v.lora_B.weight', shape: [width, rank] },
  ];
  const f = Math.floor(K / 10);
  const tmp = mkdtempSync(join(tmpdir(), 'kourai-bench-scale-'));
  const common = [
    '--base-fingerprint',
    FINGERPRINT,
    '--layouts',
    JSON.stringify({ '*': specs }),
    '--clip-norm',
    '0..100',
    '--noise-multiplier',
    '0..10',
    '--cohort',
    String(K),
    '--min-forges',
    String(K),
    '--strategy',
    'multikrum',
    '--byzantine',
    String(f),
    '--round-deadline',
    '3600s',
    '--threads',
    '1',
    '--max-in-flight',
    '8',
  ];
  const cluster = await startCluster(tmp);
  if (cluster.reason) {
    report('council-scale', 'skipped', '', cluster.reason);
    rmSync(tmp, { recursive: true, force: true });
    return;
  }
  const { PgCouncilStorage } = await dist('council/pg-storage.js');
  const { SqliteCouncilStorage } = await dist('council/sqlite-storage.js');
  const note = `${N} forges, cohort ${K}, ${AGENTS.length} agents × ${coords} float32 (~${((coords * 4 * 4) / 3 / 1e6).toFixed(2)} MB JSON each), multikrum f=${f}, ${clients} client processes`;
  console.log(`council-scale: ${note}`);
  const pgRun = async (tag, disturb) => {
    const admin = new (await import('pg')).default.Client({ connectionString: cluster.url('postgres') });
    await admin.connect();
    await admin.query(`CREATE DATABASE ${tag}`);
    await admin.end();
    const url = cluster.url(tag);
    const s0 = await PgCouncilStorage.open(url, { anySchema: true, max: 2 });
    await s0.migrate();
    const dbBefore = await s0.databaseBytes();
    const forges = await prepare(s0, N);
    const home = join(tmp, tag);
    mkdirSync(home, { recursive: true });
    const args = [...common, '--database', url, '--aggregation-lease', '5s'];
    const procs = [await serve(args, home), await serve(args, home)];
    const rss = new Map();
    const kills = [];
    let replaced = false;
    const t0 = Date.now();
    const load = await drive(
      tmp,
      tag,
      procs.map((p) => p.url),
      forges,
      specs,
      clients,
      (n) => {
        // kill -9 one process mid-round, at 40 % of the acknowledgements, and start a fresh one.
        if (disturb && !replaced && n >= 0.4 * K * AGENTS.length) {
          replaced = true;
          const victim = procs[0];
          rss.set('process A (killed mid-round)', victim.rss());
          victim.proc.kill('SIGKILL');
          kills.push(`kill -9 of process A after ${n} acknowledged updates`);
          void serve(args, home).then((p) => procs.push(p));
        }
      },
    );
    const tLoad = Date.now();
    let tAgg;
    if (disturb) {
      // Find the process aggregating round 1 and kill -9 it mid-aggregation.
      let victim = null;
      const end = Date.now() + 600_000;
      while (!victim && Date.now() < end) {
        for (const p of procs.filter((x) => x.proc.exitCode === null && x.proc.signalCode === null)) {
          const h = await health(p.url);
          if (h?.process?.role === 'aggregating round 1') victim = p;
        }
        if (!victim) await new Promise((r) => setTimeout(r, 50));
      }
      if (!victim) throw new Error('no process was seen aggregating round 1');
      await new Promise((r) => setTimeout(r, 1000));
      rss.set('aggregator (killed mid-aggregation)', victim.rss());
      victim.proc.kill('SIGKILL');
      await exited(victim.proc);
      kills.push('kill -9 of the aggregating process 1 s into the aggregation');
    }
    const live = procs.filter((x) => x.proc.exitCode === null && x.proc.signalCode === null);
    tAgg = await waitAggregated(
      live.map((p) => p.url),
      forges[0].token,
    );
    for (const [i, p] of live.entries()) rss.set(`surviving process ${i + 1}`, p.rss());
    const digests = await aggregateDigests(live[0].url, forges[0].token);
    // What the database holds, against what the forges were told.
    const s = await PgCouncilStorage.open(url, { max: 2 });
    const rows = await Promise.all(AGENTS.map((a) => s.submissionsFor(1, a)));
    const names = new Map((await s.listForges()).map((x) => [x.id, x.name]));
    const stored = new Map(rows.flat().map((r) => [`${names.get(r.forgeId)}/${r.agent}`, r.digest]));
    const lost = load.acks.filter((a) => stored.get(`${a.forge}/${a.agent}`) !== a.digest).length;
    const events = await s.events(100_000);
    const dbAfter = await s.databaseBytes();
    await s.close();
    for (const p of live) {
      p.proc.kill('SIGTERM');
      await exited(p.proc);
    }
    return {
      load,
      t0,
      tLoad,
      tAgg,
      rss,
      digests,
      lost,
      stored: stored.size,
      aggregatedEvents: events.filter((e) => e.kind === 'round_aggregated' && e.round === 1).length,
      takeovers: events.filter((e) => e.kind === 'aggregation_taken_over').length,
      dbBytes: dbAfter - dbBefore,
      kills,
    };
  };
  const sqliteRun = async () => {
    const home = join(tmp, 'sqlite');
    const dataDir = join(home, 'council');
    const forges = await prepare(new SqliteCouncilStorage(dataDir), N);
    const p = await serve([...common, '--data-dir', dataDir], home);
    const t0 = Date.now();
    const load = await drive(tmp, 'sqlite', [p.url], forges, specs, clients, () => undefined);
    const tLoad = Date.now();
    const tAgg = await waitAggregated([p.url], forges[0].token);
    const digests = await aggregateDigests(p.url, forges[0].token);
    const rss = p.rss();
    p.proc.kill('SIGTERM');
    await exited(p.proc);
    const bytes = readdirSync(dataDir)
      .filter((x) => x.startsWith('council.db'))
      .reduce((sum, x) => sum + statSync(join(dataDir, x)).size, 0);
    return { load, t0, tLoad, tAgg, rss, digests, dbBytes: bytes };
  };
  try {
    const calm = await pgRun('calm', false);
    const hard = await pgRun('hard', true);
    const lite = await sqliteRun();
    const line = (tag, r) => {
      const c = r.load.counts;
      report(
        `${tag}: updates accepted / replayed / refused (503/429, retried)`,
        `${c.accepted} / ${c.replayed} / ${c.refused_busy}`,
        '',
        `${c.refused_other} refused for good; ${c.network_errors} network errors (retried elsewhere); ${c.sampled} forges sampled, ${c.not_sampled} told to wait`,
      );
      report(
        `${tag}: submission latency p50 / p95 / p99`,
        `${pct(r.load.latencies, 50).toFixed(0)} / ${pct(r.load.latencies, 95).toFixed(0)} / ${pct(r.load.latencies, 99).toFixed(0)}`,
        'ms',
        `${r.load.latencies.length} acknowledged updates`,
      );
      report(`${tag}: load time (first request to last seal)`, (r.tLoad - r.t0) / 1000, 's');
      report(`${tag}: last seal → aggregate`, (r.tAgg - r.load.lastSealAt) / 1000, 's');
      report(`${tag}: database growth for the round`, r.dbBytes / 1e6, 'MB');
    };
    line('PostgreSQL, 2 processes, undisturbed', calm);
    for (const [k, v] of calm.rss) report(`PostgreSQL, 2 processes, undisturbed: peak RSS, ${k}`, v, 'MB');
    line('PostgreSQL, 2 processes, kill -9 ×2', hard);
    for (const [k, v] of hard.rss) report(`PostgreSQL, kill -9 ×2: peak RSS, ${k}`, v, 'MB');
    report('PostgreSQL, kill -9 ×2: what happened', hard.kills.join('; '), '');
    report(
      'PostgreSQL, kill -9 ×2: acknowledged updates lost',
      hard.lost,
      '',
      `${hard.load.acks.length} acknowledged, ${hard.stored} stored`,
    );
    report(
      'PostgreSQL, kill -9 ×2: round 1 aggregated (events)',
      hard.aggregatedEvents,
      'times',
      `${hard.takeovers} takeover(s) after the lease`,
    );
    const same = AGENTS.filter((a) => hard.digests[a] === calm.digests[a]).length;
    report(
      'PostgreSQL, kill -9 ×2: aggregates equal to the undisturbed run',
      `${same}/${AGENTS.length}`,
      'agents',
      'adapter digests (sha256 of the float32 bytes)',
    );
    line('SQLite, 1 process', lite);
    report('SQLite, 1 process: peak RSS', lite.rss, 'MB');
    report(
      'SQLite vs PostgreSQL aggregates equal',
      `${AGENTS.filter((a) => lite.digests[a] === calm.digests[a]).length}/${AGENTS.length}`,
      'agents',
    );
    report(
      'ratio PostgreSQL (2 proc) / SQLite (1 proc): submission p50',
      pct(calm.load.latencies, 50) / pct(lite.load.latencies, 50),
      'x',
    );
    report(
      'ratio PostgreSQL (2 proc) / SQLite (1 proc): submission p99',
      pct(calm.load.latencies, 99) / pct(lite.load.latencies, 99),
      'x',
    );
    report(
      'ratio PostgreSQL (2 proc) / SQLite (1 proc): load time',
      (calm.tLoad - calm.t0) / (lite.tLoad - lite.t0),
      'x',
    );
    report(
      'ratio PostgreSQL (2 proc) / SQLite (1 proc): last seal → aggregate',
      (calm.tAgg - calm.load.lastSealAt) / (lite.tAgg - lite.load.lastSealAt),
      'x',
    );
    report('ratio PostgreSQL / SQLite: storage per round', calm.dbBytes / lite.dbBytes, 'x');
  } finally {
    cluster.stop();
    rmSync(tmp, { recursive: true, force: true });
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  await run(
    (name, value, unit, note = '') => {
      const v =
        typeof value === 'number'
          ? Math.abs(value) >= 100
            ? value.toFixed(0)
            : Math.abs(value) >= 1
              ? value.toFixed(2)
              : value.toPrecision(3)
          : String(value);
      console.log(`${name.padEnd(72)} ${v.padStart(14)} ${unit.padEnd(6)} ${note}`);
    },
    { quick: process.argv.includes('--quick') },
  );
}
