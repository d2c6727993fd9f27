// Federation benchmarks: what a round costs a forge apart from training, per agent, for the
// built-in base's adapter (rank 8: 135,176 float32 values) — the keyed release (ledger row, clip,
// noise from the forge's key) and its upload to a real council on 127.0.0.1, as the JSON document
// (base64 tensors) and as the same release in a safetensors body. Baseline: the JSON body, same
// machine, same council (the ratio is what the safetensors form saves).
// Contract: export async function run(report), report(name, value, unit, note?). Uses dist/.
// Standalone: node bench/federation.mjs
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = new URL('../dist/', import.meta.url);
const load = (p) => import(new URL(p, dist).href);

export async function run(report) {
  const { PrivacyGate } = await load('privacy/round-gate.js');
  const { defaults } = await load('council/config.js');
  const { startCouncilServer } = await load('council/server.js');
  const { addForge } = await load('council/forges.js');
  const { httpTransport } = await load('federation/round/transport.js');
  const { releaseBodyBytes } = await load('federation/round/plan.js');
  const { BUILTIN_FINGERPRINT } = await load('train/fingerprint.js');
  const { adapterLayout } = await load('train/adapter-layout.js');
  const { builtinBaseSpec } = await load('train/base-spec.js');
  const { FEDERATING_AGENTS } = await load('memoir/format/agents.js');

  const dir = mkdtempSync(join(tmpdir(), 'kourai-bench-federation-'));
  const rank = 8;
  const layout = adapterLayout(builtinBaseSpec(), 'techne', rank);
  const coords = layout.reduce((s, t) => s + t.shape.reduce((a, b) => a * b, 1), 0);
  const rounds = 6;
  const server = await startCouncilServer({
    // Rounds never close on their own here: each measured upload goes to a fresh round's open slot.
    config: {
      ...defaults(dir),
      data_dir: join(dir, 'council'),
      port: 0,
      base_fingerprints: [BUILTIN_FINGERPRINT],
      layouts: { derive: { base: 'builtin', rank } },
      min_forges: 1000,
      strategy: 'fedavg',
    },
    log: () => undefined,
  });
  try {
    const config = { forgeEpsilon: 1e12, agentEpsilon: 1e12, delta: 1e-5, noiseMultiplier: 8, clipNorm: 1 };
    const results = {};
    for (const encoding of ['json', 'safetensors']) {
      const home = join(dir, encoding);
      const gate = PrivacyGate.open({ home, config, random: randomBytes });
      gate.consent.record(
        FEDERATING_AGENTS.map((agent) => ({ agent, allowed: true })),
        'flags',
        new Date(),
      );
      const { token } = await addForge(server.storage, `forge-${encoding}`, randomBytes, new Date());
      const t = httpTransport(server.url, token, { encoding });
      const round = (await t.currentRound()).round;
      const draw = [];
      const send = [];
      // One release per agent (each agent's slot in the open round is used once).
      for (const agent of FEDERATING_AGENTS.slice(0, rounds)) {
        const delta = adapterLayout(builtinBaseSpec(), agent, rank).map((s) => ({
          name: s.name,
          shape: s.shape,
          data: Float32Array.from({ length: s.shape[0] * s.shape[1] }, () => 0.001),
        }));
        let t0 = process.hrtime.bigint();
        const out = gate.recordRelease({
          round: `bench#${encoding}`,
          agent,
          delta,
          baseFingerprint: BUILTIN_FINGERPRINT,
        });
        draw.push(Number(process.hrtime.bigint() - t0) / 1e6);
        t0 = process.hrtime.bigint();
        await t.submitRelease(round, out.release);
        send.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
      gate.close();
      const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
      const envelope = {
        format: 'kourai.council-release/3',
        round: 'c0123456789abcde#1',
        agent: 'techne',
        base_fingerprint: BUILTIN_FINGERPRINT,
        mechanism: { name: 'gaussian', clip_norm: 1, noise_multiplier: 8, sample_rate: 1, accountant: 'rdp' },
      };
      results[encoding] = {
        draw: median(draw),
        send: median(send),
        bytes: releaseBodyBytes(envelope, layout, encoding),
      };
    }
    report(
      'round, per agent: keyed release (ledger row, clip, noise)',
      results.json.draw,
      'ms',
      `${coords.toLocaleString('en-US')} coordinates, median of ${rounds}`,
    );
    for (const e of ['json', 'safetensors']) {
      report(
        `round, per agent: upload to a council on 127.0.0.1 (${e})`,
        results[e].send,
        'ms',
        `body ${results[e].bytes.toLocaleString('en-US')} bytes, median of ${rounds}`,
      );
    }
    report(
      'safetensors body / JSON body: size',
      results.safetensors.bytes / results.json.bytes,
      '×',
      'baseline: the JSON document',
    );
    report(
      'safetensors body / JSON body: upload time',
      results.safetensors.send / results.json.send,
      '×',
      'baseline: the JSON document',
    );
  } finally {
    await server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await run((name, value, unit, note) =>
    console.log(`${name}: ${typeof value === 'number' ? value.toFixed(3) : value} ${unit}${note ? `  (${note})` : ''}`),
  );
}
