import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { KouraiError } from '../../src/errors.js';
import { BudgetExhaustedError, ExitCode } from '../../src/errors.js';
import { f32FromBase64 as fromBase64F32 } from '../../src/tensor/float-codec.js';
import type { NamedTensor } from '../../src/tensor/tensor.js';
import type { SecureBytes } from '../../src/privacy/gaussian-noise.js';
import type { NoiseInfo } from '../../src/privacy/noise-key.js';
import { DEFAULT_PRIVACY_CONFIG, type PrivacyConfig } from '../../src/privacy/privacy-config.js';
import { epsilonFor } from '../../src/privacy/rdp-accountant.js';
import { PrivacyGate } from '../../src/privacy/round-gate.js';
import { PrivacyLedger } from '../../src/store/privacy-ledger.js';
import { openStateDb } from '../../src/store/state-db.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'kourai-gate-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

const FP = 'sha256:test-base';
const delta = (v = 0.5): NamedTensor[] => [{ name: 'w', shape: [4], data: Float32Array.of(v, v, v, v) }];
/** `noise`: replaces the keyed noise streams (to watch or break the moment noise is drawn). */
const open = (over: Partial<PrivacyConfig> = {}, noise?: (info: NoiseInfo) => SecureBytes): PrivacyGate =>
  PrivacyGate.open({
    home,
    config: { ...DEFAULT_PRIVACY_CONFIG, ...over },
    random: randomBytes,
    ...(noise ? { noise } : {}),
    now: () => new Date('2026-10-01T00:00:00Z'),
  });
const allow = (g: PrivacyGate, ...agents: ('aidos' | 'metis' | 'techne')[]): void => {
  g.consent.record(
    agents.map((agent) => ({ agent, allowed: true })),
    'flags',
    new Date(),
  );
};

