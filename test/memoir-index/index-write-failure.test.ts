import Database from 'better-sqlite3';
import { appendFileSync, mkdirSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ExitCode, KouraiError } from '../../src/errors.js';
import { indexPath, openIndex, openIndexForBuild, type MemoirIndex } from '../../src/memoir-index/memoir-index.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { synthLines } from '../helpers/synth-lines.js';

/**
 * A write to the memoir index that fails for a reason outside kourai — the disk fills up, the file
 * turns read-only, another process holds the write lock past the busy timeout — is a one-line
 * error with a documented exit code (3 for the environment, 7 for the lock), never "unexpected
 * error … this is a bug in kourai", and leaves nothing half-written: the lazy full-text build of
 * the file it was writing is rolled back whole (no rows, still marked unbuilt), and the next run
 * builds it.
 */
let dir: string;
let file: string;
let template: string;
beforeAll(() => {
  dir = tempDir();
  file = join(dir, 'memoir.jsonl');
  const lines = synthLines(3, 14_000); // over 8 MiB: a bulk load, full-text rows left to the first text query
  writeFileSync(file, `${lines.join('\n')}\n`);
  template = join(dir, 'template');
  const index = openIndex(template);
  index.update([file]);
  expect(index.withoutFullText()).toHaveLength(1);
  index.close();
});
afterAll(() => removeDir(dir));

let n = 0;
/** A fresh copy of the bulk-loaded index (full-text rows not built). */
function freshIndex(): { home: string; index: MemoirIndex } {
  const home = join(dir, `h${n++}`);
  mkdirSync(join(home, 'cache'), { recursive: true });
  const db = new Database(indexPath(template), { readonly: true });
  db.exec(`VACUUM INTO '${indexPath(home).replace(/'/g, "''")}'`);
  db.close();
  return { home, index: openIndex(home) };
}

function ftsState(home: string): { unbuilt: number; rows: number; entries: number } {
  const db = new Database(indexPath(home), { readonly: true });
  try {
    const n = (sql: string): number => db.prepare(sql).pluck().get() as number;
    return {
      unbuilt: n('SELECT count(*) FROM files WHERE fts_complete = 0'),
      rows: n('SELECT count(*) FROM entries_fts'),
      entries: n('SELECT count(*) FROM entries'),
    };
  } finally {
    db.close();
  }
}

async function failure(work: () => unknown): Promise<KouraiError> {
  let err: unknown;
  try {
    await work();
  } catch (e) {
    err = e;
  }
  expect(err, String((err as Error | undefined)?.stack)).toBeInstanceOf(KouraiError);
  const k = err as KouraiError;
  expect(k.message).not.toContain('\n');
  return k;
}

describe('an index update with nothing new', () => {
  it('writes nothing, so it does not need the write lock another process holds (a long `memoir index`)', async () => {
    const { home, index } = freshIndex();
    index.update([file]); // up to date (the template may be older than the memoir)
    index.db.pragma('busy_timeout = 20');
    const holder = new Database(indexPath(home));
    holder.exec('BEGIN IMMEDIATE');
    try {
      const [u] = await index.build([file]);
      expect(u?.newEntries).toBe(0);
      expect(index.update([file])[0]?.newEntries).toBe(0);
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
      index.close();
    }
  });
});

