import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { openIndex } from '../../src/memoir-index/memoir-index.js';
import { assertBuilt, BIN, cleanEnv, kourai } from '../helpers/bin.js';
import { removeDir } from '../helpers/ctx.js';
import { synthLines } from '../helpers/synth-lines.js';

/**
 * Two `memoir index` runs on a home without an index (store/index-staging.ts, the build lock):
 * the second waits for the first (saying so, with its pid) and uses the index it published
 * instead of building its own; Ctrl-C stops the wait; if the first builder dies, the second
 * builds. The first builder is held still with SIGSTOP once its private file exists, so the
 * second always meets a build in progress however loaded the machine is.
 */
let lines: string[];
let home: string;
let memoir: string;
const children: ChildProcess[] = [];
beforeAll(() => {
  assertBuilt();
  lines = synthLines(7, 13_000);
});
beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'kourai-first-build-'));
  memoir = join(home, 'memoir.jsonl');
  writeFileSync(memoir, `${lines.join('\n')}\n`);
});
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      const gone = new Promise((r) => c.on('exit', r));
      c.kill('SIGKILL');
      await gone;
    }
  }
  removeDir(home);
});

const cache = (): string[] => (existsSync(join(home, 'cache')) ? readdirSync(join(home, 'cache')) : []);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface Run {
  child: ChildProcess;
  stderr: () => string;
  stdout: () => string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(args: string[]): Run {
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: home,
    env: cleanEnv(home),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  return { child, stderr: () => err, stdout: () => out, exited };
}

async function until(what: string, cond: () => boolean, run?: Run): Promise<void> {
  let done = false;
  void run?.exited.then(() => (done = true));
  while (!cond()) {
    if (done) throw new Error(`exited before ${what}: ${run?.stderr() ?? ''}`);
    await sleep(2);
  }
}

/** A first builder that holds the build lock and has started its private file, then is stopped. */
async function stoppedFirstBuilder(): Promise<Run> {
  const first = start(['memoir', 'index', '--memoir', memoir, '--json']);
  const mine = `index.db.build-${first.child.pid}-`;
  await until('its private file', () => cache().some((f) => f.startsWith(mine)), first);
  first.child.kill('SIGSTOP');
  return first;
}

const waitingLine = (pid: number | undefined) =>
  new RegExp(
    `waiting for pid ${pid}( \\([^)]*\\))?, which is building the memoir index .*index\\.db \\(Ctrl-C to stop\\)`,
  );
const newEntries = (stdout: string): number | undefined =>
  (JSON.parse(stdout) as { files: { new_entries: number }[] }).files[0]?.new_entries;

describe('two first index builds at once', () => {
  it('the second waits for the first, names it, and uses its index without building one', async () => {
    const first = await stoppedFirstBuilder();
    const second = start(['memoir', 'index', '--memoir', memoir, '--json']);
    const seen = new Set<string>();
    await until('the waiting line', () => waitingLine(first.child.pid).test(second.stderr()), second);
    first.child.kill('SIGCONT');
    let done = false;
    void second.exited.then(() => (done = true));
    while (!done) {
      for (const f of cache()) seen.add(f);
      await sleep(1);
    }
    expect(await first.exited).toEqual({ code: 0, signal: null });
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(newEntries(first.stdout())).toBe(lines.length);
    expect(newEntries(second.stdout())).toBe(0);
    // The second never started a private build of its own.
    expect([...seen].filter((f) => f.startsWith(`index.db.build-${second.child.pid}-`))).toEqual([]);
    expect(second.stderr().match(/waiting for/g)).toHaveLength(1);
    expect(cache()).toEqual(['index.db']);
  });

  it('Ctrl-C stops the wait with exit 130 (the first is still stopped), nothing written', async () => {
    const first = await stoppedFirstBuilder();
    const second = start(['memoir', 'index', '--memoir', memoir]);
    await until('the waiting line', () => waitingLine(first.child.pid).test(second.stderr()), second);
    second.child.kill('SIGINT');
    expect(await second.exited).toEqual({ code: 130, signal: null });
    expect(second.stderr()).toMatch(
      /cancelled while waiting for pid \d+( \([^)]*\))? to build the memoir index: nothing was written/,
    );
    expect(cache().filter((f) => !f.startsWith(`index.db.build-${first.child.pid}-`))).toEqual(['index.db.lock']); // the first's lock only
  });

  it('a reading command that can index in memory (whisper) does not wait', async () => {
    await stoppedFirstBuilder();
    const r = kourai(['whisper', '--memoir', memoir, '--json'], home);
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/waiting for/);
  });

  it('when the first builder dies, the second builds the index itself', async () => {
    const first = await stoppedFirstBuilder();
    const second = start(['memoir', 'index', '--memoir', memoir, '--json']);
    await until('the waiting line', () => waitingLine(first.child.pid).test(second.stderr()), second);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');
    expect(await second.exited).toEqual({ code: 0, signal: null });
    expect(newEntries(second.stdout())).toBe(lines.length);
    expect(cache()).toEqual(['index.db']); // the dead builder's private file removed too
    const index = openIndex(home);
    try {
      expect(index.count({})).toBe(lines.length);
      expect(index.db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      index.close();
    }
  });
});
