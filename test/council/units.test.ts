import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  checkServeConfig,
  defaults,
  parseDuration,
  parseSize,
  resolveCouncilConfig,
} from '../../src/council/config.js';
import { normBound } from '../../src/council/norm-bound.js';
import { bearer, hashToken, newToken } from '../../src/council/tokens.js';
import { nextTrust, shouldExile, similarities } from '../../src/council/trust.js';
import { gaussian, rng } from '../aggregation/helpers.js';
import { tempDir } from '../helpers/ctx.js';
import { writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { BACKENDS, testDatabase, useBackend } from './helpers.js';

for (const backend of BACKENDS) {
  describe(`on ${backend}`, () => {
    useBackend(backend);

    describe('the norm bound S(1 + σ(√d + t))', () => {
      it('admits honestly clipped and noised updates (simulated, many dimensions and σ)', () => {
        fc.assert(
          fc.property(
            fc.integer(),
            fc.integer({ min: 1, max: 5000 }),
            fc.double({ min: 0, max: 3, noNaN: true }),
            fc.double({ min: 0.01, max: 10, noNaN: true }),
            (seed, d, sigma, S) => {
              const rand = rng(seed);
              // worst case for the bound: an update exactly at the clip
              const x = Array.from({ length: d }, () => gaussian(rand));
              const nx = Math.hypot(...x);
              const y = x.map((v) => (v / nx) * S + sigma * S * gaussian(rand));
              const norm = Math.sqrt(Float32Array.from(y).reduce((a, v) => a + v * v, 0));
              expect(norm).toBeLessThanOrEqual(normBound(S, sigma, d, 10));
            },
          ),
          { numRuns: 200 },
        );
      });

      it('is S (plus float32 slack) without noise', () => {
        expect(normBound(2, 0, 1000, 10)).toBeCloseTo(2 * (1 + 1e-6), 12);
      });

      it('never overflows into a number: a bound beyond float64 is Infinity, and serve refuses a policy whose widest bound is one', () => {
        // σ = 1e308 (the poisoner's declaration): σ(√d + t) overflows; so does S = 1e308 with any noise.
        expect(normBound(1, 1e308, 4096, 10)).toBe(Infinity);
        expect(normBound(1e308, 8, 4096, 10)).toBe(Infinity);
        expect(normBound(Infinity, 0, 1, 10)).toBe(Infinity);
        expect(normBound(1, Number.NaN, 1, 10)).toBe(Infinity);
        // The largest finite bound stays a finite number (no false refusal near the edge).
        expect(normBound(1e300, 1, 1e6, 10)).toBeCloseTo(1e300 * (1 + 1010) * (1 + 1e-6), -290);
        const dir = tempDir('kourai-policy-');
        const ctx = { env: { KOURAI_HOME: dir }, cwd: dir };
        const layouts = JSON.stringify({ '*': [{ name: 'w', shape: [4096] }] });
        const wide = resolveCouncilConfig(ctx, {
          layouts,
          base_fingerprints: ['sha256:x'],
          clip_norm: '0..1e300',
          noise_multiplier: '0..1e10',
        });
        expect(() => checkServeConfig(wide)).toThrow(
          /clip_norm ≤ 1e\+300 with noise_multiplier ≤ 10000000000 over 4096 coordinates allows norms beyond the float64 range/,
        );
        checkServeConfig(
          resolveCouncilConfig(ctx, {
            layouts,
            base_fingerprints: ['sha256:x'],
            clip_norm: '0..1e300',
            noise_multiplier: '0..10',
          }),
        );
      });
    });

    describe('tokens', () => {
      it('carry the forge id and 256 random bits; the council keeps only their sha256', () => {
        const t = newToken(42, Buffer.alloc(32, 7));
        expect(t).toMatch(/^kourai_42_[A-Za-z0-9_-]{43}$/);
        expect(hashToken(t)).toHaveLength(32);
        expect(hashToken(t).equals(hashToken(`${t.slice(0, -1)}x`))).toBe(false);
        expect(() => newToken(1, Buffer.alloc(16))).toThrow(/32 random bytes/);
        expect(bearer('Bearer abc')).toBe('abc');
        expect(bearer('Basic abc')).toBeNull();
        expect(bearer(undefined)).toBeNull();
      });
    });

    describe('trust', () => {
      it('similarity: 1 within τ× the median distance, (τ/ρ)² beyond, 0 for non-finite', () => {
        const s = similarities([1, 1, 1, 4, 9, Infinity], 1.5);
        expect(s.slice(0, 3)).toEqual([1, 1, 1]);
        // median of distances [1,1,1,2,3] (finite) = 1; ρ = 2 → (1.5/2)² ; ρ = 3 → (1.5/3)²
        expect(s[3]).toBeCloseTo(0.5625, 12);
        expect(s[4]).toBeCloseTo(0.25, 12);
        expect(s[5]).toBe(0);
        expect(similarities([0, 0, 5], 1.5)).toEqual([1, 1, 0]);
      });

      it('EMA recurrence; exile only after the warm-up and below the threshold', () => {
        const settings = { alpha: 0.3, threshold: 0.4, warmup: 3, tolerance: 1.5 };
        let t = 1;
        const seen: boolean[] = [];
        for (let r = 1; r <= 3; r++) {
          t = nextTrust(t, 0, settings.alpha);
          seen.push(shouldExile(t, r, settings));
        }
        expect(t).toBeCloseTo(0.343, 12);
        expect(seen).toEqual([false, false, true]);
        expect(shouldExile(0.1, 2, settings)).toBe(false);
        fc.assert(
          fc.property(
            fc.double({ min: 0, max: 1, noNaN: true }),
            fc.double({ min: 0, max: 1, noNaN: true }),
            fc.double({ min: 0.01, max: 1, noNaN: true }),
            (p, s, a) => {
              const n = nextTrust(p, s, a);
              expect(n).toBeGreaterThanOrEqual(Math.min(p, s) - 1e-15);
              expect(n).toBeLessThanOrEqual(Math.max(p, s) + 1e-15);
            },
          ),
        );
      });
    });

    describe('council configuration: defaults < file < env < flags', () => {
      it('takes each setting from the highest source and says where it came from', () => {
        const home = tempDir();
        mkdirSync(join(home, 'council'), { recursive: true });
        writeFileSync(
          join(home, 'council', 'council.json'),
          JSON.stringify({ port: 9000, min_forges: 5, strategy: 'bulyan', byzantine: 1, base_fingerprints: ['a'] }),
        );
        const ctx = {
          cwd: home,
          env: {
            KOURAI_HOME: home,
            KOURAI_COUNCIL_PORT: '9100',
            KOURAI_COUNCIL_ROUND_DEADLINE: '30m',
            KOURAI_COUNCIL_BASE_FINGERPRINTS: 'b, c',
          },
        };
        const r = resolveCouncilConfig(ctx, { port: '9200', payload_limit: '8MiB' });
        expect(r.config).toMatchObject({
          port: 9200,
          min_forges: 5,
          strategy: 'bulyan',
          byzantine: 1,
          round_deadline: 1800,
          payload_limit: 8 * 1024 * 1024,
          base_fingerprints: ['b', 'c'],
          host: '127.0.0.1',
          data_dir: join(home, 'council'),
        });
        expect(r.sources).toMatchObject({
          port: 'flag --port',
          min_forges: `file ${join(home, 'council', 'council.json')}`,
          round_deadline: 'env KOURAI_COUNCIL_ROUND_DEADLINE',
          host: 'default',
        });
        expect(() => checkServeConfig(r)).toThrow(
          /min_forges is 5 .* but bulyan with f=1 needs n ≥ 4f\+3 \(at least 7 updates\)/,
        );
      });

      it('names the source of a bad value; serve needs a base fingerprint', () => {
        const home = tempDir();
        expect(() => resolveCouncilConfig({ cwd: home, env: { KOURAI_HOME: home } }, { port: 'abc' })).toThrow(
          /^port \(from flag --port\): "abc" is not a number/,
        );
        expect(() =>
          resolveCouncilConfig({ cwd: home, env: { KOURAI_HOME: home, KOURAI_COUNCIL_STRATEGY: 'mean' } }, {}),
        ).toThrow(/^strategy \(from env KOURAI_COUNCIL_STRATEGY\)/);
        expect(() =>
          resolveCouncilConfig({ cwd: home, env: { KOURAI_HOME: home } }, { config: join(home, 'nope.json') }),
        ).toThrow(/council config file not found/);
        writeFileSync(join(home, 'x.json'), '{"prot": 1}');
        expect(() => resolveCouncilConfig({ cwd: home, env: { KOURAI_HOME: home } }, { config: 'x.json' })).toThrow(
          /unknown key "prot"/,
        );
        expect(() => checkServeConfig(resolveCouncilConfig({ cwd: home, env: { KOURAI_HOME: home } }, {}))).toThrow(
          /no accepted base-model fingerprint/,
        );
        expect(defaults(home).strategy).toBe('lora-fair');
      });

      it('parses durations and sizes', () => {
        expect([
          parseDuration('90s'),
          parseDuration('15m'),
          parseDuration('24h'),
          parseDuration('2d'),
          parseDuration('250ms'),
          parseDuration(5),
        ]).toEqual([90, 900, 86400, 172800, 0.25, 5]);
        expect([parseSize('64MiB'), parseSize('1GB'), parseSize('512k'), parseSize('1000'), parseSize('2kb')]).toEqual([
          67108864, 1e9, 524288, 1000, 2000,
        ]);
        expect(() => parseSize('lots')).toThrow(/not a size/);
      });
    });

    describe('privacy policy ranges in the council configuration', () => {
      it('"1", "0.5..1", 8 and {min, max} all read as ranges; junk is refused', async () => {
        const { parseRange } = await import('../../src/council/config.js');
        expect(parseRange('1')).toEqual({ min: 1, max: 1 });
        expect(parseRange('0..10')).toEqual({ min: 0, max: 10 });
        expect(parseRange(' 0.5 .. 1 ')).toEqual({ min: 0.5, max: 1 });
        expect(parseRange('1e-3..2.5e2')).toEqual({ min: 0.001, max: 250 });
        expect(parseRange(8)).toEqual({ min: 8, max: 8 });
        expect(parseRange({ min: 1, max: 2 })).toEqual({ min: 1, max: 2 });
        for (const bad of ['8..', '..8', 'a..b', '1..2..3', ''])
          expect(() => parseRange(bad)).toThrow(/is not a value or a range/);
      });
    });

    describe("layouts derived from the base model (the trainer's adapterLayout)", () => {
      it('the council accepts exactly the tensors the trainer produces for each agent', async () => {
        const { configuredLayouts } = await import('../../src/council/layouts.js');
        const { adapterLayout } = await import('../../src/train/adapter-layout.js');
        const { builtinBaseSpec, inputDim } = await import('../../src/train/base-spec.js');
        const layouts = configuredLayouts({ derive: { base: 'builtin', rank: 4 } });
        expect([...layouts.keys()]).toEqual([
          'hephaestus',
          'metis',
          'techne',
          'dokimasia',
          'kallos',
          'mneme',
          'aidos',
          'aletheia',
        ]);
        for (const [agent, l] of layouts)
          expect(l.tensors.map((t) => ({ name: t.name, shape: t.shape }))).toEqual(
            adapterLayout(builtinBaseSpec(), agent, 4),
          );
        expect(layouts.get('metis')?.tensors[0]).toMatchObject({
          name: 'base_model.model.encoder.dense.lora_A.weight',
          shape: [4, inputDim(builtinBaseSpec())],
        });
      });

      it('serve: a built-in derivation supplies the built-in fingerprint, and refuses a council that accepts only other bases', async () => {
        const { BUILTIN_FINGERPRINT } = await import('../../src/train/fingerprint.js');
        const dir = tempDir('kourai-derive-');
        const ctx = { env: { KOURAI_HOME: dir }, cwd: dir };
        const r = resolveCouncilConfig(ctx, { layouts: '{"derive": {"base": "builtin", "rank": 8}}' });
        checkServeConfig(r);
        expect(r.config.base_fingerprints).toEqual([BUILTIN_FINGERPRINT]);
        const other = resolveCouncilConfig(ctx, {
          layouts: '{"derive": {"base": "builtin", "rank": 8}}',
          base_fingerprints: ['sha256:other'],
        });
        expect(() => checkServeConfig(other)).toThrow(
          new RegExp(`layouts are derived from the built-in base, but its fingerprint ${BUILTIN_FINGERPRINT}`),
        );
        expect(() => resolveCouncilConfig(ctx, { layouts: '{"derive": {"base": "builtin", "rank": 0}}' })).toThrow(
          /layouts \(from flag --layouts\)/,
        );
        expect(() => resolveCouncilConfig(ctx, { layouts: '{"hermes": [{"name": "a", "shape": [1]}]}' })).toThrow(
          /keys must be federating agents/,
        );
        expect(() => checkServeConfig(resolveCouncilConfig(ctx, { base_fingerprints: ['x'] }))).toThrow(
          /no adapter layouts/,
        );
      });
    });

    describe('authentication does the same work whether or not the forge id in a token exists', () => {
      it('a wrong token is looked up once, by the hash of the whole token, never by the id it carries', async () => {
        const { openCouncilStorage } = await import('../../src/council/open-storage.js');
        const { addForge } = await import('../../src/council/forges.js');
        const { authenticate } = await import('../../src/council/auth.js');
        const { randomBytes } = await import('node:crypto');
        const storage = await openCouncilStorage(
          { data_dir: tempDir('kourai-auth-'), database: await testDatabase() },
          'create',
        );
        try {
          const { token } = await addForge(storage, 'athens', randomBytes, new Date());
          // Every storage call authenticate makes, with its arguments.
          const calls: string[] = [];
          const spied = new Proxy(storage, {
            get(target, prop, receiver) {
              const v = Reflect.get(target, prop, receiver) as unknown;
              if (typeof v !== 'function') return v;
              return (...a: unknown[]) => {
                calls.push(
                  `${String(prop)}(${a.map((x) => (Buffer.isBuffer(x) ? `sha256:${x.toString('hex')}` : JSON.stringify(x))).join(', ')})`,
                );
                return (v as (...b: unknown[]) => unknown).apply(target, a);
              };
            },
          });
          const existingId = `${token.slice(0, -4)}${token.endsWith('AAAA') ? 'BBBB' : 'AAAA'}`; // the id of athens, a wrong secret
          const missingId = token.replace(/^kourai_\d+_/, 'kourai_9999_');
          for (const t of [existingId, missingId]) {
            calls.length = 0;
            await expect(authenticate(spied, `Bearer ${t}`)).rejects.toMatchObject({ code: 'unauthorized' });
            expect(calls).toEqual([`forgeByTokenHash(sha256:${hashToken(t).toString('hex')})`]);
          }
          expect((await authenticate(spied, `Bearer ${token}`)).name).toBe('athens');
        } finally {
          await storage.close();
        }
      });
    });
  });
}
