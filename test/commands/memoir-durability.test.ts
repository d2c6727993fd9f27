import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  mkdirSync,
  openSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import append from '../../src/commands/memoir/append.js';
import indexCmd from '../../src/commands/memoir/index-cmd.js';
import inspect from '../../src/commands/memoir/inspect.js';
import repair from '../../src/commands/memoir/repair.js';
import stats from '../../src/commands/memoir/stats.js';
import verify from '../../src/commands/memoir/verify.js';
import type { Command } from '../../src/commands/types.js';
import { ExitCode } from '../../src/errors.js';
import { appendLines, prepareEntries } from '../../src/memoir/file/append.js';
import { ulidGenerator } from '../../src/memoir/format/entry-id.js';
import { MAX_LINE_BYTES } from '../../src/memoir/format/limits.js';
import { Memoir } from '../../src/memoir/file/memoir.js';
import { readRecords } from '../../src/memoir/file/reader.js';
import { synthSessions } from '../../src/memoir/sample/synth.js';
import { resolveOptions } from '../../src/run-command.js';
import { removeDir, testCtx, type TestCtx } from '../helpers/ctx.js';

let ctx: TestCtx;
beforeEach(() => {
  ctx = testCtx();
});
afterEach(() => removeDir(ctx.home));

type AnyCommand = Command<any, any>;
async function run<C extends AnyCommand>(
  cmd: C,
  raw: Record<string, unknown>,
  c: TestCtx = ctx,
): Promise<Awaited<ReturnType<C['run']>>> {
  return (await cmd.run(await resolveOptions(cmd, raw), c)) as Awaited<ReturnType<C['run']>>;
}
async function failure(p: Promise<unknown>): Promise<{ exitCode: number; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { exitCode: number; message: string };
  }
  throw new Error('expected the command to fail');
}

const proposal = {
  scene_id: 'session-1a2b3c4d.turn-1',
  agent: 'techne',
  source: 'specialist_proposed',
  agent_proposed: 'def f(): pass',
};
/** A complete memoir line, as kourai writes it. */
const lineOf = (over: Record<string, unknown>): string =>
  (
    prepareEntries(
      [{ value: { ...proposal, ...over }, where: 'test' }],
      ulidGenerator(
        () => Date.now(),
        (n) => randomBytes(n),
      ),
      () => new Date(),
    )[0] as { line: string }
  ).line;
const forge = (name = 'forge') => {
  const dir = join(ctx.home, 'projects', 'ariadne', 'p', '.kourai', 'forges', name);
  mkdirSync(dir, { recursive: true });
  return join(dir, 'memoir.jsonl');
};

describe('files that are not memoirs are refused untouched', () => {
  it('append to a binary file: exit 3, not one byte changed, no quarantine', async () => {
    const file = join(ctx.home, 'picture.png');
    const bytes = Buffer.from([
      0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 1, 2, 3, 0, 0xff, 0xfe,
    ]);
    writeFileSync(file, bytes);
    const err = await failure(run(append, { entry: JSON.stringify(proposal), memoir: [file] }));
    expect(err.exitCode).toBe(ExitCode.environment);
    expect(err.message).toBe(`not a memoir, refusing to write into it: ${file} (it holds binary data)`);
    expect(readFileSync(file)).toEqual(bytes);
    expect(() => readFileSync(`${file}.quarantine.jsonl`)).toThrow();
  });

  it('repair of a Markdown file: exit 3, not one byte cut', async () => {
    const file = join(ctx.home, 'notes.md');
    const text = '# Notes\n\nSome text that is not JSON.\nno newline at the end';
    writeFileSync(file, text);
    const err = await failure(run(repair, { memoir: [file] }));
    expect(err.exitCode).toBe(ExitCode.environment);
    expect(err.message).toBe(
      `not a memoir, refusing to write into it: ${file} (none of its 3 lines is a memoir entry)`,
    );
    expect(readFileSync(file, 'utf8')).toBe(text);
  });

  it('a memoir whose first line is damaged is still a memoir', async () => {
    const file = forge();
    writeFileSync(
      file,
      `not json\n${JSON.stringify({ ...proposal, context: null, narrative_beat: null, player_response: null, affinity_delta: 0.0, training_label: null, split: { shared_eligible: true, private_only: false } })}\n`,
    );
    expect((await run(append, { entry: JSON.stringify(proposal), memoir: [file] })).written).toBe(1);
  });
});

