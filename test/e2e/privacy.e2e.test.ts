import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';

/** The real binary (`npm test` builds dist/ first), a temporary KOURAI_HOME, a clean environment. */
const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin/kourai.js');
let home: string;

function kourai(
  args: string[],
  opts: { env?: Record<string, string>; nodeArgs?: string[] } = {},
): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [...(opts.nodeArgs ?? []), bin, ...args], {
    cwd: home,
    env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home, ...(opts.env ?? {}) },
    encoding: 'utf8',
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

beforeAll(() => {
  if (!existsSync(join(root, 'dist/main.js')))
    throw new Error('dist/ is missing: run `npm run build` (npm test does) before the e2e tests');
});
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'kourai-e2e-privacy-'));
});
afterEach(() => rmSync(home, { recursive: true, force: true }));

describe('kourai privacy (real binary)', () => {
  it('privacy epsilon --json: one JSON document matching Opacus, nothing on stderr, exit 0', () => {
    const r = kourai(['privacy', 'epsilon', '--sigma', '2', '--steps', '10', '--json']);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ sigma: 2, sample_rate: 1, steps: 10, delta: 1e-5, order: 3.9, orders: 151 });
    expect(Math.abs(doc.epsilon - 8.079406222420491) / 8.079406222420491).toBeLessThan(1e-6);
    expect(Math.abs(doc.epsilon_exact - 7.511275900744791) / 7.511275900744791).toBeLessThan(1e-6);
  });

  it('privacy epsilon with σ <= 0: exit 2, the JSON error on stdout, one line on stderr', () => {
    const r = kourai(['privacy', 'epsilon', '--sigma', '0', '--json']);
    expect(r.code).toBe(2);
    expect(JSON.parse(r.stdout)).toEqual({
      error: { code: 'usage', message: '--sigma: σ must be greater than 0', hint: null, exit_code: 2 },
    });
    expect(r.stderr).toBe('kourai: --sigma: σ must be greater than 0\n');
  });

  it('privacy sigma --json inverts privacy epsilon', () => {
    const s = JSON.parse(kourai(['privacy', 'sigma', '--epsilon', '4', '--steps', '20', '--json']).stdout);
    const e = JSON.parse(kourai(['privacy', 'epsilon', '--sigma', String(s.sigma), '--steps', '20', '--json']).stdout);
    expect(e.epsilon).toBeLessThanOrEqual(4);
    expect(e.epsilon).toBeGreaterThan(4 - 1e-6);
  });

  it('federate consent --allow ... --deny ... --json stores consent that the next commands honour', () => {
    const r = kourai(['federate', 'consent', '--allow', 'aidos,metis', '--deny', 'kallos', '--json']);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ changed: true, via: 'flags', applies_from: 'next_round' });
    expect(doc.agents.filter((a: { allowed: boolean }) => a.allowed).map((a: { agent: string }) => a.agent)).toEqual([
      'aidos',
      'metis',
    ]);
    expect(typeof doc.agents[1].decided_at).toBe('string');
    expect(existsSync(join(home, 'kourai.db'))).toBe(true);
    const show = JSON.parse(kourai(['federate', 'consent', '--show', '--json']).stdout);
    expect(show.changed).toBe(false);
    expect(show.agents.find((a: { agent: string }) => a.agent === 'metis').allowed).toBe(true);
  });

  it('federate consent: an unknown agent is named (exit 2); cupid in --allow is refused (exit 2); no flags without a terminal names the flags', () => {
    const unknown = kourai(['federate', 'consent', '--allow', 'aidos,hermes', '--json']);
    expect(unknown.code).toBe(2);
    expect(JSON.parse(unknown.stdout).error.message).toMatch(/unknown agent "hermes"/);
    const cupid = kourai(['federate', 'consent', '--allow', 'cupid']);
    expect(cupid.code).toBe(2);
    expect(cupid.stderr).toMatch(/cupid is bond-only/);
    const none = kourai(['federate', 'consent']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/hint: pass --allow a,b --deny c/);
  });

  it('privacy release: spends, then exits 4 when the budget is exhausted; whisper shows it; ledger lists it', () => {
    writeFileSync(join(home, 'delta.json'), JSON.stringify({ tensors: [{ name: 'w', shape: [3], data: [1, 2, 2] }] }));
    kourai(['federate', 'consent', '--allow', 'techne']);
    const env = { KOURAI_PRIVACY_NOISE_MULTIPLIER: '1' };
    expect(
      kourai(
        [
          'privacy',
          'release',
          '--agent',
          'techne',
          '--round',
          '1',
          '--file',
          'delta.json',
          '--base-fingerprint',
          'sha256:test-base',
          '--out',
          'r1.json',
        ],
        { env },
      ).code,
    ).toBe(0);
    expect(JSON.parse(readFileSync(join(home, 'r1.json'), 'utf8')).mechanism).toEqual({
      name: 'gaussian',
      clip_norm: 1,
      noise_multiplier: 1,
      sample_rate: 1,
      accountant: 'rdp',
    });
    expect(
      kourai(
        [
          'privacy',
          'release',
          '--agent',
          'techne',
          '--round',
          '2',
          '--file',
          'delta.json',
          '--base-fingerprint',
          'sha256:test-base',
        ],
        { env },
      ).code,
    ).toBe(0);
    const third = kourai(
      [
        'privacy',
        'release',
        '--agent',
        'techne',
        '--round',
        '3',
        '--file',
        'delta.json',
        '--base-fingerprint',
        'sha256:test-base',
        '--json',
      ],
      { env },
    );
    expect(third.code).toBe(4);
    expect(JSON.parse(third.stdout).error.code).toBe('budget_exhausted');
    const w = JSON.parse(kourai(['whisper', '--json'], { env }).stdout);
    expect(w.agents.find((a: { agent: string }) => a.agent === 'techne')).toMatchObject({
      releases: 2,
      verdict: 'no_shareable_entries',
    });
    const l = JSON.parse(kourai(['privacy', 'ledger', '--json'], { env }).stdout);
    expect(l.releases.map((r: { round: string }) => r.round)).toEqual(['1', '2']);
  });

  it('never loads Ink or React for non-interactive commands (lazy imports)', () => {
    const log = join(home, 'imports.log');
    writeFileSync(log, '');
    const hook = join(root, 'test/e2e/fixtures/log-imports.mjs');
    for (const args of [
      ['privacy', 'epsilon', '--sigma', '1', '--json'],
      ['whisper'],
      ['federate', 'consent', '--allow', 'aidos'],
      ['--help'],
    ]) {
      const r = kourai(args, { env: { KOURAI_IMPORT_LOG: log }, nodeArgs: ['--import', hook] });
      expect(r.code, r.stderr).toBe(0);
    }
    const specifiers = readFileSync(log, 'utf8').split('\n');
    expect(specifiers.some((s) => s.includes('privacy/rdp-accountant'))).toBe(true); // the hook saw our modules
    // src/ui/keys.ts (the key tables --help prints) and src/ui/terminal.ts (the size check) import neither.
    const screens = (s: string): boolean => s.includes('/ui/') && !/\/ui\/(keys|terminal)\.js$/.test(s);
    expect(specifiers.filter((s) => s === 'ink' || s === 'react' || s.startsWith('react/') || screens(s))).toEqual([]);
  });
});
