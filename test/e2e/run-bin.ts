import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
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

export interface Serving {
  proc: ChildProcess;
  url: string;
  /** What the council has written to stderr so far. */
  stderr: () => string;
}

/**
 * Starts `kourai council serve --port 0 --json ...args` with a clean environment and resolves with
 * its URL once it listens (the first line on stdout); rejects with its stderr if it exits first.
 */
export function serveCouncil(args: string[], opts: { home: string }): Promise<Serving> {
  const proc = spawn(process.execPath, [BIN, 'council', 'serve', '--port', '0', '--json', ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: opts.home, KOURAI_HOME: opts.home, CI: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  proc.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    createInterface({ input: proc.stdout }).once('line', (line) =>
      resolve({ proc, url: (JSON.parse(line) as { url: string }).url, stderr: () => err }),
    );
    proc.once('exit', (code) => reject(new Error(`council serve exited ${code}: ${err}`)));
  });
}
