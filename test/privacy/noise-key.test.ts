import { randomBytes } from 'node:crypto';
import { chmodSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ExitCode, type KouraiError } from '../../src/errors.js';
import { deltaDigest, keyedNoise, loadNoiseKey, noiseKeyPath, type NoiseInfo } from '../../src/privacy/noise-key.js';
import { DEFAULT_PRIVACY_CONFIG } from '../../src/privacy/privacy-config.js';
import { PrivacyGate } from '../../src/privacy/round-gate.js';
import { removeDir, tempDir } from '../helpers/ctx.js';

let home: string;
beforeEach(() => {
  home = tempDir('kourai-noise-');
});
afterEach(() => removeDir(home));

const info: NoiseInfo = {
  round: 'c0123456789abcde#1',
  agent: 'aidos',
  clipNorm: 1,
  noiseMultiplier: 8,
  deltaDigest: 'ab'.repeat(32),
};
const delta = (v: number) => [{ name: 'w', shape: [64], data: new Float32Array(64).fill(v) }];

describe('the forge noise key', () => {
  it('is created once, 0600 in a 0700 directory, from the secure source, and then reused', () => {
    let calls = 0;
    const k1 = loadNoiseKey(home, (n) => {
      calls++;
      return randomBytes(n);
    });
    const k2 = loadNoiseKey(home, () => {
      throw new Error('must not be asked again');
    });
    expect(calls).toBe(1);
    expect(k2.equals(k1)).toBe(true);
    expect(statSync(noiseKeyPath(home)).mode & 0o777).toBe(0o600);
    expect(statSync(`${home}/secrets`).mode & 0o777).toBe(0o700);
    expect(readFileSync(noiseKeyPath(home), 'utf8').trim()).toBe(k1.toString('hex'));
  });

  it('refuses a key file others can read (exit 3) and a damaged one (exit 8), never replacing it', () => {
    loadNoiseKey(home, randomBytes);
    chmodSync(noiseKeyPath(home), 0o644);
    expect(
      (() => {
        try {
          loadNoiseKey(home, randomBytes);
        } catch (e) {
          return (e as KouraiError).exitCode;
        }
        return 0;
      })(),
    ).toBe(ExitCode.environment);
    writeFileSync(noiseKeyPath(home), 'not a key\n', { mode: 0o600 });
    chmodSync(noiseKeyPath(home), 0o600);
    expect(
      (() => {
        try {
          loadNoiseKey(home, randomBytes);
        } catch (e) {
          return (e as KouraiError).exitCode;
        }
        return 0;
      })(),
    ).toBe(ExitCode.integrity);
    expect(readFileSync(noiseKeyPath(home), 'utf8')).toBe('not a key\n');
  });
});

describe('keyed noise', () => {
  const key = randomBytes(32);
  it('is the same stream for the same key and release, a different one when anything differs', () => {
    const a = keyedNoise(key, info)(4096);
    expect(keyedNoise(key, info)(4096).equals(a)).toBe(true);
    // drawn in pieces: the same bytes
    const s = keyedNoise(key, info);
    expect(Buffer.concat([s(1000), s(3096)]).equals(a)).toBe(true);
    for (const other of [
      { ...info, round: 'c0123456789abcde#2' },
      { ...info, agent: 'metis' },
      { ...info, clipNorm: 2 },
      { ...info, noiseMultiplier: 4 },
      { ...info, deltaDigest: 'cd'.repeat(32) },
    ]) {
      expect(keyedNoise(key, other)(4096).equals(a)).toBe(false);
    }
    expect(keyedNoise(randomBytes(32), info)(4096).equals(a)).toBe(false);
  });

  it('looks uniform (byte frequencies within chance)', () => {
    const bytes = keyedNoise(key, info)(256 * 400);
    const counts = new Array<number>(256).fill(0);
    for (const b of bytes) counts[b] = (counts[b] as number) + 1;
    const chi2 = counts.reduce((s, c) => s + (c - 400) ** 2 / 400, 0);
    expect(chi2).toBeLessThan(400); // 255 degrees of freedom: p < 1e-6 above ~370
  });

  it('the delta digest covers names, shapes and every value', () => {
    const d = deltaDigest(delta(0.5));
    expect(deltaDigest(delta(0.5))).toBe(d);
    expect(deltaDigest(delta(0.25))).not.toBe(d);
    expect(deltaDigest([{ name: 'v', shape: [64], data: new Float32Array(64).fill(0.5) }])).not.toBe(d);
    expect(deltaDigest([{ name: 'w', shape: [8, 8], data: new Float32Array(64).fill(0.5) }])).not.toBe(d);
  });
});

describe('idempotent releases', () => {
  const open = () =>
    PrivacyGate.open({
      home,
      config: { ...DEFAULT_PRIVACY_CONFIG, noiseMultiplier: 1 },
      random: randomBytes,
      now: () => new Date('2026-10-01T00:00:00Z'),
    });

  it('a rolled-back ledger re-releasing the same round and delta produces the SAME noised bytes', () => {
    const g = open();
    g.consent.record([{ agent: 'aidos', allowed: true }], 'flags', new Date());
    const first = g.recordRelease({
      round: 'c0123456789abcde#3',
      agent: 'aidos',
      delta: delta(0.1),
      baseFingerprint: 'sha256:b',
    });
    g.close();
    // Roll the ledger back the way an old backup would: a fresh state database, same forge secret.
    removeDir(`${home}/kourai.db`);
    for (const f of ['kourai.db-wal', 'kourai.db-shm']) removeDir(`${home}/${f}`);
    const g2 = open();
    g2.consent.record([{ agent: 'aidos', allowed: true }], 'flags', new Date());
    const again = g2.recordRelease({
      round: 'c0123456789abcde#3',
      agent: 'aidos',
      delta: delta(0.1),
      baseFingerprint: 'sha256:b',
    });
    expect(again.reused).toBe(false); // the ledger did not know it...
    expect(again.release).toEqual(first.release); // ...and still no second look at the delta
    // a different round gets different noise
    const other = g2.recordRelease({
      round: 'c0123456789abcde#4',
      agent: 'aidos',
      delta: delta(0.1),
      baseFingerprint: 'sha256:b',
    });
    expect(other.release.tensors[0]?.data).not.toBe(first.release.tensors[0]?.data);
    g2.close();
  });
});
