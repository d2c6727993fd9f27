// Privacy benchmarks: the RDP accountant (151 Opacus orders), the σ search, Gaussian noise from
// node:crypto, a full release (clip + noise + encode) and a durable ledger append.
// Contract: export async function run(report), report(name, value, unit, note?). Uses dist/ (npm run bench builds).
// Standalone: node bench/privacy.mjs
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = new URL('../dist/', import.meta.url);
const load = (p) => import(new URL(p, dist).href);

function time(fn, { minMs = 300, minRuns = 3 } = {}) {
  fn(); // warm-up
  let runs = 0;
  const t0 = process.hrtime.bigint();
  let elapsed = 0;
  while (runs < minRuns || elapsed < minMs) {
    fn();
    runs++;
    elapsed = Number(process.hrtime.bigint() - t0) / 1e6;
  }
  return elapsed / runs; // ms per run
}

export async function run(report) {
  const { epsilonFor, sigmaForEpsilon, DEFAULT_ORDERS } = await load('privacy/rdp-accountant.js');
  const { GaussianSampler } = await load('privacy/gaussian-noise.js');
  const { buildRelease } = await load('privacy/release.js');
  const { PrivacyGate } = await load('privacy/round-gate.js');

  const n = DEFAULT_ORDERS.length;
  report(
    'accountant: ε over 151 orders, q = 1',
    time(() => epsilonFor({ noiseMultiplier: 8, sampleRate: 1, steps: 160, delta: 1e-5 })),
    'ms',
    `${n} orders`,
  );
  report(
    'accountant: ε over 151 orders, q = 0.01 (fractional-order series)',
    time(() => epsilonFor({ noiseMultiplier: 1, sampleRate: 0.01, steps: 1000, delta: 1e-5 })),
    'ms',
    `${n} orders`,
  );
  report(
    'accountant: σ search, q = 1, 160 rounds to ε = 8',
    time(() => sigmaForEpsilon({ epsilon: 8, sampleRate: 1, steps: 160, delta: 1e-5 })),
    'ms',
    'bisection to 1e-10 relative',
  );
  report(
    'accountant: σ search, q = 0.01, 1000 steps to ε = 2.1',
    time(() => sigmaForEpsilon({ epsilon: 2.1, sampleRate: 0.01, steps: 1000, delta: 1e-5 }), {
      minMs: 1000,
      minRuns: 2,
    }),
    'ms',
  );

  const out = new Float64Array(1_000_000);
  const sampler = new GaussianSampler(randomBytes);
  const ms = time(() => sampler.fill(out), { minMs: 1000, minRuns: 3 });
  report(
    'noise: N(0,1) from node:crypto (Marsaglia polar, 53-bit uniforms)',
    1e6 / (ms / 1000) / 1e6,
    'M floats/s',
    `1M floats in ${ms.toFixed(1)} ms`,
  );

  const delta = [
    { name: 'lora_A', shape: [1000, 500], data: new Float32Array(500_000).fill(0.001) },
    { name: 'lora_B', shape: [500, 1000], data: new Float32Array(500_000).fill(-0.001) },
  ];
  report(
    'release: clip + noise + base64 of a 1M-parameter delta',
    time(
      () =>
        buildRelease({
          round: '1',
          agent: 'aidos',
          delta,
          clipNorm: 1,
          noiseMultiplier: 8,
          sampler: new GaussianSampler(randomBytes),
        }),
      { minMs: 1000, minRuns: 3 },
    ),
    'ms',
  );

  const home = mkdtempSync(join(tmpdir(), 'kourai-bench-privacy-'));
  try {
    const config = { forgeEpsilon: 1e12, agentEpsilon: 1e12, delta: 1e-5, noiseMultiplier: 8, clipNorm: 1 };
    const gate = PrivacyGate.open({ home, config, random: randomBytes });
    gate.consent.record([{ agent: 'aidos', allowed: true }], 'flags', new Date());
    const small = [{ name: 'w', shape: [16], data: new Float32Array(16).fill(0.1) }];
    let round = 0;
    const per = time(() => gate.recordRelease({ round: String(round++), agent: 'aidos', delta: small }), {
      minMs: 1000,
      minRuns: 20,
    });
    report(
      'ledger: durable release (row + payload, synchronous = FULL, chain verified)',
      per,
      'ms',
      `after ${round} releases in the ledger`,
    );
    gate.close();
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await run((name, value, unit, note) =>
    console.log(`${name}: ${typeof value === 'number' ? value.toFixed(3) : value} ${unit}${note ? `  (${note})` : ''}`),
  );
}
