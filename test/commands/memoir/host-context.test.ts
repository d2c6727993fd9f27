import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import append from '../../../src/commands/memoir/append.js';
import inspect from '../../../src/commands/memoir/inspect.js';
import verify from '../../../src/commands/memoir/verify.js';
import type { Command } from '../../../src/commands/types.js';
import { ExitCode } from '../../../src/errors.js';
import { MAX_LINE_BYTES } from '../../../src/memoir/format/limits.js';
import { resolveOptions } from '../../../src/run-command.js';
import { removeDir, testCtx, type TestCtx } from '../../helpers/ctx.js';

/** A line as a Python host writes it with the upstream model and a minimal context. */
const hostLine = (context: string, scene = 'session-1a2b3c4d.turn-1'): string =>
  `{"scene_id":"${scene}","agent":"metis","source":"specialist_proposed","context":${context},"narrative_beat":null,"agent_proposed":"a plan","player_response":null,"affinity_delta":0.0,"training_label":null,"split":{"shared_eligible":true,"private_only":false}}`;

let ctx: TestCtx;
beforeEach(() => {
  ctx = testCtx();
});
afterEach(() => removeDir(ctx.home));

type AnyCommand = Command<any, any>;
async function run<C extends AnyCommand>(cmd: C, raw: Record<string, unknown>): Promise<Awaited<ReturnType<C['run']>>> {
  return (await cmd.run(await resolveOptions(cmd, raw), ctx)) as Awaited<ReturnType<C['run']>>;
}
async function failure(p: Promise<unknown>): Promise<{ exitCode: number; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { exitCode: number; message: string };
  }
  throw new Error('expected the command to fail');
}
const forge = (): string => {
  const dir = join(ctx.home, 'projects', 'ariadne', 'p', '.kourai', 'forges', 'f');
  mkdirSync(dir, { recursive: true });
  return join(dir, 'memoir.jsonl');
};

describe('a Python host context is an entry', () => {
  it('append takes a minimal context and writes every key back as given', async () => {
    const file = forge();
    await run(append, { entry: hostLine('{"task_type":"qa"}'), memoir: [file] });
    await run(append, {
      entry: hostLine(
        '{"host":"py-host-1","7":1.0,"task_type":"qa","n":123456789012345678901}',
        'session-1a2b3c4d.turn-2',
      ),
      memoir: [file],
    });
    const lines = readFileSync(file, 'utf8').trim().split('\n');
    expect(lines[0]).toContain(',"context":{"task_type":"qa"},');
    expect(lines[1]).toContain(',"context":{"host":"py-host-1","7":1.0,"task_type":"qa","n":123456789012345678901},');
  });

  it('verify is clean and inspect counts the lines a Python host wrote with a minimal context', async () => {
    const file = forge();
    writeFileSync(
      file,
      `${hostLine('{"task_type":"qa"}')}\n${hostLine('{"host":"py-host-1","tests":{"passed":12,"failed":0}}', 'session-1a2b3c4d.turn-2')}\n`,
    );
    const v = await run(verify, { memoir: [file] });
    expect(v.ok).toBe(true);
    const r = (await run(inspect, { memoir: [file], json: true })) as unknown as {
      total: number;
      entries: { context: unknown }[];
    };
    expect(r.total).toBe(2);
    expect(JSON.parse(JSON.stringify(r.entries.map((e) => e.context)))).toEqual([
      { task_type: 'qa' },
      { host: 'py-host-1', tests: { passed: 12, failed: 0 } },
    ]);
  });

  it.each([
    ['"qa"', 'a string'],
    ['42', 'a number'],
    ['["qa"]', 'an array'],
  ])('a context %s: exit 5 naming it, nothing written', async (context, kind) => {
    const file = forge();
    const err = await failure(run(append, { entry: hostLine(context), memoir: [file] }));
    expect(err.exitCode).toBe(ExitCode.invalidData);
    expect(err.message).toBe(`argument: context must be a JSON object or null, not ${kind}`);
    expect(() => readFileSync(file)).toThrow();
  });

  it('a context key with a huge value: exit 5 naming the key, nothing written', async () => {
    const file = forge();
    const err = await failure(
      run(append, { entry: hostLine(`{"task_type":"qa","host":"${'h'.repeat(MAX_LINE_BYTES)}"}`), memoir: [file] }),
    );
    expect(err.exitCode).toBe(ExitCode.invalidData);
    expect(err.message).toMatch(
      /^argument: the entry is 1,048,[0-9]{3} bytes as a line; the maximum is 1,048,576 \(context\.host holds 1,048,578\)$/,
    );
    expect(() => readFileSync(file)).toThrow();
  });
});
