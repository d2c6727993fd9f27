import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, kourai, sampleHome } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { unprivilegedBin } from '../helpers/unprivileged.js';

/**
 * Read-only commands (`whisper`, `doctor`, `federate consent --show`) create nothing on a fresh
 * home and work on a home they may not write to. The read-only runs use an unprivileged user when
 * the tests run as root (root ignores file modes).
 */
let homes: string[] = [];
beforeAll(() => assertBuilt());
afterEach(() => {
  for (const h of homes) {
    chmodTree(h, true);
    removeDir(h);
  }
  homes = [];
});

const READERS: string[][] = [
  ['whisper', '--json'],
  ['doctor', '--json'],
  ['federate', 'consent', '--show', '--json'],
];

function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true }).map(String).sort();
}

function chmodTree(dir: string, writable: boolean): void {
  for (const rel of ['', ...files(dir)]) {
    const p = join(dir, rel);
    const st = statSync(p);
    chmodSync(p, st.isDirectory() ? (writable ? 0o755 : 0o555) : writable ? 0o644 : 0o444);
  }
}

/** The built binary as a user who cannot write to `home`. */
function asReader(args: string[], home: string): { code: number; stdout: string; stderr: string } {
  const asRoot = process.getuid?.() === 0;
  const r = spawnSync(process.execPath, [unprivilegedBin(), ...args], {
    cwd: '/',
    env: cleanEnv(home),
    encoding: 'utf8',
    timeout: 60_000,
    ...(asRoot ? { uid: 65534, gid: 65534 } : {}),
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

describe('read-only commands', () => {
  it.each(READERS)('kourai %s … on a fresh home creates nothing', (...args) => {
    const home = tempDir('kourai-fresh-');
    homes.push(home);
    const r = kourai(args, home);
    expect(r.code, r.stderr).toBe(0);
    JSON.parse(r.stdout);
    expect(files(home)).toEqual([]);
  });

  it('work on a home they may not write to (the sample forge, indexed, with consent given)', () => {
    const sample = sampleHome();
    homes.push(sample.home);
    expect(kourai(['federate', 'consent', '--allow', 'aidos', '--json'], sample.home).code).toBe(0);
    expect(kourai(['memoir', 'index'], sample.home).code).toBe(0);
    const before = files(sample.home);
    chmodTree(sample.home, false);
    // The parent directories must be traversable by the unprivileged user.
    for (let d = dirname(sample.home); d !== '/' && d !== '.'; d = dirname(d)) {
      if ((statSync(d).mode & 0o005) !== 0o005) chmodSync(d, statSync(d).mode | 0o005);
    }
    const w = asReader(['whisper', '--json'], sample.home);
    expect(w.code, w.stderr).toBe(0);
    const report = JSON.parse(w.stdout) as {
      agents: { agent: string; consent: boolean | string; shareable_entries: number }[];
    };
    expect(report.agents.find((a) => a.agent === 'aidos')).toMatchObject({ consent: true });
    expect(report.agents.some((a) => a.shareable_entries > 0)).toBe(true);
    const d = asReader(['doctor', '--json'], sample.home);
    expect(JSON.parse(d.stdout).checks.find((c: { name: string }) => c.name === 'home')).toMatchObject({
      status: 'fail',
    });
    expect(JSON.parse(d.stdout).checks.find((c: { name: string }) => c.name === 'index')).toMatchObject({
      status: 'ok',
    });
    const c = asReader(['federate', 'consent', '--show', '--json'], sample.home);
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout).agents.find((a: { agent: string }) => a.agent === 'aidos')).toMatchObject({
      allowed: true,
    });
    expect(files(sample.home)).toEqual(before);
  });

  it('whisper on a read-only home that has memoirs but no index indexes in memory', () => {
    const home = mkdtempSync(join(tempDir('kourai-ro-'), 'h-'));
    homes.push(dirname(home));
    expect(kourai(['memoir', 'synth', '--json'], home).code).toBe(0);
    const before = files(home);
    chmodTree(home, false);
    for (let d = dirname(home); d !== '/' && d !== '.'; d = dirname(d)) {
      if ((statSync(d).mode & 0o005) !== 0o005) chmodSync(d, statSync(d).mode | 0o005);
    }
    const w = asReader(['whisper', '--json'], home);
    expect(w.code, w.stderr).toBe(0);
    expect(files(home)).toEqual(before);
  });
});
