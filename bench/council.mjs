// Council benchmarks: every aggregation rule at n=20×1M and n=100×100k (f=4), the Krum family
// against NumPy (vectorised Gram distances, float64) on the same data, FedAvg against a memcpy
// baseline, and full rounds through the HTTP server (100 forges × 8 agents; 20 forges × 1M).
// Contract: export async function run(report, { quick }); `node bench/council.mjs` runs it alone.
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import net from 'node:net';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = join(ROOT, 'bin', 'kourai.js');
const dist = (p) => import(join(ROOT, 'dist', p));

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
function time(fn, reps) {
  fn(); // warm-up (JIT, WebAssembly tier-up)
  const ts = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    fn();
    ts.push(performance.now() - t0);
  }
  return median(ts);
}

const { mulberry32: mulberry } = await import(new URL('../dist/runtime/seeded-random.js', import.meta.url).href);

/** n updates of d float32: n − f honest around a common centre, f Byzantine far away. */
function makeUpdates(n, d, f, seed) {
  const rand = mulberry(seed);
  const g = () => Math.sqrt(-2 * Math.log(Math.max(rand(), 1e-300))) * Math.cos(2 * Math.PI * rand());
  const centre = new Float32Array(d);
  for (let k = 0; k < d; k++) centre[k] = 0.01 * g();
  return Array.from({ length: n }, (_, i) => {
    const v = new Float32Array(d);
    const byz = i >= n - f;
    for (let k = 0; k < d; k++) v[k] = byz ? 0.5 + 0.01 * g() : centre[k] + 0.002 * g();
    return v;
  });
}

const NUMPY = String.raw`
import sys, time, json, numpy as np
path, n, d, f, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
raw = np.fromfile(path, dtype='<f4').reshape(n, d)
rows = [raw[i].copy() for i in range(n)]   # one array per forge, as updates arrive
def dists(rows):
    X = np.stack(rows).astype(np.float64)
    sq = np.einsum('ij,ij->i', X, X)
    D = sq[:, None] + sq[None, :] - 2.0 * (X @ X.T)
    np.maximum(D, 0, out=D); np.fill_diagonal(D, 0)
    return X, D
def scores(D, idx, f):
    k = max(1, len(idx) - f - 2)
    sub = D[np.ix_(idx, idx)]
    return np.sort(sub, axis=1)[:, 1:k + 1].sum(axis=1)
def krum(rows, f):
    X, D = dists(rows); s = scores(D, list(range(len(rows))), f); return int(np.argmin(s)), X[int(np.argmin(s))]
def multikrum(rows, f):
    X, D = dists(rows); s = scores(D, list(range(len(rows))), f); sel = np.argsort(s, kind='stable')[:len(rows) - f]
    return [int(i) for i in sel], X[sel].mean(axis=0)
def bulyan(rows, f):
    X, D = dists(rows); rem = list(range(len(rows))); sel = []
    theta = len(rows) - 2 * f; beta = theta - 2 * f
    for _ in range(theta):
        s = scores(D, rem, f); b = int(np.argmin(s)); sel.append(rem.pop(b))
    S = X[sel]; med = np.median(S, axis=0)
    idx = np.argpartition(np.abs(S - med), beta - 1, axis=0)[:beta]
    return sel, np.take_along_axis(S, idx, axis=0).mean(axis=0)
def gram_only():
    X = np.stack(rows).astype(np.float64); t = time.perf_counter(); X @ X.T; return time.perf_counter() - t
def best(fn):
    fn(); ts = []
    for _ in range(reps):
        t = time.perf_counter(); out = fn(); ts.append(time.perf_counter() - t)
    return sorted(ts)[len(ts) // 2] * 1000, out
out = {}
out['krum_ms'], (ki, _) = best(lambda: krum(rows, f)); out['krum_index'] = ki
out['multikrum_ms'], (mi, _) = best(lambda: multikrum(rows, f)); out['multikrum_indices'] = mi
out['bulyan_ms'], (bs, _) = best(lambda: bulyan(rows, f)); out['bulyan_selected'] = bs
out['gram_f64_ms'] = sorted(gram_only() for _ in range(reps))[reps // 2] * 1000
out['mean_ms'], _ = best(lambda: np.stack(rows).astype(np.float64).mean(axis=0))
out['median_ms'], _ = best(lambda: np.median(np.stack(rows), axis=0))
print(json.dumps(out))
`;

