import { execFileSync, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { BIN, cleanEnv } from './bin.js';

/**
 * Drives the real binary in a real pseudo-terminal through tmux. Each instance has its own tmux
 * server (socket `-L`), which `kill()` always stops. The command runs under `env -i` (no CI, no
 * colour) and the pane stays after it exits, showing `[exit N]`.
 */
export const TMUX = process.env.KOURAI_TMUX ?? 'tmux';

export function hasTmux(): boolean {
  return spawnSync(TMUX, ['-V'], { encoding: 'utf8' }).status === 0;
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

export class TmuxSession {
  readonly socket = `kourai-e2e-${process.pid}-${randomBytes(4).toString('hex')}`;
  private started = false;

  private tmux(args: string[]): string {
    return execFileSync(TMUX, ['-L', this.socket, ...args], { encoding: 'utf8' });
  }

  /** Starts `kourai <args>` in a detached session of the given size. */
  start(
    args: readonly string[],
    home: string,
    size = { columns: 120, rows: 40 },
    env: Record<string, string> = {},
  ): void {
    const vars = Object.entries({ ...cleanEnv(home, env), TERM: 'xterm-256color' }).map(([k, v]) => `${k}=${quote(v)}`);
    const cmd = `cd ${quote(home)} && env -i ${vars.join(' ')} ${quote(process.execPath)} ${quote(BIN)} ${args.map(quote).join(' ')}; printf '\\n[exit %s]\\n' "$?"; sleep 600`;
    this.tmux([
      '-f',
      '/dev/null',
      'new-session',
      '-d',
      '-s',
      'k',
      '-x',
      String(size.columns),
      '-y',
      String(size.rows),
      'sh',
      '-c',
      cmd,
    ]);
    this.started = true;
  }

  /** Sends tmux key names (`Enter`, `Escape`, `C-c`, `Right`) or literal text with `literal`. */
  keys(...keys: string[]): void {
    this.tmux(['send-keys', '-t', 'k', ...keys]);
  }

  text(s: string): void {
    this.tmux(['send-keys', '-t', 'k', '-l', s]);
  }

  capture(): string {
    return this.tmux(['capture-pane', '-p', '-t', 'k', '-J']);
  }

  /** Waits until the pane shows `what` (no timing assertion: the test timeout bounds it). */
  async waitFor(what: string | RegExp, limitMs = 40_000): Promise<string> {
    const deadline = Date.now() + limitMs;
    let screen = '';
    while (Date.now() < deadline) {
      screen = this.capture();
      if (typeof what === 'string' ? screen.includes(what) : what.test(screen)) return screen;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`the screen never showed ${String(what)}; it shows:\n${screen}`);
  }

  /** Stops this test's tmux server and removes its socket file. */
  kill(): void {
    if (!this.started) return;
    let socketPath: string | undefined;
    try {
      socketPath = this.tmux(['display-message', '-p', '#{socket_path}']).trim();
    } catch {
      // the server is already gone
    }
    try {
      this.tmux(['kill-server']);
    } catch {
      // already gone
    }
    if (socketPath) rmSync(socketPath, { force: true });
    this.started = false;
  }
}
