import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EnvironmentError, ExitCode, UsageError } from '../../src/errors.js';
import { DEFAULT_PRIVACY_CONFIG, resolvePrivacyConfig } from '../../src/privacy/privacy-config.js';

let home: string;
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'kourai-cfg-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('privacy settings: defaults < config file < environment < flags', () => {
  it('defaults: ε = 8 for the forge and each agent at δ = 1e-5, σ = 8, S = 1', () => {
    const r = resolvePrivacyConfig({ home, env: {} });
    expect(r.config).toEqual({ forgeEpsilon: 8, agentEpsilon: 8, delta: 1e-5, noiseMultiplier: 8, clipNorm: 1 });
    expect(r.config).toEqual(DEFAULT_PRIVACY_CONFIG);
    expect(r.file).toBeNull();
    expect(Object.values(r.origin).every((o) => o === 'default')).toBe(true);
  });

  it('each layer overrides the one below, key by key', () => {
    writeFileSync(
      join(home, 'config.json'),
      JSON.stringify({ other: 1, privacy: { forge_epsilon: 4, agent_epsilon: 3, noise_multiplier: 5 } }),
    );
    const r = resolvePrivacyConfig({
      home,
      env: { KOURAI_PRIVACY_AGENT_EPSILON: '2', KOURAI_PRIVACY_NOISE_MULTIPLIER: '6' },
      flags: { noiseMultiplier: 7, clipNorm: undefined },
    });
    expect(r.config).toEqual({ forgeEpsilon: 4, agentEpsilon: 2, delta: 1e-5, noiseMultiplier: 7, clipNorm: 1 });
    expect(r.origin).toEqual({
      forgeEpsilon: 'file',
      agentEpsilon: 'env',
      delta: 'default',
      noiseMultiplier: 'flag',
      clipNorm: 'default',
    });
    expect(r.file).toBe(join(home, 'config.json'));
  });

  it('bad values name where they came from, with the documented exit code', () => {
    writeFileSync(join(home, 'config.json'), JSON.stringify({ privacy: { delta: 1.5 } }));
    expect(() => resolvePrivacyConfig({ home, env: {} })).toThrow(
      /privacy.delta = 1.5: δ must be strictly between 0 and 1/,
    );
    writeFileSync(join(home, 'config.json'), JSON.stringify({ privacy: { sigma: 1 } }));
    expect(() => resolvePrivacyConfig({ home, env: {} })).toThrow(/unknown key privacy.sigma/);
    writeFileSync(join(home, 'config.json'), '{ nope');
    expect(() => resolvePrivacyConfig({ home, env: {} })).toThrow(EnvironmentError);
    rmSync(join(home, 'config.json'));
    try {
      resolvePrivacyConfig({ home, env: { KOURAI_PRIVACY_NOISE_MULTIPLIER: '0' } });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(EnvironmentError);
      expect((err as EnvironmentError).exitCode).toBe(ExitCode.environment);
      expect((err as Error).message).toMatch(/KOURAI_PRIVACY_NOISE_MULTIPLIER=0: σ must be greater than 0/);
    }
    expect(() => resolvePrivacyConfig({ home, env: { KOURAI_PRIVACY_DELTA: 'abc' } })).toThrow(/not a number/);
    expect(() => resolvePrivacyConfig({ home, env: {}, flags: { clipNorm: -1 } })).toThrow(UsageError);
    expect(() => resolvePrivacyConfig({ home, env: {}, flags: { clipNorm: -1 } })).toThrow(/--clip-norm -1/);
  });
});