describe('symlinks', () => {
  it('append and repair refuse a symlinked memoir, naming link and target; the target is untouched', async () => {
    const real = forge('real');
    new Memoir(real).append([proposal as never]);
    appendFileSync(real, '{"torn');
    const before = readFileSync(real);
    const link = join(ctx.home, 'link.jsonl');
    symlinkSync(real, link);
    for (const p of [
      run(append, { entry: JSON.stringify(proposal), memoir: [link] }),
      run(repair, { memoir: [link] }),
    ]) {
      const err = await failure(p);
      expect(err.exitCode).toBe(ExitCode.environment);
      expect(err.message).toBe(`refusing to write through a symlink: memoir ${link} -> ${real}`);
    }
    expect(readFileSync(real)).toEqual(before);
  });

  it('reads follow a symlinked memoir, and discovery finds it once even when its target is found too', async () => {
    const real = join(ctx.home, 'elsewhere', 'memoir.jsonl');
    mkdirSync(join(ctx.home, 'elsewhere'));
    new Memoir(real).append([proposal as never, { ...proposal, scene_id: 'session-1a2b3c4d.turn-2' } as never]);
    const inHome = forge('linked');
    symlinkSync(real, inHome);
    const s = await run(stats, {});
    expect(s.entries).toBe(2);
    expect((await run(verify, { memoir: [inHome] })).ok).toBe(true);
    // the same file reached twice (a symlinked directory and the real one) is one memoir
    symlinkSync(join(ctx.home, 'projects'), join(ctx.home, 'projects-link'));
    expect((await run(stats, { memoir: [join(ctx.home, 'projects'), join(ctx.home, 'projects-link')] })).entries).toBe(
      2,
    );
  });
});