function numpyAvailable() {
  const r = spawnSync('python3', ['-c', 'import numpy; print(numpy.__version__)'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

function vmHWM(pid) {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

function serveProcess(dataDir, home, args) {
  const proc = spawn(
    process.execPath,
    [BIN, 'council', 'serve', '--port', '0', '--data-dir', dataDir, '--json', ...args],
    {
      env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home, CI: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  proc.stderr.on('data', (d) => (err += d));
  return new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout }).once('line', (line) =>
      resolve({ proc, url: JSON.parse(line).url, stderr: () => err }),
    );
    proc.once('exit', (code) => reject(new Error(`council serve exited ${code}: ${err}`)));
  });
}

async function stop(proc) {
  const done = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  await done;
}

export async function run(report, { quick = false, serverOnly = false } = {}) {
  const agg = await dist('aggregation/index.js');
  const { layoutOf } = await dist('tensor/layout.js');
  const { CouncilClient } = await dist('federation/council-client.js');
  const pool = await agg.GramPool.create();
  const threads = pool?.threads ?? 1;
  const np = numpyAvailable();
  const tmp = mkdtempSync(join(tmpdir(), 'kourai-bench-council-'));
  try {
    const cases = serverOnly
      ? []
      : quick
        ? [[100, 100_000, 4]]
        : [
            [20, 1_000_000, 4],
            [100, 100_000, 4],
          ];
    for (const [n, d, f] of cases) {
      const tag = `n=${n}×${d >= 1e6 ? `${d / 1e6}M` : `${d / 1e3}k`}`;
      const reps = 5;
      const rows = makeUpdates(n, d, f, n * 7 + d);
      const layout = layoutOf([{ name: 'w', shape: [d] }]);
      // LoRA-FAIR: the same coordinates as LoRA layers (rank 16 A [16, 4096] + B [4096, 16] = 131072 per layer).
      const perLayer = d >= 1e6 ? 131072 : 100_000;
      const layers = Math.max(1, Math.floor(d / perLayer));
      const loraSpecs = [];
      for (let l = 0; l < layers; l++) {
        if (d >= 1e6)
          loraSpecs.push(
            { name: `l${l}.lora_A.weight`, shape: [16, 4096] },
            { name: `l${l}.lora_B.weight`, shape: [4096, 16] },
          );
        else
          loraSpecs.push(
            { name: `l${l}.lora_A.weight`, shape: [8, 6250] },
            { name: `l${l}.lora_B.weight`, shape: [6250, 8] },
          );
      }
      const loraLayout = layoutOf(loraSpecs);
      const loraRows = rows.map((r) => r.subarray(0, loraLayout.size));

      const js = {
        fedavg: time(() => agg.fedavg(rows), reps),
        'fedavg (pool, opt-in)': time(() => agg.fedavg(rows, undefined, { pool }), reps),
        median: time(() => agg.coordinateMedian(rows), reps),
        'trimmed-mean': time(() => agg.trimmedMean(rows, f), reps),
        krum: time(() => agg.krum(rows, f, { pool }), reps),
        multikrum: time(() => agg.multiKrum(rows, f, { pool }), reps),
        bulyan: time(() => agg.bulyan(rows, f, { pool }), reps),
        'lora-fair': time(
          () =>
            agg.aggregateUpdates(
              agg.inMemorySource(loraRows, loraLayout),
              { strategy: 'lora-fair', f, selection: 'multikrum' },
              { pool },
            ),
          3,
        ),
        distances: time(() => agg.pairwiseSquaredDistances(rows, { pool }), reps),
        'distances (1 thread)': time(() => agg.pairwiseSquaredDistances(rows), reps),
      };
      for (const [rule, ms] of Object.entries(js)) {
        const note =
          rule === 'lora-fair'
            ? `multikrum selection then LoRA-FAIR, ${layers} layers (${loraLayout.size} params), 1000 GD steps`
            : rule === 'distances'
              ? `Gram form, float64, ${threads} threads from 32 updates on`
              : rule === 'distances (1 thread)'
                ? 'Gram form, float64, WebAssembly SIMD'
                : ['krum', 'multikrum', 'bulyan'].includes(rule)
                  ? `f=${f}, ${threads} threads for distances`
                  : `f=${f}`;
        report(`council ${tag} ${rule}`, ms, 'ms', note);
      }
      const bytes = n * d * 4;
      const big = new Float32Array(n * d);
      const memcpy = time(() => {
        let o = 0;
        for (const r of rows) {
          big.set(r, o);
          o += d;
        }
      }, reps);
      report(
        `council ${tag} fedavg effective bandwidth`,
        bytes / js.fedavg / 1e6,
        'GB/s',
        `reads ${(bytes / 1e6).toFixed(0)} MB of float32`,
      );
      report(
        `council ${tag} memcpy baseline (TypedArray.set)`,
        bytes / memcpy / 1e6,
        'GB/s',
        'same bytes, copied once',
      );
      report(
        `council ${tag} fedavg / memcpy time`,
        js.fedavg / memcpy,
        'x',
        '1 = at memory bandwidth (one thread, SIMD)',
      );
      report(
        `council ${tag} fedavg on the pool / memcpy time`,
        js['fedavg (pool, opt-in)'] / memcpy,
        'x',
        `${threads} threads; depends on an idle core`,
      );

      if (np) {
        const file = join(tmp, `rows-${n}-${d}.f32`);
        writeFileSync(file, Buffer.from(big.buffer, 0, bytes));
        const r = spawnSync('python3', ['-c', NUMPY, file, String(n), String(d), String(f), String(reps)], {
          encoding: 'utf8',
          maxBuffer: 1 << 24,
        });
        rmSync(file, { force: true });
        if (r.status !== 0) {
          report(`council ${tag} numpy`, 'failed', '', (r.stderr || '').split('\n').slice(-2).join(' '));
        } else {
          const py = JSON.parse(r.stdout);
          const k = agg.krum(rows, f, { pool });
          const mk = agg.multiKrum(rows, f, { pool });
          const b = agg.bulyan(rows, f, { pool });
          const agree =
            k.index === py.krum_index &&
            JSON.stringify(mk.indices) === JSON.stringify(py.multikrum_indices) &&
            JSON.stringify(b.selected) === JSON.stringify(py.bulyan_selected);
          for (const rule of ['krum', 'multikrum', 'bulyan']) {
            report(
              `council ${tag} ${rule} numpy ${np}`,
              py[`${rule}_ms`],
              'ms',
              'vectorised Gram distances (BLAS), float64, from the float32 updates',
            );
            report(
              `council ${tag} ${rule} kourai / numpy`,
              js[rule] / py[`${rule}_ms`],
              'x',
              `< 1: kourai faster; selections agree: ${agree ? 'yes' : 'NO'}`,
            );
          }
          report(
            `council ${tag} numpy X·Xᵀ alone (float64 matrix ready)`,
            py.gram_f64_ms,
            'ms',
            'the BLAS call only, for scale',
          );
          report(
            `council ${tag} numpy mean / median`,
            `${py.mean_ms.toFixed(1)} / ${py.median_ms.toFixed(1)}`,
            'ms',
            'np.mean, np.median over axis 0',
          );
        }
      } else {
        report(`council ${tag} numpy`, 'skipped', '', 'python3 with numpy not found');
      }
      report(
        `council ${tag} peak RSS so far`,
        process.resourceUsage().maxRSS / 1024,
        'MB',
        `bench process; the updates alone are ${(bytes / 1048576).toFixed(0)} MiB`,
      );
    }

    // Full rounds through the HTTP server (a child process): 50 forges × 8 agents and 100 × 8.
    for (const forges of serverOnly ? [50] : quick ? [20] : [50, 100])
      await fullRound(report, { tmp, forges, CouncilClient });
    await tokenTiming(report, tmp);
    await starvation(report, tmp, CouncilClient);

    // Streaming: 20 forges × 1M-parameter updates through the server; memory stays bounded.
    if (!quick && !serverOnly) {
      const home = join(tmp, 'stream');
      mkdirSync(home, { recursive: true });
      const dataDir = join(home, 'council');
      const forges = 20;
      const tokens = [];
      for (let i = 0; i < forges; i++) {
        const r = spawnSync(
          process.execPath,
          [BIN, 'council', 'forge', 'add', `f${i}`, '--data-dir', dataDir, '--json'],
          { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home } },
        );
        tokens.push(JSON.parse(r.stdout).token);
      }
      const s = await serveProcess(dataDir, home, [
        '--base-fingerprint',
        'bench',
        '--layouts',
        JSON.stringify({ '*': [{ name: 'w', shape: [1000, 1000] }] }),
        '--clip-norm',
        '0..1000',
        '--noise-multiplier',
        '0..10',
        '--min-forges',
        String(forges),
        '--strategy',
        'multikrum',
        '--byzantine',
        '4',
        '--payload-limit',
        '16MiB',
        '--max-in-flight',
        '4',
      ]);
      const rows = makeUpdates(forges, 1_000_000, 4, 99);
      const t0 = performance.now();
      await Promise.all(
        tokens.map(async (token, i) => {
          const client = new CouncilClient({ url: s.url, token });
          await client.submit(1, 'metis', {
            tensors: [{ name: 'w', shape: [1000, 1000], data: rows[i] }],
            baseFingerprint: 'bench',
            clipNorm: 1000,
            noiseMultiplier: 0,
          });
          await client.seal(1);
        }),
      );
      await new CouncilClient({ url: s.url, token: tokens[0] }).waitForRound(1, { pollMs: 50 });
      const secs = (performance.now() - t0) / 1000;
      const rss = vmHWM(s.proc.pid);
      await stop(s.proc);
      report(
        'council streaming round 20 forges × 1M params: wall time',
        secs,
        's',
        'multikrum f=4, 5.3 MB base64 bodies, max 4 in flight',
      );
      report(
        'council streaming round 20 × 1M: server peak RSS',
        rss,
        'MB',
        `received ${(forges * 4).toFixed(0)} MB of float32; bound ≈ base + 4 in flight × 16 MiB × 3 + one 256 KiB chunk per forge`,
      );
    }
  } finally {
    await pool?.close();
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Does answering a wrong token take longer when its forge id exists? Tokens are
 * looked up by the hash of the whole token, so both cases should cost the same.
 */
async function tokenTiming(report, tmp) {
  const { SqliteCouncilStorage } = await dist('council/sqlite-storage.js');
  const { addForge } = await dist('council/forges.js');
  const { authenticate } = await dist('council/auth.js');
  const { randomBytes } = await import('node:crypto');
  const storage = new SqliteCouncilStorage(join(tmp, 'tokens'));
  try {
    let token = '';
    for (let i = 0; i < 50; i++) token = (await addForge(storage, `f${i}`, randomBytes, new Date())).token;
    const existing = `Bearer ${token.slice(0, -4)}AAAA`;
    const missing = `Bearer ${token.replace(/^kourai_\d+_/, 'kourai_9999_')}`;
    const once = async (h) => {
      const t = process.hrtime.bigint();
      await authenticate(storage, h).catch(() => undefined);
      return Number(process.hrtime.bigint() - t) / 1000;
    };
    const a = [];
    const b = [];
    for (let i = 0; i < 2000; i++) await once(i % 2 ? existing : missing); // warm-up
    for (let i = 0; i < 20000; i++) (i % 2 ? a : b).push(await once(i % 2 ? existing : missing));
    report(
      'council auth: wrong token, existing id − missing id (median)',
      pct(a, 50) - pct(b, 50),
      'µs',
      `medians ${pct(a, 50).toFixed(2)} vs ${pct(b, 50).toFixed(2)} µs (10,000 each, interleaved); was 8–18 µs when the id chose the row`,
    );
  } finally {
    await storage.close();
  }
}

function vmRSS(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/**
 * A raw PUT of a `bytes`-long body: streams it all, or (stall) sends one byte and waits. Resolves
 * `{ status, socket }` with the response's status line once the server answers or closes.
 */
function rawUpload(url, { bytes, token, stall, agent = 'metis' }) {
  const u = new URL(url);
  return new Promise((resolve) => {
    let got = '';
    const sock = net.connect(Number(u.port), u.hostname, () => {
      sock.write(
        `PUT /v1/rounds/1/updates/${agent} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\nkourai-protocol: 2\r\ncontent-length: ${bytes}\r\n${token ? `authorization: Bearer ${token}\r\n` : ''}\r\n`,
      );
      if (stall) return void sock.write('{');
      const chunk = Buffer.alloc(1 << 20, 0x41);
      let sent = 0;
      const pump = () => {
        while (sent < bytes && !sock.destroyed) {
          sent += chunk.length;
          if (!sock.write(chunk)) return void sock.once('drain', pump);
        }
      };
      pump();
    });
    const settle = () => resolve({ status: got.split('\r\n')[0] || 'closed without an answer', socket: sock });
    sock.on('data', (d) => {
      got += d;
      if (got.includes('\r\n')) settle();
    });
    sock.on('error', settle);
    sock.on('close', settle);
  });
}

/**
 * As load: 8 unauthenticated 64 MiB uploads at once (the server's memory), then a
 * real submission while 8 unauthenticated uploads and 8 of another forge's uploads stall after one
 * byte (its latency and status; it was 503 busy for up to 300 s).
 */
async function starvation(report, tmp, CouncilClient) {
  const home = join(tmp, 'starve');
  mkdirSync(home, { recursive: true });
  const dataDir = join(home, 'council');
  const add = (name) =>
    JSON.parse(
      spawnSync(process.execPath, [BIN, 'council', 'forge', 'add', name, '--data-dir', dataDir, '--json'], {
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home },
      }).stdout,
    ).token;
  const token = add('athens');
  const mallory = add('mallory');
  const specs = [
    { name: 'q.lora_A.weight', shape: [8, 256] },
    { name: 'q.lora_B.weight', shape: [256, 8] },
  ];
  const s = await serveProcess(dataDir, home, [
    '--base-fingerprint',
    'bench',
    '--layouts',
    JSON.stringify({ '*': specs }),
    '--noise-multiplier',
    '0..10',
    '--max-in-flight',
    '8',
  ]);
  const held = [];
  try {
    const before = vmRSS(s.proc.pid);
    const t0 = performance.now();
    const big = await Promise.all(Array.from({ length: 8 }, () => rawUpload(s.url, { bytes: 64 * 1024 * 1024 })));
    const answered = performance.now() - t0;
    for (const b of big) b.socket.destroy();
    const peak = vmHWM(s.proc.pid);
    report(
      'council 8 unauthenticated 64 MiB uploads: all answered in',
      answered,
      'ms',
      `${big.filter((x) => / 401 /.test(x.status)).length}/8 got 401 before their bodies were read`,
    );
    report(
      'council 8 unauthenticated 64 MiB uploads: RSS before / peak',
      `${before.toFixed(0)} / ${peak.toFixed(0)}`,
      'MB',
      'was 143 → 839 MB when bodies were read and parsed before the token',
    );
    // Stalled uploads: 8 without a token (refused at once), 8 from mallory (2 hold slots, 6 get 429).
    const anon = await Promise.all(
      Array.from({ length: 8 }, () => rawUpload(s.url, { bytes: 1_000_000, stall: true })),
    );
    for (const a of anon) a.socket.destroy();
    const pending = Array.from({ length: 8 }, (_, i) =>
      rawUpload(s.url, {
        bytes: 1_000_000,
        stall: true,
        token: mallory,
        agent: ['metis', 'techne', 'kallos', 'mneme', 'aidos', 'aletheia', 'hephaestus', 'dokimasia'][i],
      }),
    );
    // Two hold their slots and get no answer while they stall; wait for the other six to be refused.
    const settled = [];
    for (const p of pending) void p.then((x) => settled.push(x.status));
    for (let i = 0; i < 200 && settled.length < 6; i++) await new Promise((r) => setTimeout(r, 10));
    const rand = mulberry(5);
    const tensors = specs.map((sp) => ({
      name: sp.name,
      shape: sp.shape,
      data: Float32Array.from({ length: sp.shape[0] * sp.shape[1] }, () => 0.001 * (rand() - 0.5)),
    }));
    const t1 = performance.now();
    const receipt = await new CouncilClient({ url: s.url, token, retries: 0 })
      .submit(1, 'metis', { tensors, baseFingerprint: 'bench', clipNorm: 1, noiseMultiplier: 0 })
      .then(
        () => 'accepted',
        (e) => `refused: ${e.message}`,
      );
    const ms = performance.now() - t1;
    for (const p of pending) void p.then((x) => x.socket.destroy());
    held.push(...pending);
    report(
      'council submission while 16 uploads stall (8 unauthenticated, 8 of one forge)',
      ms,
      'ms',
      `${receipt}; unauthenticated: ${anon.filter((x) => / 401 /.test(x.status)).length}/8 got 401 at once; the stalling forge: ${settled.filter((x) => / 429 /.test(x)).length}/8 got 429, ${8 - settled.length} held a slot (was: every real submission 503 busy for up to 300 s)`,
    );
  } finally {
    await stop(s.proc);
    await Promise.all(held);
  }
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

/** Times one GET /v1/health (no token). */
async function healthMs(url) {
  const t0 = performance.now();
  const r = await fetch(`${url}/v1/health`);
  await r.text();
  return performance.now() - t0;
}

/**
 * One round of `forges` forges × 8 agents through a council process: every forge submits its 8
 * updates one after the other (all forges at once), then seals; the round closes on the last seal
 * and the worker aggregates (LoRA-FAIR after Multi-Krum, f = 4) while /v1/health is polled.
 */
async function fullRound(report, { tmp, forges, CouncilClient }) {
  const home = join(tmp, `round-${forges}`);
  mkdirSync(home, { recursive: true });
  const dataDir = join(home, 'council');
  const agents = ['hephaestus', 'metis', 'techne', 'dokimasia', 'kallos', 'mneme', 'aidos', 'aletheia'];
  const tokens = [];
  for (let i = 0; i < forges; i++) {
    const r = spawnSync(
      process.execPath,
      [BIN, 'council', 'forge', 'add', `forge-${i}`, '--data-dir', dataDir, '--json'],
      { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home } },
    );
    tokens.push(JSON.parse(r.stdout).token);
  }
  const deadline = 600;
  const specs = [
    { name: 'q.lora_A.weight', shape: [8, 256] },
    { name: 'q.lora_B.weight', shape: [256, 8] },
  ];
  const coords = 8 * 256 * 2;
  const s = await serveProcess(dataDir, home, [
    '--base-fingerprint',
    'bench',
    '--layouts',
    JSON.stringify({ '*': specs }),
    '--clip-norm',
    '0..100',
    '--noise-multiplier',
    '0..10',
    '--min-forges',
    String(forges),
    '--strategy',
    'lora-fair',
    '--byzantine',
    '4',
    '--round-deadline',
    `${deadline}s`,
  ]);
  const idleHealth = [];
  for (let i = 0; i < 30; i++) idleHealth.push(await healthMs(s.url));
  const latencies = [];
  const t0 = performance.now();
  await Promise.all(
    tokens.map(async (token, i) => {
      const client = new CouncilClient({ url: s.url, token });
      for (const [a, agent] of agents.entries()) {
        const rand = mulberry(i * 31 + a);
        const tensors = specs.map((sp) => ({
          name: sp.name,
          shape: sp.shape,
          data: Float32Array.from(
            { length: sp.shape[0] * sp.shape[1] },
            () => 0.01 * (rand() - 0.5) + (i >= forges - 4 ? 0.2 : 0),
          ),
        }));
        const t = performance.now();
        await client.submit(1, agent, { tensors, baseFingerprint: 'bench', clipNorm: 100, noiseMultiplier: 0 });
        latencies.push(performance.now() - t);
      }
      await client.seal(1);
    }),
  );
  const tSubmitted = performance.now();
  // While the round is aggregated: /v1/health, back to back, until the round is done.
  const watcher = new CouncilClient({ url: s.url, token: tokens[0] });
  let done = false;
  const during = [];
  const polling = (async () => {
    while (!done) during.push(await healthMs(s.url));
  })();
  const status = await watcher.waitForRound(1, { pollMs: 50 });
  done = true;
  await polling;
  const tDone = performance.now();
  const rss = vmHWM(s.proc.pid);
  await stop(s.proc);
  const total = (tDone - t0) / 1000;
  const tag = `council round ${forges}×8`;
  report(
    `council round ${forges} forges × 8 agents: wall time`,
    total,
    's',
    `deadline ${deadline}s; ${coords} params per agent update (LoRA r=8, 256×256); lora-fair after multikrum f=4`,
  );
  report(
    `${tag}: submissions`,
    latencies.length / ((tSubmitted - t0) / 1000),
    'updates/s',
    `${latencies.length} updates, ${forges} concurrent clients`,
  );
  report(
    `${tag}: submission latency p50 / p95 / p99`,
    `${pct(latencies, 50).toFixed(0)} / ${pct(latencies, 95).toFixed(0)} / ${pct(latencies, 99).toFixed(0)}`,
    'ms',
    `max ${Math.max(...latencies).toFixed(0)} ms; ${forges} clients at once, each sending its 8 agents in turn`,
  );
  report(
    `${tag}: aggregation after close`,
    (tDone - tSubmitted) / 1000,
    's',
    `${status.outcomes.filter((o) => o.aggregated).length} agents aggregated (worker thread), ${status.outcomes[0]?.used} of ${forges} forges used each`,
  );
  report(
    `${tag}: /v1/health during aggregation p50 / p99 / max`,
    `${pct(during, 50).toFixed(1)} / ${pct(during, 99).toFixed(1)} / ${Math.max(...during).toFixed(1)}`,
    'ms',
    `${during.length} requests back to back while aggregating; idle p50 ${pct(idleHealth, 50).toFixed(1)} ms`,
  );
  report(
    `${tag}: health p99 during aggregation / idle p99`,
    pct(during, 99) / pct(idleHealth, 99),
    'x',
    'same machine, same run',
  );
  report(`${tag}: round time / deadline`, total / deadline, 'x', '< 1: completes within the deadline');
  report(`${tag}: server peak RSS`, rss, 'MB', 'VmHWM of the council process (event loop + aggregation worker)');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  // node bench/council.mjs [--quick] [--server]: --server runs only the council process figures
  // (the 50 × 8 round, token timing, starvation), a few minutes less than the whole suite.
  const quick = process.argv.includes('--quick');
  const serverOnly = process.argv.includes('--server');
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
      console.log(`${name.padEnd(66)} ${v.padStart(12)} ${unit.padEnd(9)} ${note}`);
    },
    { quick, serverOnly },
  );
}
