import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/kourai.js', import.meta.url));

export interface BinResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built binary with a clean environment (only what the test passes, plus PATH). */
export function kourai(args: string[], opts: { home: string; input?: string; env?: Record<string, string>; nodeArgs?: string[]; cwd?: string }): BinResult {
  const r = spawnSync(process.execPath, [...(opts.nodeArgs ?? []), BIN, ...args], {
    cwd: opts.cwd ?? opts.home,
    input: opts.input ?? '',
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: opts.home, KOURAI_HOME: opts.home, CI: '1', ...opts.env },
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}
