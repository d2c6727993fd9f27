// One client process of the council-scale bench: drives a share of the lightweight forges with
// real protocol requests (round status, JSON update uploads of the configured size, seals).
// A forge talks to its own council process and, when that one refuses (503) or is gone, to the
// next (as a load balancer would). One JSON line per event on stdout: {"ack":…} as each update
// is acknowledged, {"done":…} at the end with latencies and counts.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { mulberry32 } = await import(join(ROOT, 'dist', 'runtime', 'seeded-random.js'));
const { f32ToBase64 } = await import(join(ROOT, 'dist', 'tensor', 'float-codec.js'));
const { PROTOCOL_HEADER, PROTOCOL_VERSION } = await import(join(ROOT, 'dist', 'protocol', 'wire.js'));

const job = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const { urls, forges, agents, specs, concurrency, fingerprint } = job;
const latencies = [];
const counts = {
  accepted: 0,
  replayed: 0,
  refused_busy: 0,
  refused_other: 0,
  network_errors: 0,
  not_sampled: 0,
  sampled: 0,
  seals: 0,
};
let lastSealAt = 0;

/** The update of forge `index` for agent `a`: seeded, the same in every run of the bench. */
function body(index, a) {
  const rand = mulberry32(index * 131 + a);
  return JSON.stringify({
    base_fingerprint: fingerprint,
    privacy: { clip_norm: 100, noise_multiplier: 0 },
    tensors: specs.map((s) => ({
      name: s.name,
      shape: s.shape,
      dtype: 'F32',
      data: f32ToBase64(Float32Array.from({ length: s.shape[0] * s.shape[1] }, () => 0.01 * (rand() - 0.5))),
    })),
  });
}

/** One request with failover: its own process first, then the others; 503 and network errors move on after a pause. */
async function request(home, method, path, token, payload) {
  for (let attempt = 0; attempt < 400; attempt++) {
    const url = urls[(home + attempt) % urls.length];
    const t0 = performance.now();
    try {
      const res = await fetch(`${url}${path}`, {
        method,
        headers: {
          [PROTOCOL_HEADER]: String(PROTOCOL_VERSION),
          authorization: `Bearer ${token}`,
          ...(payload !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(payload !== undefined ? { body: payload } : {}),
      });
      const text = await res.text();
      if (res.status === 503 || res.status === 429) {
        counts.refused_busy++;
        await new Promise((r) => setTimeout(r, 100 + 100 * Math.random()));
        continue;
      }
      return { status: res.status, json: JSON.parse(text), ms: performance.now() - t0 };
    } catch {
      counts.network_errors++;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  throw new Error(`${method} ${path}: gave up after 400 attempts`);
}

async function runForge(f) {
  const home = f.index % urls.length;
  const st = await request(home, 'GET', '/v1/rounds/current', f.token);
  if (st.status !== 200) throw new Error(`round status: ${st.status} ${JSON.stringify(st.json)}`);
  if (st.json.cohort && !st.json.cohort.you) {
    counts.not_sampled++;
    return;
  }
  counts.sampled++;
  const round = st.json.round;
  for (const [a, agent] of agents.entries()) {
    const r = await request(home, 'PUT', `/v1/rounds/${round}/updates/${agent}`, f.token, body(f.index, a));
    if (r.status === 201 || r.status === 200) {
      if (r.status === 201) counts.accepted++;
      else counts.replayed++;
      latencies.push(r.ms);
      process.stdout.write(`${JSON.stringify({ ack: { forge: f.name, agent, digest: r.json.digest } })}\n`);
    } else {
      counts.refused_other++;
      process.stderr.write(`refused ${f.name}/${agent}: ${r.status} ${JSON.stringify(r.json)}\n`);
    }
  }
  const s = await request(home, 'POST', `/v1/rounds/${round}/seal`, f.token, '{}');
  if (s.status === 200) {
    counts.seals++;
    lastSealAt = Date.now();
  } else process.stderr.write(`seal ${f.name}: ${s.status} ${JSON.stringify(s.json)}\n`);
}

let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < forges.length) await runForge(forges[next++]);
  }),
);
process.stdout.write(`${JSON.stringify({ done: { counts, latencies, lastSealAt } })}\n`);
