import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const BIN = join(ROOT, 'bin', 'kourai.js');

/** The built CLI must exist (`npm test` builds first). */
export function assertBuilt(): void {
  if (!existsSync(join(ROOT, 'dist', 'main.js')))
    throw new Error('dist/ is missing: run `npm run build` (npm test does) before the end-to-end tests');
}

/** A clean environment for the real binary: no CI, no colour, a temporary home. */
export function cleanEnv(home: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    KOURAI_HOME: home,
    NO_COLOR: '1',
    LANG: 'C.UTF-8',
    ...extra,
  };
}

export interface BinResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function kourai(
  args: readonly string[],
  home: string,
  opts: { input?: string; env?: Record<string, string>; nodeArgs?: string[] } = {},
): BinResult {
  const r = spawnSync(process.execPath, [...(opts.nodeArgs ?? []), BIN, ...args], {
    cwd: home,
    env: cleanEnv(home, opts.env),
    input: opts.input ?? '',
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** A home with the sample forge, written by the real binary (`kourai memoir synth`). */
export function sampleHome(): { home: string; memoirs: string[] } {
  const home = mkdtempSync(join(tmpdir(), 'kourai-e2e-'));
  const r = kourai(['memoir', 'synth', '--json'], home);
  if (r.code !== 0) throw new Error(`kourai memoir synth failed (${r.code}): ${r.stderr}`);
  return { home, memoirs: (JSON.parse(r.stdout) as { memoirs: string[] }).memoirs };
}

/** A fresh copy of a home (the memoirs only: the index is a cache and is rebuilt). */
export function copyHome(from: { home: string; memoirs: string[] }): { home: string; memoirs: string[] } {
  const home = mkdtempSync(join(tmpdir(), 'kourai-e2e-'));
  cpSync(join(from.home, 'projects'), join(home, 'projects'), { recursive: true });
  return { home, memoirs: from.memoirs.map((m) => join(home, relative(from.home, m))) };
}
