import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openDb } from '../../src/store/db.js';
import { INDEX_MIGRATIONS } from '../../src/memoir-index/index-migrations.js';
import { claimFirstBuild, leftovers, stageIndex } from '../../src/memoir-index/index-staging.js';
import { indexPath, openIndex, openIndexForBuild } from '../../src/memoir-index/memoir-index.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { synthLines } from '../helpers/synth-lines.js';

/**
 * A from-scratch index is built in a private file and published whole (store/index-staging.ts):
 * nobody ever sees a partial index, a cancelled or failed build leaves nothing, a concurrent
 * second builder uses the first one's index, and the result is the index an in-place build makes.
 */
let dir: string;
let file: string;
let entries: number;
beforeEach(() => {
  dir = tempDir();
  file = join(dir, 'memoir.jsonl');
  const lines = synthLines(5, 13_000); // over 8 MiB: a bulk load in the worker, two batches and more
  lines.splice(7_000, 0, '{"not": "an entry"}');
  writeFileSync(file, `${lines.join('\n')}\n`);
  entries = lines.length - 1;
});
afterEach(() => removeDir(dir));

const cacheFiles = (home: string): string[] =>
  existsSync(join(home, 'cache')) ? readdirSync(join(home, 'cache')).sort() : [];

function dump(home: string) {
  const index = openIndex(home);
  try {
    const db = index.db;
    return {
      entries: db.prepare('SELECT * FROM entries ORDER BY seq').all(),
      problems: db.prepare('SELECT * FROM problems ORDER BY line').all(),
      chunks: db.prepare('SELECT chunk, hash FROM chunks ORDER BY chunk').all(),
      files: db
        .prepare('SELECT indexed_bytes, indexed_lines, head_hash, tail_start, tail_hash, fts_complete FROM files')
        .all(),
      schema: db.prepare('SELECT type, name, sql FROM sqlite_master ORDER BY name').all(),
      version: db.pragma('user_version', { simple: true }),
    };
  } finally {
    index.close();
  }
}

