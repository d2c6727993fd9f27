import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ConflictError, EnvironmentError } from '../../../src/errors.js';
import { appendLines } from '../../../src/memoir/file/append.js';
import { lockMemoir } from '../../../src/memoir/file/lock.js';
import { Memoir } from '../../../src/memoir/file/memoir.js';
import { readRecords } from '../../../src/memoir/file/reader.js';
import { removeDir, tempDir } from '../../helpers/ctx.js';

const DIST_LOCK = fileURLToPath(new URL('../../../dist/memoir/file/lock.js', import.meta.url));
const WORKER = fileURLToPath(new URL('../fixtures/lock-worker.mjs', import.meta.url));
const HOLDER = fileURLToPath(new URL('../fixtures/lock-holder.mjs', import.meta.url));
const MEMOIR_DOC = fileURLToPath(new URL('../../../docs/memoir.md', import.meta.url));

const dirs: string[] = [];
const children: ChildProcessWithoutNullStreams[] = [];
afterEach(() => {
  for (const c of children.splice(0)) if (c.exitCode === null) c.kill('SIGKILL');
  while (dirs.length) removeDir(dirs.pop() as string);
});
function memoirFile(): string {
  const d = tempDir();
  dirs.push(d);
  return join(d, 'memoir.jsonl');
}
const entry = (i: number) => ({
  scene_id: `session-00000000.turn-${i}`,
  agent: 'techne' as const,
  source: 'specialist_proposed' as const,
});

/** Starts a process and resolves once it printed `word` on stdout. */
function startUntil(cmd: string, args: string[], word: string): Promise<ChildProcessWithoutNullStreams> {
  const child = spawn(cmd, args, { stdio: 'pipe' });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    child.stdout.on('data', (b: Buffer) => {
      out += b.toString();
      if (out.includes(word)) resolve(child);
    });
    child.stderr.on('data', (b: Buffer) => (err += b.toString()));
    child.on('exit', (code) => reject(new Error(`${cmd} exited ${code} before "${word}": ${err}`)));
  });
}

function exited(child: ChildProcessWithoutNullStreams): Promise<number | null> {
  return child.exitCode !== null
    ? Promise.resolve(child.exitCode)
    : new Promise((r) => child.on('exit', (code) => r(code)));
}

/** The Python snippet docs/memoir.md documents for hosts that want kourai's lock (run as written). */
function docSnippet(): string {
  const text = readFileSync(MEMOIR_DOC, 'utf8');
  const m = /<!-- python-lock-snippet -->\s*```python\n([\s\S]*?)```/.exec(text);
  if (!m) throw new Error('docs/memoir.md has no python-lock-snippet block');
  return m[1] as string;
}

describe('the memoir lock', () => {
  it('an empty, garbage or stale lock file left beside the memoir never blocks a writer', () => {
    const stale = [
      '',
      'garbage \u0000\u0001 not a lock',
      JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname(), since: 'then' }), // a dead process
      JSON.stringify({ pid: 1, host: hostname(), since: 'then' }), // a live process that is not a writer
      JSON.stringify({ pid: process.pid, host: 'another-host', since: 'then' }),
    ];
    for (const content of stale) {
      const path = memoirFile();
      writeFileSync(`${path}.lock`, content);
      expect(appendLines(path, [JSON.stringify(entry(1))], { lockWaitMs: 300 }).count).toBe(1);
    }
  });

  it('removing a lock file does not let a second writer in while the first holds the lock', async () => {
    const path = memoirFile();
    const holder = await startUntil(process.execPath, [HOLDER, DIST_LOCK, path], 'held');
    rmSync(`${path}.lock`, { force: true }); // what the old hint told operators to do
    expect(() => lockMemoir(path, { waitMs: 100 })).toThrow(ConflictError);
    expect(() => lockMemoir(path, { waitMs: 100 })).toThrow(/memoir is being written by pid \d+ \(node\)/);
    holder.stdin.end();
    expect(await exited(holder)).toBe(0);
    lockMemoir(path, { waitMs: 2000 }).release();
  });

  it('is released by the kernel when its holder is killed', async () => {
    const path = memoirFile();
    const holder = await startUntil(process.execPath, [HOLDER, DIST_LOCK, path], 'held');
    expect(() => lockMemoir(path, { waitMs: 50 })).toThrow(ConflictError);
    holder.kill('SIGKILL');
    await exited(holder);
    const lock = lockMemoir(path, { waitMs: 5000 });
    lock.release();
  });

  it('is exclusive: 8 processes at a time, each dying with the lock held after 5 turns, never overlap', async () => {
    const path = memoirFile();
    const log = `${path}.log`;
    writeFileSync(log, '');
    const worker = () =>
      new Promise<number>((resolve) => {
        const p = spawn(process.execPath, [WORKER, DIST_LOCK, path, log, '5', '1'], { stdio: 'inherit' });
        p.on('exit', (code) => resolve(code ?? -1));
      });
    // 8 lanes of 4 workers one after another: 32 crashed holders, each lock contended by the others.
    const lanes = Array.from({ length: 8 }, async () => {
      const codes: number[] = [];
      for (let i = 0; i < 4; i++) codes.push(await worker());
      return codes;
    });
    expect((await Promise.all(lanes)).flat()).toEqual(Array(32).fill(0));
    const events = readFileSync(log, 'utf8').trim().split('\n');
    expect(events).toHaveLength(32 * 5 * 2);
    let overlaps = 0;
    for (let i = 0; i < events.length; i += 2) {
      const [a, pa] = (events[i] as string).split(' ');
      const [b, pb] = (events[i + 1] as string).split(' ');
      if (a !== 'enter' || b !== 'exit' || pa !== pb) overlaps++;
    }
    expect(overlaps).toBe(0);
  });

  it('refuses a memoir that is a symlink, naming the link and its target, and changes neither', () => {
    const path = memoirFile();
    const target = `${path}.elsewhere`;
    writeFileSync(target, '{"not":"touched"}\n');
    symlinkSync(target, path);
    let err: Error | undefined;
    try {
      lockMemoir(path, { waitMs: 50 });
    } catch (e) {
      err = e as Error;
    }
    expect(err).toBeInstanceOf(EnvironmentError);
    expect(err?.message).toBe(`refusing to write through a symlink: memoir ${path} -> ${target}`);
    expect(readFileSync(target, 'utf8')).toBe('{"not":"touched"}\n');
  });
});

