import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/kourai.js', import.meta.url));

export interface BinResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the built binary with a clean environment (only what the test passes, plus PATH). */
export function kourai(
  args: string[],
  opts: { home: string; input?: string; env?: Record<string, string>; nodeArgs?: string[]; cwd?: string },
): BinResult {
  const r = spawnSync(process.execPath, [...(opts.nodeArgs ?? []), BIN, ...args], {
    cwd: opts.cwd ?? opts.home,
    input: opts.input ?? '',
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', HOME: opts.home, KOURAI_HOME: opts.home, CI: '1', ...opts.env },
    timeout: 60_000,
  });
  return { code: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** The same, without blocking this process (needed when the binary talks to a server the test runs). */
export function kouraiAsync(args: string[], opts: { home: string; env?: Record<string, string> }): Promise<BinResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: opts.home,
      env: { PATH: process.env.PATH ?? '', HOME: opts.home, KOURAI_HOME: opts.home, CI: '1', ...opts.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? -1, stdout, stderr }));
  });
}