describe('input that is not text, and lines that are too long', () => {
  it('invalid UTF-8 in an NDJSON file: exit 5 naming the line, nothing written', async () => {
    const file = forge();
    const input = join(ctx.home, 'in.ndjson');
    const good = Buffer.from(`${JSON.stringify(proposal)}\n`);
    const bad = Buffer.concat([
      Buffer.from(
        '{"scene_id":"session-1a2b3c4d.turn-2","agent":"techne","source":"specialist_proposed","agent_proposed":"caf',
      ),
      Buffer.from([0xe9]),
      Buffer.from('"}\n'),
    ]);
    writeFileSync(input, Buffer.concat([good, bad]));
    const err = await failure(run(append, { file: input, memoir: [file] }));
    expect(err.exitCode).toBe(ExitCode.invalidData);
    expect(err.message).toBe(`${input} line 2: invalid UTF-8 at byte 107 of the line`);
    expect(() => readFileSync(file)).toThrow();
  });

  it('invalid UTF-8 on stdin: exit 5 naming the line', async () => {
    const file = forge();
    const c = testCtx({ home: ctx.home, stdinText: undefined });
    (c.stdin as unknown as { end(b: Buffer): void }).end(
      Buffer.concat([
        Buffer.from(`${JSON.stringify(proposal)}\n{"scene_id":"`),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}\n'),
      ]),
    );
    const err = await failure(run(append, { memoir: [file] }, c));
    expect(err.exitCode).toBe(ExitCode.invalidData);
    expect(err.message).toMatch(/^stdin line 2: invalid UTF-8/);
  });

  it('an entry longer than the line limit: exit 5 naming it, nothing written', async () => {
    const file = forge();
    const huge = { ...proposal, agent_proposed: 'x'.repeat(MAX_LINE_BYTES) };
    const err = await failure(run(append, { entry: JSON.stringify(huge), memoir: [file] }));
    expect(err.exitCode).toBe(ExitCode.invalidData);
    expect(err.message).toMatch(/^argument: the entry is 1,048,[0-9]{3} bytes as a line; the maximum is 1,048,576/);
    expect(() => readFileSync(file)).toThrow();
  });

  it('verify reports invalid UTF-8 and over-long lines already in a memoir, by line', async () => {
    const file = forge();
    new Memoir(file).append([proposal as never]);
    const line = readFileSync(file, 'utf8').trim();
    appendFileSync(
      file,
      Buffer.concat([
        Buffer.from(line.replace('def f(): pass', 'd')).subarray(0, 60),
        Buffer.from([0xff]),
        Buffer.from(line.slice(60)),
        Buffer.from('\n'),
      ]),
    );
    appendFileSync(file, `${'{"scene_id":"'.padEnd(MAX_LINE_BYTES + 100, 'y')}"}\n`);
    new Memoir(file).append([{ ...proposal, scene_id: 'session-1a2b3c4d.turn-9' } as never]);
    const v = await run(verify, { memoir: [file] });
    expect(v.problems.map((p) => [p.kind, p.line])).toEqual([
      ['utf8', 2],
      ['too_long', 3],
    ]);
    expect(v.entries).toBe(2);
  });

  // A lone surrogate (`"\ud800"` in JSON input, or a JS string from a library caller) is not
  // Unicode text: JSON.stringify writes it back as a `\ud800` escape, which Python readers refuse
  // (pydantic: "Invalid JSON: unexpected end of hex escape"), so the line would be lost to them.
  it('a lone surrogate escape in the input: exit 5 naming the line, nothing written', async () => {
    const file = forge();
    const input = join(ctx.home, 'in.ndjson');
    writeFileSync(
      input,
      `${JSON.stringify(proposal)}\n${JSON.stringify(proposal).replace('def f(): pass', 'caf\\ud800e')}\n`,
    );
    const err = await failure(run(append, { file: input, memoir: [file] }));
    expect(err.exitCode).toBe(ExitCode.invalidData);
    expect(err.message).toMatch(
      new RegExp(`^${input.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} line 2: .*lone surrogate`),
    );
    expect(() => readFileSync(file)).toThrow();
    // A proper pair written as escapes is text, and an escaped backslash before "ud800" is too.
    writeFileSync(input, `${JSON.stringify(proposal).replace('def f(): pass', '\\ud83d\\ude00 \\\\ud800')}\n`);
    await run(append, { file: input, memoir: [file] });
    expect(readFileSync(file, 'utf8')).toContain('"agent_proposed":"😀 \\\\ud800"');
  });

  it('a lone surrogate from a library caller is refused, nothing written', () => {
    const file = forge();
    expect(() => new Memoir(file).append([{ ...proposal, agent_proposed: 'x\udc00y' } as never])).toThrow(
      /entry 1: .*lone surrogate/,
    );
    expect(() => readFileSync(file)).toThrow();
  });

  it('verify reports a lone surrogate escape already in a memoir, by line', async () => {
    const file = forge();
    new Memoir(file).append([proposal as never]);
    appendFileSync(
      file,
      `${JSON.stringify({ ...proposal, context: null, narrative_beat: null, player_response: null, affinity_delta: 0, training_label: null, split: { shared_eligible: true, private_only: false } }).replace('def f(): pass', 'x\\udbffy')}\n`,
    );
    const v = await run(verify, { memoir: [file] });
    expect(v.problems.map((p) => [p.kind, p.line])).toEqual([['utf8', 2]]);
    expect(v.entries).toBe(1);
  });

  it('a torn tail far longer than the line limit is quarantined in pieces', async () => {
    const file = forge();
    new Memoir(file).append([proposal as never]);
    appendFileSync(file, `{"scene_id":"${'z'.repeat(3 * MAX_LINE_BYTES)}`);
    const r = appendLines(file, [readFileSync(file, 'utf8').split('\n')[0] as string], { staleMs: 0 });
    expect(r.quarantined?.length).toBe(3 * MAX_LINE_BYTES + 13);
    const records = readFileSync(`${file}.quarantine.jsonl`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { part: number; parts: number; base64: string; length: number });
    expect(records.length).toBe(records[0]?.parts);
    expect(records.reduce((n, q) => n + Buffer.from(q.base64, 'base64').length, 0)).toBe(3 * MAX_LINE_BYTES + 13);
    expect([...readRecords(file)].every((x) => x.kind === 'entry')).toBe(true);
  });
});

describe('a fragment still being written is left alone', () => {
  it('an append waits for a live writer to finish its line instead of cutting it', async () => {
    const file = forge();
    new Memoir(file).append([proposal as never]);
    const whole = readFileSync(file, 'utf8')
      .replace('turn-1', 'turn-2')
      .replace(/"entry_id":"[^"]+"/, '"entry_id":"01M3VCAZ7Y3T5Q9B6HQP9WD1P1"');
    appendFileSync(file, whole.slice(0, 50));
    // A live writer finishes its line 600 ms later (another process, so this one can wait).
    const finisher = spawn(process.execPath, [
      '-e',
      `setTimeout(() => require('fs').appendFileSync(${JSON.stringify(file)}, ${JSON.stringify(whole.slice(50))}), 600)`,
    ]);
    const r = appendLines(file, [lineOf({ scene_id: 'session-1a2b3c4d.turn-3' })], {
      staleMs: 10_000,
      lockWaitMs: 20_000,
    });
    await new Promise((res) => finisher.on('exit', res));
    expect(r.quarantined).toBeUndefined();
    const recs = [...readRecords(file)];
    expect(recs.map((x) => x.kind)).toEqual(['entry', 'entry', 'entry']);
    expect(recs.map((x) => (x.kind === 'entry' ? x.entry.scene_id : ''))).toEqual([
      'session-1a2b3c4d.turn-1',
      'session-1a2b3c4d.turn-2',
      'session-1a2b3c4d.turn-3',
    ]);
  });

  it('a fragment that keeps being fresh is never cut: the append gives up with exit 7, the file unchanged', async () => {
    const file = forge();
    new Memoir(file).append([proposal as never]);
    appendFileSync(file, '{"scene_id":"live');
    const before = readFileSync(file);
    expect(() => appendLines(file, [JSON.stringify(proposal)], { staleMs: 60_000, lockWaitMs: 200 })).toThrow(
      /a write is in progress at the end of/,
    );
    expect(readFileSync(file)).toEqual(before);
  });
});