describe('a from-scratch index built in a private file', () => {
  it('is invisible until complete, then published in WAL mode, equal to an in-place build', async () => {
    const staged = join(dir, 'staged');
    const index = await openIndexForBuild(staged);
    let seenDuring: string[] = [];
    const [u] = await index.build([file], { checkpoint: async () => void (seenDuring = cacheFiles(staged)) });
    expect(u?.newEntries).toBe(entries);
    expect(u?.parallel).toBe(true);
    // During the build only the private file existed: no index.db for anyone to open.
    expect(seenDuring.length).toBeGreaterThan(0);
    expect(seenDuring.every((f) => f.startsWith('index.db.build-') || f === 'index.db.lock')).toBe(true);
    expect(seenDuring).toContain('index.db.lock'); // the build lock, held until published
    // Afterwards the same object reads the published file.
    expect(index.count({})).toBe(entries);
    index.close();
    expect(cacheFiles(staged)).toEqual(['index.db']);
    const db = openDb(indexPath(staged), INDEX_MIGRATIONS, { readonly: true });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(db.pragma('integrity_check', { simple: true })).toBe('ok');
    db.close();

    const inPlace = join(dir, 'in-place');
    const other = openIndex(inPlace);
    await other.build([file]);
    other.close();
    expect(dump(staged)).toEqual(dump(inPlace));
  });

  it('a cancelled build leaves no index and no private file; the next run builds it whole', async () => {
    const home = join(dir, 'home');
    const index = await openIndexForBuild(home);
    let batches = 0;
    await expect(
      index.build([file], {
        checkpoint: async () => {
          if (++batches === 1) throw new Error('cancelled');
        },
      }),
    ).rejects.toThrow('cancelled');
    index.close();
    expect(cacheFiles(home)).toEqual([]);
    const again = await openIndexForBuild(home);
    const [u] = await again.build([file]);
    again.close();
    expect(u?.newEntries).toBe(entries);
    expect(dump(home).entries).toHaveLength(entries);
  });

  it('two builders at once: the second waits for the first and uses the index it published (one build)', async () => {
    const home = join(dir, 'home');
    const a = await openIndexForBuild(home);
    const waits: string[] = [];
    const second = openIndexForBuild(home, { onWait: (holder) => waits.push(holder) });
    let seenDuring: string[] = [];
    const [ua] = await a.build([file], { checkpoint: async () => void (seenDuring = cacheFiles(home)) });
    const b = await second;
    expect(waits).toHaveLength(1); // told once, although it polled all along
    // Only one private file was ever built (the second did not start its own).
    expect(seenDuring.filter((f) => f.startsWith('index.db.build-'))).toHaveLength(1);
    expect(seenDuring).toContain('index.db.lock');
    const [ub] = await b.build([file]);
    expect(ua?.newEntries).toBe(entries);
    expect(ub?.newEntries).toBe(0); // the first builder's index was already complete
    expect(b.count({})).toBe(entries);
    a.close();
    b.close();
    expect(cacheFiles(home)).toEqual(['index.db']);
    expect(dump(home).entries).toHaveLength(entries);
  });

  it('a second builder stops waiting when cancelled, and builds once the first gives up', async () => {
    const home = join(dir, 'home');
    const a = await openIndexForBuild(home);
    const ctl = new AbortController();
    const cancelled = openIndexForBuild(home, { signal: ctl.signal, onWait: () => ctl.abort() });
    await expect(cancelled).rejects.toMatchObject({
      exitCode: 130,
      message: expect.stringMatching(/^cancelled while waiting for .* to build the memoir index: nothing was written$/),
    });
    const second = openIndexForBuild(home);
    a.close(); // never built: its lock goes with its private file
    const b = await second;
    let seenDuring: string[] = [];
    const [ub] = await b.build([file], { checkpoint: async () => void (seenDuring = cacheFiles(home)) });
    expect(ub?.newEntries).toBe(entries);
    expect(seenDuring.some((f) => f.startsWith('index.db.build-'))).toBe(true); // staged: it was the first build now
    b.close();
    expect(cacheFiles(home)).toEqual(['index.db']);
  });

  it('an existing index (or a WAL without its database) is never staged', async () => {
    const home = join(dir, 'home');
    const path = indexPath(home);
    mkdirSync(join(home, 'cache'), { recursive: true });
    const lock = await claimFirstBuild(path);
    expect(lock).toBeDefined();
    lock?.release();
    writeFileSync(`${path}-wal`, '');
    expect(await claimFirstBuild(path)).toBeUndefined();
    openIndex(home).close();
    expect(await claimFirstBuild(path)).toBeUndefined();
    expect(cacheFiles(home)).toEqual(['index.db']); // no lock file left behind
  });

  it('private files of processes that are gone are removed; a live process keeps its own', async () => {
    const home = join(dir, 'home');
    const path = indexPath(home);
    mkdirSync(join(home, 'cache'), { recursive: true });
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)'], { stdio: 'ignore' });
    const exited = new Promise((r) => child.on('exit', r));
    const dead = spawn(process.execPath, ['-e', '0'], { stdio: 'ignore' });
    await new Promise((r) => dead.on('exit', r));
    try {
      const live = `${path}.build-${child.pid}-1`;
      const gone = `${path}.build-${dead.pid}-1`;
      for (const f of [live, gone, `${gone}-journal`]) writeFileSync(f, 'partial');
      expect(leftovers(path).sort()).toEqual([gone, `${gone}-journal`]);
      const lock = await claimFirstBuild(path);
      if (!lock) throw new Error('no build lock');
      stageIndex(path, lock);
      lock.release();
      expect(existsSync(live)).toBe(true);
      expect(existsSync(gone)).toBe(false);
      expect(existsSync(`${gone}-journal`)).toBe(false);
    } finally {
      child.kill('SIGKILL');
      await exited;
    }
  });
});