describe('the lock with Python hosts (the snippet of docs/memoir.md, run by python3)', () => {
  it('a Python host holding the lock makes kourai wait, and kourai writes once it lets go', async () => {
    const path = memoirFile();
    new Memoir(path).append([entry(0)]);
    const code = `${docSnippet()}
import sys
with kourai_lock(sys.argv[1]):
    print("held", flush=True)
    sys.stdin.read()
print("released", flush=True)
`;
    const py = await startUntil('python3', ['-c', code, path], 'held');
    expect(() => appendLines(path, [JSON.stringify(entry(1))], { lockWaitMs: 100 })).toThrow(ConflictError);
    py.stdin.end();
    expect(await exited(py)).toBe(0);
    expect(appendLines(path, [JSON.stringify(entry(1))], { lockWaitMs: 5000 }).count).toBe(1);
  });

  it('kourai holding the lock makes a Python host wait (LOCK_NB fails), and Python gets it after', async () => {
    const path = memoirFile();
    const holder = await startUntil(process.execPath, [HOLDER, DIST_LOCK, path], 'held');
    const tryLock = `${docSnippet()}
import sys
try:
    with kourai_lock(sys.argv[1], wait=False):
        print("got it")
except BlockingIOError:
    print("busy")
`;
    expect(spawnSync('python3', ['-c', tryLock, path], { encoding: 'utf8' }).stdout.trim()).toBe('busy');
    holder.stdin.end();
    expect(await exited(holder)).toBe(0);
    expect(spawnSync('python3', ['-c', tryLock, path], { encoding: 'utf8' }).stdout.trim()).toBe('got it');
  });

  it('Python hosts and kourai writers taking turns on one memoir: every line whole, none lost', async () => {
    const path = memoirFile();
    new Memoir(path).append([entry(0)]);
    const pyWriter = `${docSnippet()}
import json, os, sys
path, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
for i in range(n):
    with kourai_lock(path) as f:
        size = os.path.getsize(path)
        line = json.dumps({"scene_id": f"session-0000000{who}.turn-{i}", "agent": "metis", "source": "specialist_proposed",
                           "context": None, "narrative_beat": f"python-{who}", "agent_proposed": "p" * (100 + i % 900),
                           "player_response": None, "affinity_delta": 0.0, "training_label": None,
                           "split": {"shared_eligible": True, "private_only": False}}, separators=(",", ":"))
        f.write(line[: len(line) // 2])
        f.flush()
        f.write(line[len(line) // 2 :] + "\\n")  # two writes: only the lock keeps them together
        f.flush()
        assert os.path.getsize(path) == size + len(line.encode()) + 1, "someone wrote while the lock was held"
`;
    const writer = fileURLToPath(new URL('../fixtures/concurrent-writer.mjs', import.meta.url));
    const dist = fileURLToPath(new URL('../../../dist/memoir/file/memoir.js', import.meta.url));
    const run = (cmd: string, args: string[]) =>
      new Promise<number>((resolve) => {
        const p = spawn(cmd, args, { stdio: 'inherit' });
        p.on('exit', (code) => resolve(code ?? -1));
      });
    const codes = await Promise.all([
      run('python3', ['-c', pyWriter, path, '1', '150']),
      run('python3', ['-c', pyWriter, path, '2', '150']),
      run(process.execPath, [writer, dist, path, '3', '30', '5']),
      run(process.execPath, [writer, dist, path, '4', '30', '5']),
    ]);
    expect(codes).toEqual([0, 0, 0, 0]);
    const recs = [...readRecords(path)];
    expect(recs.filter((r) => r.kind !== 'entry')).toEqual([]);
    const by = new Map<string, number>();
    for (const r of recs)
      if (r.kind === 'entry' && r.entry.narrative_beat)
        by.set(r.entry.narrative_beat, (by.get(r.entry.narrative_beat) ?? 0) + 1);
    expect(Object.fromEntries(by)).toEqual({ 'python-1': 150, 'python-2': 150, 'writer-3': 150, 'writer-4': 150 });
  });
});
