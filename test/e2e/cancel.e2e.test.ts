import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { assertBuilt, BIN, cleanEnv } from '../helpers/bin.js';
import { removeDir } from '../helpers/ctx.js';

/**
 * Ctrl-C (SIGINT) during long work: the real binary stops with exit 130 and leaves nothing
 * half-written. No time is asserted: each test waits until the work has visibly started, sends
 * SIGINT, and checks that the work did not run to completion.
 */
let home: string;
let running: Run | undefined;
beforeAll(() => assertBuilt());
afterEach(async () => {
  running?.kill();
  await running?.done;
  running = undefined;
  removeDir(home);
});
vi.setConfig({ testTimeout: 120_000 });

interface Run {
  interrupt(): void;
  kill(): void;
  done: Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }>;
}

function start(args: string[]): Run {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: home,
    env: cleanEnv(home),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  running = {
    interrupt: () => child.kill('SIGINT'),
    kill: () => child.kill('SIGKILL'),
    done: new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr }))),
  };
  return running;
}

async function waitUntil(what: string, ok: () => boolean): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > 90_000) throw new Error(`gave up waiting for: ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const bytesUnder = (dir: string): number => {
  if (!existsSync(dir)) return 0;
  let n = 0;
  for (const d of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (d.isFile()) n += statSync(join(d.parentPath, d.name)).size;
  }
  return n;
};

describe('Ctrl-C stops long commands with exit 130, nothing half-written', () => {
  it('memoir synth --out: no output file, no temporary file', async () => {
    home = mkdtempSync(join(tmpdir(), 'kourai-cancel-'));
    const out = join(home, 'out');
    const run = start(['memoir', 'synth', '--out', join(out, 'big.jsonl'), '--entries', '1000000']);
    await waitUntil('synth writes its first batch', () => bytesUnder(out) > 0);
    run.interrupt();
    const r = await run.done;
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/^kourai: synth cancelled/m);
    expect(readdirSync(out)).toEqual([]);
  });

  it('memoir synth (the sample forge): no session of this run is left behind', async () => {
    home = mkdtempSync(join(tmpdir(), 'kourai-cancel-'));
    const projects = join(home, 'projects');
    const run = start(['memoir', 'synth', '--sessions', '20000']);
    await waitUntil('synth writes its first session', () => bytesUnder(home) > 0);
    run.interrupt();
    const r = await run.done;
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/^kourai: synth cancelled/m);
    expect(bytesUnder(projects)).toBe(0);
    expect(bytesUnder(home)).toBe(0);
  });
});