describe('the lazy full-text build when the index cannot be written mid-way', () => {
  it('disk full (SQLITE_FULL after some batches): exit 3 naming the index; nothing written; the next run builds it', async () => {
    for (const build of ['async', 'sync'] as const) {
      const { home, index } = freshIndex();
      const pages = index.db.pragma('page_count', { simple: true }) as number;
      index.db.pragma(`max_page_count = ${pages + 300}`); // ~1 MB more: full after a few batches of text
      const err = await failure(() => (build === 'async' ? index.buildFullText() : index.requireFullText()));
      expect(err.exitCode).toBe(ExitCode.environment);
      expect(err.message).toBe(
        `cannot write the memoir index ${indexPath(home)}: the disk is full: the full-text index was not built (nothing half-written)`,
      );
      index.close();
      expect(ftsState(home)).toMatchObject({ unbuilt: 1, rows: 0 });
      const again = openIndex(home);
      await again.buildFullText();
      again.close();
      const built = ftsState(home);
      expect(built.unbuilt).toBe(0);
      expect(built.rows).toBe(built.entries);
      expect(built.entries).toBeGreaterThanOrEqual(14_000);
    }
  });

  it('the file turned read-only under a running command (SQLITE_READONLY on write): exit 3', async () => {
    const { home, index } = freshIndex();
    index.db.pragma('query_only = ON'); // what SQLite answers when the file or its disk became read-only
    const err = await failure(() => index.buildFullText());
    expect(err.exitCode).toBe(ExitCode.environment);
    expect(err.message).toMatch(
      new RegExp(
        `^cannot write the memoir index ${indexPath(home).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*read-?only.*: the full-text index was not built \\(nothing half-written\\)$`,
      ),
    );
    index.close();
    expect(ftsState(home)).toMatchObject({ unbuilt: 1, rows: 0 });
  });

  it('another process holds the write lock past the busy timeout: exit 7, nothing written', async () => {
    const { home, index } = freshIndex();
    index.db.pragma('busy_timeout = 20'); // the real one is 5 s; the outcome is the same
    const holder = new Database(indexPath(home));
    holder.exec('BEGIN IMMEDIATE');
    try {
      const err = await failure(() => index.buildFullText());
      expect(err.exitCode).toBe(ExitCode.conflict);
      expect(err.message).toBe(
        `the memoir index ${indexPath(home)} is locked by another process (longer than the busy timeout): the full-text index was not built (nothing half-written)`,
      );
      // An index update (the memoir grew) under the same lock: the same answer.
      appendFileSync(file, `${readFileSync(file, 'utf8').split('\n')[0] ?? ''}\n`);
      const update = await failure(() => index.build([file]));
      expect(update.exitCode).toBe(ExitCode.conflict);
      expect(update.message).toMatch(
        /is locked by another process \(longer than the busy timeout\): what was indexed so far is kept$/,
      );
    } finally {
      holder.exec('ROLLBACK');
      holder.close();
    }
    index.close();
    expect(ftsState(home)).toMatchObject({ unbuilt: 1, rows: 0 });
  });
});

describe('an index file that turns out not to be writable', () => {
  /** Open descriptors of this process on the index file itself (not its -wal / -shm). */
  const openOn = (path: string): number =>
    readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return readlinkSync(`/proc/self/fd/${fd}`) === path;
      } catch {
        return false; // closed between the listing and the read
      }
    }).length;

  it.runIf(process.platform === 'linux')(
    'is replaced by an index in memory, and its file connection is closed, not leaked',
    () => {
      const { home, index } = freshIndex();
      const grown = join(home, 'memoir.jsonl');
      writeFileSync(grown, readFileSync(file));
      index.update([file]);
      expect(openOn(indexPath(home))).toBeGreaterThan(0);
      index.db.pragma('query_only = ON'); // what SQLite answers when the file became read-only
      const [u] = index.update([grown]);
      expect(u?.newEntries).toBeGreaterThan(0);
      expect(index.notes.join('\n')).toMatch(/cannot be written .*: using an index in memory for this run/);
      expect(openOn(indexPath(home))).toBe(0);
      index.close();
    },
  );
});

describe('a first index build (in a private file) that cannot be written', () => {
  it('disk full: exit 3, says that no index was kept (the private file is discarded), and the next run builds it', async () => {
    const home = join(dir, `h${n++}`);
    mkdirSync(join(home, 'cache'), { recursive: true });
    const index = await openIndexForBuild(home);
    index.db.pragma('max_page_count = 200'); // ~800 KB: full after a few batches
    const err = await failure(() => index.build([file]));
    expect(err.exitCode).toBe(ExitCode.environment);
    expect(err.message).toBe(
      `cannot write the memoir index ${indexPath(home)}: the disk is full: no index was kept (the next run builds it again)`,
    );
    index.close();
    expect(readdirSync(join(home, 'cache'))).toEqual([]);
    const again = await openIndexForBuild(home);
    const [u] = await again.build([file]);
    expect(u?.newEntries).toBeGreaterThanOrEqual(14_000);
    again.close();
  });
});
