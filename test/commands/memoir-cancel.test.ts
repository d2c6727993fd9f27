import Database from 'better-sqlite3';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import indexCmd from '../../src/commands/memoir/index-cmd.js';
import search from '../../src/commands/memoir/search.js';
import stats from '../../src/commands/memoir/stats.js';
import verify from '../../src/commands/memoir/verify.js';
import type { Command } from '../../src/commands/types.js';
import { ExitCode } from '../../src/errors.js';
import { parseOptions, resolveOptions } from '../../src/run-command.js';
import { indexPath, openIndex } from '../../src/memoir-index/memoir-index.js';
import { removeDir, testCtx, type TestCtx } from '../helpers/ctx.js';
import { synthLines } from '../helpers/synth-lines.js';

/**
 * Long memoir work stops on Ctrl-C (ctx.signal) at its next checkpoint with exit 130, leaving
 * nothing half-written. The signal fires on the first turn of the event loop the work gives
 * back, i.e. right after its first batch: no timing involved.
 */
/**
 * Each test writes and indexes a 25k-entry memoir (~4–10 s at load 1–7 on the 2-core machine): a
 * bound for liveness on a loaded machine, well above the 30 s default, never a measurement.
 */
const HEAVY = 180_000;
let ctx: TestCtx;
let controller: AbortController;
let file: string;
let count: number;
beforeEach(() => {
  controller = new AbortController();
  ctx = testCtx({ signal: controller.signal });
  file = join(ctx.home, 'memoir.jsonl');
  const lines = synthLines(5, 25_000); // more than the 8 MiB that makes a first build a bulk load
  count = lines.length;
  writeFileSync(file, `${lines.join('\n')}\n`);
}, HEAVY);
afterEach(() => removeDir(ctx.home));

type AnyCommand = Command<any, any>;
async function cancelled(
  cmd: AnyCommand,
  raw: Record<string, unknown>,
  abortWhen: () => boolean = () => true,
): Promise<{ exitCode: number; message: string }> {
  // At each turn of the event loop the work gives back, until the condition holds.
  let stop = false;
  const poll = (): void => {
    if (stop) return;
    if (abortWhen()) controller.abort();
    else setImmediate(poll);
  };
  setImmediate(poll);
  try {
    await cmd.run(await resolveOptions(cmd, raw), ctx);
  } catch (err) {
    return err as { exitCode: number; message: string };
  } finally {
    stop = true;
  }
  throw new Error('expected the command to be cancelled');
}

describe('Ctrl-C on long memoir work', () => {
  it(
    'memoir index: exit 130 after the first batch; the bulk build is rolled back whole, and the next run builds it all',
    async () => {
      const err = await cancelled(indexCmd, { memoir: [file] });
      expect(err.exitCode).toBe(ExitCode.cancelled);
      expect(err.message).toMatch(/^indexing cancelled/);
      const index = openIndex(ctx.home);
      try {
        expect((index.db.prepare('SELECT count(*) AS n FROM entries').get() as { n: number }).n).toBe(0);
        expect(index.file(file)?.indexed_bytes ?? 0).toBe(0);
      } finally {
        index.close();
      }
      const again = testCtx({ home: ctx.home });
      expect((await stats.run(parseOptions(stats, { memoir: [file] }), again)).entries).toBe(count);
    },
    HEAVY,
  );

  it(
    'memoir verify: exit 130 after the first lines',
    async () => {
      const err = await cancelled(verify, { memoir: [file] });
      expect(err.exitCode).toBe(ExitCode.cancelled);
      expect(err.message).toBe('verify cancelled');
    },
    HEAVY,
  );

  it(
    'memoir search: the lazy full-text build stops with exit 130, leaving no FTS rows; the next search builds it',
    async () => {
      const first = testCtx({ home: ctx.home });
      await indexCmd.run(await resolveOptions(indexCmd, { memoir: [file] }), first); // a bulk load: no FTS rows yet
      // Ctrl-C once the full-text build is under way, not during the index update before it: the update
      // commits each batch before it yields, the full-text build holds its transaction across batches,
      // so the index is write-locked at a turn of the event loop only during the latter. (Aborting at the
      // first turn raced them: the update's checkpoint yields once 50 ms have passed since it began —
      // ~18 ms of work on a quiet machine, more under load — and then "indexing cancelled" came first.)
      const probe = new Database(indexPath(ctx.home), { timeout: 0 });
      const err = await cancelled(search, { query: 'naming', memoir: [file] }, () => {
        try {
          probe.exec('BEGIN IMMEDIATE');
          probe.exec('ROLLBACK');
          return false;
        } catch {
          return true; // SQLITE_BUSY: a writer holds it
        }
      }).finally(() => probe.close());
      expect(err.exitCode).toBe(ExitCode.cancelled);
      expect(err.message).toMatch(/^building the full-text index cancelled/);
      const index = openIndex(ctx.home);
      try {
        expect(index.db.prepare('SELECT count(*) FROM entries_fts').pluck().get()).toBe(0);
        expect(index.withoutFullText()).toHaveLength(1);
      } finally {
        index.close();
      }
      const again = testCtx({ home: ctx.home });
      const r = await search.run(await resolveOptions(search, { query: 'naming', memoir: [file], json: true }), again);
      expect(r.total).toBeGreaterThan(0);
      expect(again.stderr.text).not.toContain('full-text index'); // --json: no progress
    },
    HEAVY,
  );
});
