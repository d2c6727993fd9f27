import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import verify from '../../../src/commands/memoir/verify.js';
import { ExitCode } from '../../../src/errors.js';
import { derivedId } from '../../../src/memoir/format/entry-id.js';
import { MIN_SPLIT_BYTES } from '../../../src/memoir/verify/verify.js';
import { DEFAULT_SPLIT_BYTES } from '../../../src/memoir/verify/verify-blocks.js';
import { defaultThreads, verifyWorkerAvailable } from '../../../src/memoir/verify/verify-threads.js';
import { removeDir, tempDir, testCtx } from '../../helpers/ctx.js';
import { synthLines } from '../../helpers/synth-lines.js';

/**
 * `memoir verify` reads a large memoir with worker threads (KOURAI_VERIFY_THREADS, default one per
 * core): the report is the one thread's, and Ctrl-C still stops it with exit 130.
 */
const dir = tempDir();
let file: string;
let python: string;
beforeAll(() => {
  const lines = synthLines(9, 16_000); // over MIN_SPLIT_BYTES: threads are used
  python = readFileSync(join('test', 'fixtures', 'memoir', 'python-lenient-splits.jsonl'), 'utf8').split(
    '\n',
  )[0] as string;
  const mid = lines.length >> 1;
  // Around the middle (where two threads split): an identical Python line on both sides, an id used on
  // both sides, an invalid line; a torn tail at the end.
  lines.splice(mid + 40, 0, python, '{"broken');
  lines.splice(mid - 40, 0, python, lines[3] as string);
  file = join(dir, 'memoir.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n{"torn`);
});
afterAll(() => removeDir(dir));

async function run(threads: string): Promise<Awaited<ReturnType<typeof verify.run>>> {
  const ctx = testCtx({ env: { KOURAI_VERIFY_THREADS: threads } });
  try {
    return await verify.run({ memoir: [file], json: true }, ctx);
  } finally {
    ctx.cleanup();
  }
}

describe('memoir verify with threads', () => {
  it('two and three threads give the one thread report', async () => {
    expect(verifyWorkerAvailable()).toBe(true);
    expect(statSync(file).size).toBeGreaterThan(MIN_SPLIT_BYTES);
    const one = await run('1');
    expect(one.problems.map((p) => p.kind).sort()).toEqual([
      'duplicate_id',
      'identical_line',
      'json',
      'lenient_split',
      'lenient_split',
      'torn_tail',
    ]);
    expect(one.problems.find((p) => p.kind === 'identical_line')?.message).toContain(`${derivedId(python)}~2`);
    expect(await run('2')).toEqual(one);
    expect(await run('3')).toEqual(one);
  });

  it('the default: one thread per idle core by the load average, at most 8, for memoirs of DEFAULT_SPLIT_BYTES or more', () => {
    expect(defaultThreads(2, 0.1, DEFAULT_SPLIT_BYTES - 1)).toBe(1);
    expect(defaultThreads(2, 0.1, DEFAULT_SPLIT_BYTES)).toBe(2);
    expect(defaultThreads(2, 0.1)).toBe(2);
    expect(defaultThreads(2, 0.7)).toBe(1);
    expect(defaultThreads(2, 6)).toBe(1);
    expect(defaultThreads(4, 1.2)).toBe(3);
    expect(defaultThreads(16, 0)).toBe(8);
    expect(defaultThreads(1, 0)).toBe(1);
  });

  it('KOURAI_VERIFY_THREADS must be a whole number from 1 to 64 (exit 3, naming it)', async () => {
    for (const bad of ['0', 'two', '1.5', '65']) {
      await expect(run(bad)).rejects.toMatchObject({
        exitCode: ExitCode.environment,
        message: `KOURAI_VERIFY_THREADS=${bad}: not a whole number from 1 to 64`,
      });
    }
  });

  it('Ctrl-C while workers read: exit 130', async () => {
    const controller = new AbortController();
    const ctx = testCtx({ signal: controller.signal, env: { KOURAI_VERIFY_THREADS: '2' } });
    try {
      setImmediate(() => controller.abort());
      await expect(verify.run({ memoir: [file], json: true }, ctx)).rejects.toMatchObject({
        exitCode: ExitCode.cancelled,
        message: 'verify cancelled',
      });
    } finally {
      ctx.cleanup();
    }
  });
});
