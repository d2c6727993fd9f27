import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { defaults, type CouncilConfig } from '../../src/council/config.js';
import { Council } from '../../src/council/council.js';
import { CouncilHttpError } from '../../src/council/http-error.js';
import { SqliteCouncilStorage } from '../../src/council/sqlite-storage.js';
import type { ForgeRow } from '../../src/council/storage.js';
import { applyCouncilPolicy } from '../../src/privacy/council-policy.js';
import { DEFAULT_PRIVACY_CONFIG } from '../../src/privacy/privacy-config.js';
import { releaseEpsilon } from '../../src/privacy/privacy-floor.js';
import { sigmaForEpsilon } from '../../src/privacy/rdp-accountant.js';
import { publicInit } from '../../src/protocol/public-init.js';
import { VirtualClock } from '../../src/runtime/clock.js';
import { f32ToBase64 } from '../../src/tensor/float-codec.js';
import { tensorFromJson } from '../../src/tensor/json.js';
import { FINGERPRINT, SPECS } from './helpers.js';

const root = mkdtempSync(join(tmpdir(), 'kourai-council-step-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

async function council(over: Partial<CouncilConfig>) {
  const dir = mkdtempSync(join(root, 'c-'));
  const storage = new SqliteCouncilStorage(dir);
  const clock = new VirtualClock();
  const config: CouncilConfig = {
    ...defaults(dir),
    data_dir: dir,
    strategy: 'fedavg',
    min_forges: 2,
    base_fingerprints: [FINGERPRINT],
    clip_norm: { min: 1, max: 1 },
    noise_multiplier: { min: 0, max: 0 },
    layouts: { '*': SPECS },
    ...over,
  };
  const c = new Council({ storage, config, clock, log: () => undefined });
  const forges: ForgeRow[] = [];
  for (const name of ['a', 'b'])
    forges.push(await storage.addForge(name, clock.now().toISOString(), () => randomBytes(32)));
  await c.start();
  return {
    c,
    forges,
    close: async () => {
      await c.stop();
      await storage.close();
    },
  };
}

/** An update for the test layout: value v everywhere (norm v·√28, below S = 1 for small v). */
function body(v: number, sigma = 0) {
  return {
    base_fingerprint: FINGERPRINT,
    privacy: { clip_norm: 1, noise_multiplier: sigma },
    tensors: SPECS.map((s) => {
      const n = s.shape.reduce((a, b) => a * b, 1);
      return { name: s.name, shape: s.shape, dtype: 'F32' as const, data: f32ToBase64(new Float32Array(n).fill(v)) };
    }),
  };
}

describe("the council's server step", () => {
  it('adds server_lr × the aggregate update to the previous global, and publishes the step', async () => {
    const moved: number[][] = [];
    for (const lr of [1, 3]) {
      const { c, forges, close } = await council({ server_lr: lr });
      try {
        const round = (await c.currentRound()).round;
        expect((await c.roundStatus(forges[0] as ForgeRow, round)).strategy.server_lr).toBe(lr);
        await c.submit(forges[0] as ForgeRow, round, 'techne', body(0.01));
        await c.submit(forges[1] as ForgeRow, round, 'techne', body(0.03));
        for (const f of forges) await c.seal(f, round);
        await c.idle();
        const g = await c.adapter('techne');
        const init = publicInit(SPECS, 'techne').flatMap((t) => Array.from(t.data));
        const flat = g.tensors.flatMap((t) => Array.from(tensorFromJson(t).data));
        moved.push(flat.map((v, k) => v - (init[k] as number)));
      } finally {
        await close();
      }
    }
    // FedAvg of 0.01 and 0.03 is 0.02 everywhere: the step of 1 moves 0.02, the step of 3 moves 0.06.
    for (const d of moved[0] ?? []) expect(d).toBeCloseTo(0.02, 6);
    for (const d of moved[1] ?? []) expect(d).toBeCloseTo(0.06, 6);
  });
});

describe('a council with a target ε', () => {
  it('publishes a σ its forges can afford under their privacy floor, says why, and refuses the lower σ', async () => {
    const { c, forges, close } = await council({ epsilon: 8, epsilon_rounds: 4, sample_rate: 0.1 });
    try {
      const round = (await c.currentRound()).round;
      const p = (await c.roundStatus(forges[0] as ForgeRow, round)).privacy_policy;
      const observer = sigmaForEpsilon({ epsilon: 8, delta: 1e-5, steps: 4, sampleRate: 0.1, tolerance: 1e-6 });
      // The observer's σ alone costs a forge more than its whole lifetime ε in one release.
      expect(releaseEpsilon(observer.noiseMultiplier, 1e-5)).toBeGreaterThan(8);
      expect(releaseEpsilon(p.noise_multiplier, 1e-5)).toBeLessThanOrEqual(1);
      expect(p.accepted.noise_multiplier).toEqual({ min: p.noise_multiplier, max: p.noise_multiplier });
      expect(p.derivation).toMatchObject({
        target_epsilon: 8,
        rounds: 4,
        sample_rate: 0.1,
        agent_epsilon: 8,
        binding: 'floor',
      });
      // A forge whose own σ is at most the published one follows it.
      const forge = applyCouncilPolicy(
        { ...DEFAULT_PRIVACY_CONFIG, noiseMultiplier: 4 },
        {
          clipNorm: p.clip_norm,
          noiseMultiplier: p.noise_multiplier,
        },
      );
      expect(forge.ok).toBe(true);
      await expect(
        c.submit(forges[0] as ForgeRow, round, 'techne', body(0.01, observer.noiseMultiplier)),
      ).rejects.toSatisfy((e: unknown) => e instanceof CouncilHttpError && e.code === 'privacy_policy_violation');
    } finally {
      await close();
    }
  });
});