describe('verify sees every change', () => {
  /** A memoir of about `bytes` bytes from the synthetic forge. */
  function memoirOf(file: string, bytes: number): void {
    const lines: string[] = [];
    let n = 0;
    for (const s of synthSessions({ seed: 3, sessions: 1e9, turns: 12 })) {
      for (const l of s.lines) {
        lines.push(l);
        n += l.length + 1;
      }
      if (n >= bytes) break;
    }
    writeFileSync(file, `${lines.join('\n')}\n`);
  }
  /** Changes one affinity_delta near `at` to the same number of characters. */
  function editNear(file: string, at: number): number {
    const text = readFileSync(file, 'latin1');
    const i = text.indexOf('"affinity_delta":0.', at) + '"affinity_delta":0.'.length;
    const fd = openSync(file, 'r+');
    writeSync(fd, text[i] === '9' ? '1' : '9', i);
    closeSync(fd);
    return i;
  }

  for (const [size, at] of [
    [299_256, 150_519],
    [1_284_288, 1_100_739],
  ] as const) {
    it(`a same-length edit at byte ~${at} of a ${size}-byte memoir is caught`, async () => {
      const file = forge();
      memoirOf(file, size);
      await run(stats, { memoir: [file] }); // indexed
      editNear(file, at);
      const v = await run(verify, { memoir: [file] });
      expect(v.problems.map((p) => p.kind)).toEqual(['not_append']);
      expect(v.problems[0]?.fix).toBe(`kourai memoir index --rebuild --memoir ${file}`);
    });
  }

  it('running the suggested fix acknowledges the change: verify is clean afterwards, and stays so', async () => {
    const file = forge();
    memoirOf(file, 200_000);
    await run(stats, { memoir: [file] });
    editNear(file, 100_000);
    const before = await run(verify, { memoir: [file] });
    expect(before.ok).toBe(false);
    await run(indexCmd, { memoir: [file], rebuild: true });
    expect((await run(verify, { memoir: [file] })).problems).toEqual([]);
    // a change the index noticed on its own (head bytes edited, then a read command) is acknowledged the same way
    const fd = openSync(file, 'r+');
    writeSync(fd, '{"scene_id":"session-0', 0);
    closeSync(fd);
    await run(inspect, { memoir: [file], limit: '1' });
    const noticed = await run(verify, { memoir: [file] });
    expect(noticed.problems.filter((p) => p.kind === 'not_append').map((p) => p.fix)).toEqual([
      `kourai memoir index --rebuild --memoir ${file}`,
    ]);
    await run(indexCmd, { memoir: [file], rebuild: true });
    expect((await run(verify, { memoir: [file] })).problems.filter((p) => p.kind === 'not_append')).toEqual([]);
  });
});

describe('an unfinished batch', () => {
  it('verify reports it, and repair rolls it back into the quarantine', async () => {
    const file = forge();
    new Memoir(file).append([proposal as never]);
    const before = readFileSync(file);
    // What a writer killed inside its write leaves: the journal, and part of the batch.
    const batch = Buffer.from(`${lineOf({ scene_id: 'a' })}\n${lineOf({ scene_id: 'b' })}\n`);
    const { Journal } = await import('../../src/memoir/file/journal.js');
    const j = new Journal(file, false);
    j.start();
    j.add(batch);
    j.seal({ op: 'batch', offset: before.length });
    j.close();
    appendFileSync(file, batch.subarray(0, batch.length - 20));
    const v = await run(verify, { memoir: [file] });
    expect(v.problems.map((p) => p.kind)).toEqual(['uncommitted_batch', 'torn_tail']);
    const r = await run(repair, { memoir: [file] });
    expect(r.repaired).toEqual([
      expect.objectContaining({ reason: 'uncommitted_batch', offset: before.length, length: batch.length - 20 }),
    ]);
    expect(readFileSync(file)).toEqual(before);
    expect((await run(verify, { memoir: [file] })).ok).toBe(true);
  });
});
