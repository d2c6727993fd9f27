import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import type { Ctx, OutStream } from '../../src/context.js';

/** A writable that records everything written to it. */
export class Capture implements OutStream {
  chunks: string[] = [];
  isTTY = false;
  columns = 100;
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }
  get text(): string {
    return this.chunks.join('');
  }
}

export interface TestCtx extends Ctx {
  stdout: Capture;
  stderr: Capture;
  home: string;
  cleanup(): void;
}

/** A Ctx for in-process command tests: a fresh temporary KOURAI_HOME, captured output, no TTY. */
export function testCtx(over: Partial<Ctx> & { env?: Record<string, string | undefined> } = {}): TestCtx {
  const home = mkdtempSync(join(tmpdir(), 'kourai-test-'));
  const stdin = new PassThrough() as unknown as Ctx['stdin'];
  const ctx: TestCtx = {
    cwd: home,
    stdin,
    stdout: new Capture(),
    stderr: new Capture(),
    interactive: false,
    colorLevel: 0,
    now: () => new Date('2026-10-01T12:00:00.000Z'),
    secureRandom: (n) => randomBytes(n),
    signal: new AbortController().signal,
    ...over,
    env: { HOME: home, KOURAI_HOME: home, ...(over.env ?? {}) },
    home,
    cleanup: () => rmSync(home, { recursive: true, force: true }),
  } as TestCtx;
  return ctx;
}
