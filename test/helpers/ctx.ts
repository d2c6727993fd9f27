import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Ctx, OutStream } from '../../src/context.js';

export interface Captured extends OutStream {
  text: string;
  chunks: string[];
}

export function capture(tty = false): Captured {
  const c: Captured = {
    text: '',
    chunks: [],
    isTTY: tty,
    columns: 120,
    rows: 40,
    write(chunk: string) {
      c.text += chunk;
      c.chunks.push(chunk);
      return true;
    },
  };
  return c;
}

export interface TestCtx extends Ctx {
  stdout: Captured;
  stderr: Captured;
  home: string;
  cleanup(): void;
}

/** A command context with a temporary KOURAI_HOME and captured output; `env` adds to the defaults. */
export function testCtx(overrides: Partial<Ctx> & { home?: string; stdinText?: string } = {}): TestCtx {
  const home = overrides.home ?? mkdtempSync(join(tmpdir(), 'kourai-test-'));
  const stdin = new PassThrough();
  if (overrides.stdinText !== undefined) stdin.end(overrides.stdinText);
  const { stdinText: _s, home: _h, env, ...rest } = overrides;
  return {
    cwd: home,
    stdin: stdin as unknown as Ctx['stdin'],
    interactive: false,
    colorLevel: 0,
    now: () => new Date('2026-11-22T10:00:00.000Z'),
    secureRandom: (n) => randomBytes(n),
    signal: new AbortController().signal,
    ...rest,
    env: { KOURAI_HOME: home, HOME: home, ...env },
    stdout: capture(),
    stderr: capture(),
    home,
    cleanup: () => removeDir(home),
  } as TestCtx;
}

export function tempDir(prefix = 'kourai-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
