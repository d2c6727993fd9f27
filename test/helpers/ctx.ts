import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Ctx, OutStream } from '../../src/context.js';

export interface Captured extends OutStream {
  text: string;
}

export function capture(tty = false): Captured {
  const c: Captured = {
    text: '',
    isTTY: tty,
    columns: 120,
    rows: 40,
    write(chunk: string) {
      c.text += chunk;
      return true;
    },
  };
  return c;
}

export interface TestCtx extends Ctx {
  stdout: Captured;
  stderr: Captured;
  home: string;
}

/** A command context with a temporary KOURAI_HOME and captured output. */
export function testCtx(overrides: Partial<Ctx> & { home?: string; stdinText?: string } = {}): TestCtx {
  const home = overrides.home ?? mkdtempSync(join(tmpdir(), 'kourai-test-'));
  const stdin = new PassThrough();
  if (overrides.stdinText !== undefined) stdin.end(overrides.stdinText);
  const { stdinText: _s, home: _h, ...rest } = overrides;
  return {
    cwd: home,
    env: { KOURAI_HOME: home, HOME: home },
    stdin: stdin as unknown as Ctx['stdin'],
    interactive: false,
    colorLevel: 0,
    now: () => new Date('2026-11-22T10:00:00.000Z'),
    secureRandom: (n) => randomBytes(n),
    signal: new AbortController().signal,
    ...rest,
    stdout: capture(),
    stderr: capture(),
    home,
  } as TestCtx;
}

export function tempDir(prefix = 'kourai-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
