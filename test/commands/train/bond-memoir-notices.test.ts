import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ExitCode } from '../../../src/errors.js';
import { appendLines } from '../../../src/memoir/file/append.js';
import { encodeEntry } from '../../../src/memoir/format/encode.js';
import { ent } from '../../train/examples/helpers.js';
import { testCtx } from '../../helpers/ctx.js';
import { runCli } from '../../helpers/run.js';

const bond = () => import('../../../src/commands/train/bond.js');

/** `train bond --memoir FILE` speaks of the file it was given, and of the lines it could not read. */
describe('train bond over the memoirs it is given', { timeout: 120_000 }, () => {
  it('names the memoir given, warns of invalid lines and a torn final fragment', async () => {
    const ctx = testCtx();
    const memoir = join(ctx.home, 'elsewhere/memoir.jsonl');
    mkdirSync(join(memoir, '..'), { recursive: true });
    // Proposals nobody answered: entries, but no label anywhere; then two bad lines and a torn write.
    appendLines(
      memoir,
      [1, 2, 3].map((i) =>
        encodeEntry(ent({ scene_id: `session-1.turn-${i}`, agent: 'metis', agent_proposed: `plan ${i}` })),
      ),
      { fsync: false },
    );
    appendFileSync(memoir, 'not json at all\n{"agent":"techne"}\n{"scene_id":"x');
    let error: { exitCode: number; message: string } | undefined;
    try {
      await runCli(bond, { memoir: [memoir], epochs: '2' }, ctx);
    } catch (err) {
      error = err as { exitCode: number; message: string };
    }
    expect(error).toMatchObject({ exitCode: ExitCode.notFound });
    expect(error?.message).toBe(`no labelled entries to train on in ${memoir}`);
    expect(ctx.stderr.text).toMatch(
      /^warning: 2 lines of 1 memoir are not a valid entry and were skipped; see `kourai memoir verify`$/m,
    );
    expect(ctx.stderr.text.split('\n')).toContain(
      `warning: ${memoir}: torn final fragment of 14 bytes (a write that never finished) was not read  (fix: kourai memoir repair --memoir ${memoir})`,
    );
    ctx.cleanup();
  });

  it('brings the index up to date as every reading command does: a memoir changed other than by an append is said', async () => {
    const ctx = testCtx();
    const memoir = join(ctx.home, 'elsewhere/memoir.jsonl');
    mkdirSync(join(memoir, '..'), { recursive: true });
    appendLines(
      memoir,
      [1, 2, 3].map((i) =>
        encodeEntry(ent({ scene_id: `session-1.turn-${i}`, agent: 'metis', agent_proposed: `plan ${i}` })),
      ),
      { fsync: false },
    );
    await runCli(() => import('../../../src/commands/memoir/index-cmd.js'), { memoir: [memoir] }, ctx);
    // The same length, one byte changed inside an entry: not an append.
    writeFileSync(memoir, readFileSync(memoir, 'utf8').replace('plan 1', 'plan 9'));
    await expect(runCli(bond, { memoir: [memoir], epochs: '2' }, ctx)).rejects.toMatchObject({
      exitCode: ExitCode.notFound,
    });
    expect(ctx.stderr.text).toMatch(
      new RegExp(`^warning: ${memoir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}: .*; the index was rebuilt for it`, 'm'),
    );
    ctx.cleanup();
  });

  it('without --memoir, the message names the home it searched', async () => {
    const ctx = testCtx();
    const memoir = join(ctx.home, 'projects/p/q/.kourai/forges/s1/memoir.jsonl');
    mkdirSync(join(memoir, '..'), { recursive: true });
    appendLines(memoir, [encodeEntry(ent({ scene_id: 'session-1.turn-1', agent: 'metis', agent_proposed: 'plan' }))], {
      fsync: false,
    });
    await expect(runCli(bond, { epochs: '2' }, ctx)).rejects.toMatchObject({
      message: `no labelled entries to train on in 1 memoir under ${ctx.home}`,
    });
    expect(ctx.stderr.text).not.toMatch(/^warning: /m);
    ctx.cleanup();
  });
});
