import {
  closeSync,
  existsSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  truncateSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import indexCmd from '../../src/commands/memoir/index-cmd.js';
import inspect from '../../src/commands/memoir/inspect.js';
import stats from '../../src/commands/memoir/stats.js';
import synth from '../../src/commands/memoir/synth.js';
import verify from '../../src/commands/memoir/verify.js';
import type { Command } from '../../src/commands/types.js';
import { KouraiError } from '../../src/errors.js';
import { resolveOptions } from '../../src/run-command.js';
import { indexPath } from '../../src/memoir-index/memoir-index.js';
import { removeDir, testCtx, type TestCtx } from '../helpers/ctx.js';

/** A damaged index is a cache to throw away, never a reason to fail. */
let ctx: TestCtx;
beforeEach(() => {
  ctx = testCtx();
});
afterEach(() => removeDir(ctx.home));

type AnyCommand = Command<any, any>;
async function run<C extends AnyCommand>(cmd: C, raw: Record<string, unknown>): Promise<Awaited<ReturnType<C['run']>>> {
  return (await cmd.run(await resolveOptions(cmd, raw), ctx)) as Awaited<ReturnType<C['run']>>;
}

async function healthy(): Promise<number> {
  await run(synth, {});
  const s = await run(stats, {});
  return s.entries;
}
const aside = () =>
  readdirSync(join(ctx.home, 'cache')).filter(
    (f) => f.startsWith('index.db.damaged-') && !f.endsWith('-wal') && !f.endsWith('-shm'),
  );

describe('a damaged index is moved aside and rebuilt, with a note', () => {
  const damages: [string, (file: string) => void][] = [
    ['truncated', (f) => truncateSync(f, 100)],
    [
      'with a bad header',
      (f) => {
        const fd = openSync(f, 'r+');
        writeSync(fd, Buffer.from('this is not sqlite'), 0, 18, 0);
        closeSync(fd);
      },
    ],
    [
      'replaced by random bytes',
      (f) => writeFileSync(f, Buffer.from(Array.from({ length: 40_000 }, (_, i) => (i * 2654435761) % 251))),
    ],
  ];
  for (const [what, damage] of damages) {
    it(`${what}: inspect, verify and index --rebuild all work, and the damaged file is kept aside`, async () => {
      const entries = await healthy();
      for (const cmd of [inspect, verify, indexCmd] as AnyCommand[]) {
        damage(indexPath(ctx.home));
        ctx.stderr.text = '';
        await run(cmd, cmd === indexCmd ? { rebuild: true } : { limit: '1' });
        expect(ctx.stderr.text).toMatch(
          /note: the memoir index .* was damaged \(.*\); it was moved aside to .*index\.db\.damaged-/,
        );
      }
      expect(aside().length).toBe(3);
      expect((await run(stats, {})).entries).toBe(entries);
    });
  }

  it('random bytes in middle pages: never an unexpected error; the index is moved aside and the next run rebuilds it', async () => {
    const entries = await healthy();
    const file = indexPath(ctx.home);
    const size = statSync(file).size;
    const fd = openSync(file, 'r+');
    for (let page = 4; page * 4096 < size - 4096; page += 3)
      writeSync(fd, Buffer.alloc(4096, 0x5a), 0, 4096, page * 4096);
    closeSync(fd);
    let failure: unknown;
    try {
      await run(stats, {});
      await run(inspect, { agent: ['aidos'], limit: '5' });
    } catch (err) {
      failure = err;
    }
    if (failure !== undefined) {
      expect(failure).toBeInstanceOf(KouraiError);
      expect((failure as KouraiError).exitCode).toBe(8);
      expect((failure as Error).message).toMatch(
        /the memoir index .* is damaged .* moved aside to .*: run the command again/,
      );
    }
    expect(aside().length).toBe(1);
    expect(existsSync(file) ? readFileSync(file).subarray(0, 15).toString() : 'SQLite format 3').toBe(
      'SQLite format 3',
    );
    expect((await run(stats, {})).entries).toBe(entries);
    expect((await run(verify, {})).ok).toBe(true);
  });
});