describe('PrivacyGate: the API the federation round calls', () => {
  it('plans, releases (ledger row first), and records the outcome', () => {
    const g = open({ noiseMultiplier: 2 });
    allow(g, 'aidos');
    const plan = g.planRound({ round: '1', shareable: { aidos: 3, metis: 5 } });
    expect(plan.agents.filter((a) => a.speaks).map((a) => a.agent)).toEqual(['aidos']);
    const out = g.recordRelease({ round: '1', agent: 'aidos', delta: delta(), baseFingerprint: FP });
    expect(out.reused).toBe(false);
    expect(out.release).toMatchObject({ round: '1', agent: 'aidos', mechanism: { noise_multiplier: 2, clip_norm: 1 } });
    expect(out.epsilonAgent).toBeCloseTo(
      epsilonFor({ noiseMultiplier: 2, sampleRate: 1, steps: 1, delta: 1e-5 }).epsilon,
      12,
    );
    g.recordOutcome(out.releaseId, 'submitted');
    expect(g.ledger.releases()).toHaveLength(1);
    expect(g.ledger.events()).toMatchObject([{ releaseId: out.releaseId, event: 'submitted' }]);
    expect(g.ledger.payload(out.releaseId)?.payload).toBe(JSON.stringify(out.release));
    expect(g.planRound({ round: '1', shareable: { aidos: 3 } }).agents.find((a) => a.agent === 'aidos')?.verdict).toBe(
      'already_released',
    );
    g.close();
  });

  it('a retry of the same round resends the SAME noised delta and spends nothing more', () => {
    const g = open();
    allow(g, 'aidos');
    const first = g.recordRelease({ round: '9', agent: 'aidos', delta: delta(), baseFingerprint: FP });
    g.recordOutcome(first.releaseId, 'failed', 'connection reset');
    const again = g.recordRelease({ round: '9', agent: 'aidos', delta: delta(0.9), baseFingerprint: FP });
    expect(again.reused).toBe(true);
    expect(again.release).toEqual(first.release);
    expect(g.ledger.releases()).toHaveLength(1);
    g.close();
  });

  it('a failed submission never refunds: the next round costs more', () => {
    const g = open({ noiseMultiplier: 1, agentEpsilon: 100, forgeEpsilon: 100 });
    allow(g, 'aidos');
    const r1 = g.recordRelease({ round: '1', agent: 'aidos', delta: delta(), baseFingerprint: FP });
    g.recordOutcome(r1.releaseId, 'failed');
    const r2 = g.recordRelease({ round: '2', agent: 'aidos', delta: delta(), baseFingerprint: FP });
    expect(r2.epsilonAgent).toBeCloseTo(
      epsilonFor({ noiseMultiplier: 1, sampleRate: 1, steps: 2, delta: 1e-5 }).epsilon,
      12,
    );
    g.close();
  });

  it('refuses without consent (exit 7), and honours a revocation from the next release on', () => {
    const g = open();
    expect(() => g.recordRelease({ round: '1', agent: 'metis', delta: delta(), baseFingerprint: FP })).toThrow(
      /metis has no consent/,
    );
    allow(g, 'metis');
    g.recordRelease({ round: '1', agent: 'metis', delta: delta(), baseFingerprint: FP });
    g.consent.record([{ agent: 'metis', allowed: false }], 'flags', new Date());
    try {
      g.recordRelease({ round: '2', agent: 'metis', delta: delta(), baseFingerprint: FP });
      expect.unreachable();
    } catch (err) {
      expect((err as KouraiError).exitCode).toBe(ExitCode.conflict);
      expect((err as KouraiError).code).toBe('no_consent');
    }
    expect(g.ledger.releases()).toHaveLength(1);
    g.close();
  });

  it('refuses the release that would exceed the budget with BudgetExhaustedError (exit 4); nothing is written', () => {
    const g = open({ noiseMultiplier: 1 }); // 2 releases fit in ε = 8
    allow(g, 'techne');
    g.recordRelease({ round: '1', agent: 'techne', delta: delta(), baseFingerprint: FP });
    g.recordRelease({ round: '2', agent: 'techne', delta: delta(), baseFingerprint: FP });
    try {
      g.recordRelease({ round: '3', agent: 'techne', delta: delta(), baseFingerprint: FP });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(BudgetExhaustedError);
      expect((err as BudgetExhaustedError).exitCode).toBe(ExitCode.budgetExhausted);
      expect((err as Error).message).toMatch(/over the budget of 8/);
    }
    expect(g.ledger.releases()).toHaveLength(2);
    g.close();
  });

  it('refuses bond-only and unknown agents and bad deltas before spending anything', () => {
    const g = open();
    allow(g, 'aidos');
    expect(() => g.recordRelease({ round: '1', agent: 'cupid', delta: delta(), baseFingerprint: FP })).toThrow(
      /bond-only/,
    );
    expect(() => g.recordRelease({ round: '1', agent: 'hermes', delta: delta(), baseFingerprint: FP })).toThrow(
      /unknown agent/,
    );
    expect(() =>
      g.recordRelease({
        round: '1',
        agent: 'aidos',
        delta: [{ name: 'w', shape: [2], data: Float32Array.of(1, NaN) }],
        baseFingerprint: FP,
      }),
    ).toThrow(/non-finite/);
    expect(() => g.recordRelease({ round: '1', agent: 'aidos', delta: delta(), baseFingerprint: '' })).toThrow(
      /base fingerprint/,
    );
    expect(() => g.recordRelease({ round: '', agent: 'aidos', delta: delta(), baseFingerprint: FP })).toThrow(/round/);
    expect(g.ledger.releases()).toHaveLength(0);
    g.close();
  });

  it('writes the ledger row BEFORE drawing noise: a failure while drawing leaves the budget spent', () => {
    let fail = false;
    const g = open({}, () => (n: number): Buffer => {
      if (fail) throw new Error('entropy source failed');
      return randomBytes(n);
    });
    allow(g, 'aidos');
    // What the ledger holds at the moment the first noise byte is requested:
    let rowsWhenNoiseDrawn = -1;
    const probe = open({}, () => (n) => {
      rowsWhenNoiseDrawn = new PrivacyLedger(openStateDb(home)).releases().length;
      return randomBytes(n);
    });
    probe.recordRelease({ round: '1', agent: 'aidos', delta: delta(), baseFingerprint: FP });
    expect(rowsWhenNoiseDrawn).toBe(1);
    probe.close();
    fail = true;
    expect(() => g.recordRelease({ round: '2', agent: 'aidos', delta: delta(), baseFingerprint: FP })).toThrow(
      'entropy source failed',
    );
    expect(g.ledger.releases().map((r) => r.round)).toEqual(['1', '2']); // spent, not refunded
    expect(g.ledger.payload(2)).toBeUndefined();
    fail = false;
    expect(() => g.recordRelease({ round: '2', agent: 'aidos', delta: delta(), baseFingerprint: FP })).toThrow(
      /not stored.*budget stays spent/,
    );
    g.close();
  });

  it('releases values that are the clipped delta plus noise of the configured scale', () => {
    const g = open({ noiseMultiplier: 0.001, clipNorm: 1, agentEpsilon: 1e9, forgeEpsilon: 1e9 });
    allow(g, 'aidos');
    const out = g.recordRelease({ round: '1', agent: 'aidos', delta: delta(10), baseFingerprint: FP }); // norm 20 -> clipped to 1
    const data = fromBase64F32(out.release.tensors[0]?.data ?? '');
    for (const x of data) expect(Math.abs(x - 0.5)).toBeLessThan(0.006); // 0.5 each; noise σS = 0.001
    expect(out.local.clippedNorm).toBeLessThanOrEqual(1);
    g.close();
  });
});
