import { appendFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import append from '../../src/commands/memoir/append.js';
import inspect from '../../src/commands/memoir/inspect.js';
import repair from '../../src/commands/memoir/repair.js';
import show from '../../src/commands/memoir/show.js';
import stats from '../../src/commands/memoir/stats.js';
import synth from '../../src/commands/memoir/synth.js';
import verify from '../../src/commands/memoir/verify.js';
import doctor from '../../src/commands/doctor.js';
import { resolveOptions } from '../../src/run-command.js';
import type { Command } from '../../src/commands/types.js';
import type { KouraiError } from '../../src/errors.js';
import { ExitCode } from '../../src/errors.js';
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

const proposal = {
  scene_id: 'session-1a2b3c4d.turn-1',
  agent: 'techne',
  source: 'specialist_proposed',
  agent_proposed: 'def f(): pass',
};

describe('memoir commands on the sample forge', () => {
  it('synth writes a multi-session forge under KOURAI_HOME, and again is a no-op without --force', async () => {
    const r = await run(synth, {});
    expect(r.memoirs).toHaveLength(4);
    expect(
      r.memoirs.every((p) => p.startsWith(join(ctx.home, 'projects', 'ariadne', 'sample-forge', '.kourai', 'forges'))),
    ).toBe(true);
    const again = await run(synth, {});
    expect(again.existing).toBe(true);
    expect(again.entries).toBe(0);
  });

  it('stats: every agent appears; bond-only agents are never shared', async () => {
    await run(synth, {});
    const s = await run(stats, {});
    expect(s.by_agent.map((a) => a.agent).sort()).toEqual([
      'aidos',
      'aletheia',
      'cupid',
      'dokimasia',
      'hephaestus',
      'kallos',
      'metis',
      'mneme',
      'puck',
      'techne',
    ]);
    for (const a of s.by_agent) if (a.agent === 'cupid' || a.agent === 'puck') expect(a.shared).toBe(0);
    expect(s.shared + s.private).toBe(s.entries);
    expect(s.sessions).toBe(4);
  });

  it('inspect filters and carries entry ids; show finds an entry by id and by prefix', async () => {
    await run(synth, {});
    const r = await run(inspect, { agent: ['aidos'], limit: '3' });
    expect(r.shown).toBeLessThanOrEqual(3);
    expect(r.entries.every((e) => e.agent === 'aidos' && typeof e.entry_id === 'string')).toBe(true);
    const id = r.entries[0]?.entry_id as string;
    const s = await run(show, { id });
    expect(s.entry.entry_id).toBe(id);
    const p = await run(show, { id: id.slice(0, 20) });
    expect(p.entry.entry_id).toBe(id);
    await expect(run(show, { id: 'NOPE0000000000000000000000' })).rejects.toMatchObject({
      exitCode: ExitCode.notFound,
    });
  });

  it('inspect --ndjson streams one entry per line', async () => {
    await run(synth, {});
    const r = await run(inspect, { ndjson: true, limit: '0' });
    const lines = ctx.stdout.text.trim().split('\n');
    expect(lines).toHaveLength(r.total);
    expect(lines.every((l) => typeof JSON.parse(l).entry_id === 'string')).toBe(true);
  });

  it('verify: clean sample forge is ok; a corrupted line is reported with its line number', async () => {
    const { memoirs } = await run(synth, {});
    expect((await run(verify, {})).ok).toBe(true);
    appendFileSync(
      memoirs[0]!,
      '{"scene_id":"x","agent":"hermes","source":"specialist_proposed","context":null,"narrative_beat":null,"agent_proposed":null,"player_response":null,"affinity_delta":0.0,"training_label":null,"split":{"shared_eligible":false,"private_only":true}}\nnot json\n',
    );
    const v = await run(verify, {});
    expect(v.ok).toBe(false);
    expect(verify.exitCode?.(v)).toBe(1);
    const lines = readFileSync(memoirs[0]!, 'utf8').trim().split('\n').length;
    expect(v.problems.map((p) => [p.kind, p.line])).toEqual([
      ['schema', lines - 1],
      ['json', lines],
    ]);
  });

  it('verify flags the upstream lenient splits', async () => {
    const file = join(ctx.home, 'lenient.jsonl');
    writeFileSync(file, readFileSync(new URL('../fixtures/memoir/python-lenient-splits.jsonl', import.meta.url)));
    const v = await run(verify, { memoir: [file] });
    expect(v.problems.map((p) => p.kind)).toEqual(['lenient_split', 'lenient_split', 'lenient_split', 'lenient_split']);
  });

  it('verify reports a file edited in place after it was indexed', async () => {
    const { memoirs } = await run(synth, {});
    await run(stats, {});
    const text = readFileSync(memoirs[1]!, 'utf8');
    writeFileSync(memoirs[1]!, text.replace('"affinity_delta":0.02', '"affinity_delta":0.99'));
    const v = await run(verify, {});
    expect(v.problems.some((p) => p.kind === 'not_append')).toBe(true);
  });

  it('repair quarantines a torn tail (dry run changes nothing)', async () => {
    const { memoirs } = await run(synth, {});
    appendFileSync(memoirs[2]!, '{"scene_id":"torn');
    const before = readFileSync(memoirs[2]!);
    const dry = await run(repair, { dryRun: true });
    expect(dry.repaired).toHaveLength(1);
    expect(readFileSync(memoirs[2]!)).toEqual(before);
    const done = await run(repair, {});
    expect(done.repaired[0]).toMatchObject({ path: memoirs[2]!, length: 17 });
    expect(readFileSync(memoirs[2]!).length).toBe(before.length - 17);
    expect(readFileSync(`${memoirs[2]!}.quarantine.jsonl`, 'utf8')).toContain('{\\"scene_id\\":\\"torn');
    expect((await run(verify, {})).ok).toBe(true);
  });
});

describe('memoir append', () => {
  it('appends one entry from the argument and returns its id', async () => {
    const file = join(ctx.home, 'f', 'memoir.jsonl');
    const r = await run(append, { entry: JSON.stringify(proposal), memoir: [file] });
    expect(r.written).toBe(1);
    const line = JSON.parse(readFileSync(file, 'utf8'));
    expect(line.entry_id).toBe(r.entries[0]?.entry_id);
    expect(line.split).toEqual({ shared_eligible: true, private_only: false });
  });

  it('takes NDJSON on stdin; one bad line writes nothing and names the line and field', async () => {
    const file = join(ctx.home, 'memoir.jsonl');
    const good = JSON.stringify(proposal);
    const c = testCtx({
      home: ctx.home,
      stdinText: `${good}\n${JSON.stringify({ ...proposal, split: { shared_eligible: true, private_only: true } })}\n`,
    });
    await expect(run(append, { memoir: [file] }, c)).rejects.toThrow(
      /^stdin line 2: split has both shared_eligible and private_only true/,
    );
    expect(() => readFileSync(file)).toThrow();
    const c2 = testCtx({ home: ctx.home, stdinText: `${good}\n${good}\n` });
    expect((await run(append, { memoir: [file] }, c2)).written).toBe(2);
  });

  it('appends to a forge directory given as --memoir', async () => {
    const dir = join(ctx.home, 'forge');
    mkdirSync(dir);
    const r = await run(append, { entry: JSON.stringify(proposal), memoir: [dir] });
    expect(r.memoir).toBe(join(dir, 'memoir.jsonl'));
  });

  it('fails with a usage error without --memoir', async () => {
    // (exit 3 on an unwritable directory: test/e2e/permissions.e2e.test.ts, as an unprivileged user)
    await expect(run(append, { entry: JSON.stringify(proposal) })).rejects.toMatchObject({ exitCode: ExitCode.usage });
  });

  it('a memoir path that does not exist is not found; malformed JSON is invalid data', async () => {
    await expect(run(inspect, { memoir: [join(ctx.home, 'nope')] })).rejects.toMatchObject({
      exitCode: ExitCode.notFound,
    });
    const err = await run(append, { entry: '{"scene_id":', memoir: [join(ctx.home, 'm.jsonl')] }).catch(
      (e: KouraiError) => e,
    );
    expect(err).toMatchObject({ exitCode: ExitCode.invalidData });
    expect((err as Error).message).toMatch(/^argument: malformed JSON/);
  });
});

describe('doctor', () => {
  it('suggests synth on an empty home, and is ok on the sample forge', async () => {
    const empty = await run(doctor, {});
    expect(empty.checks.find((c) => c.name === 'memoirs')).toMatchObject({
      status: 'warn',
      fix: 'kourai memoir synth',
    });
    await run(synth, {});
    const { memoirs } = await run(synth, {});
    appendFileSync(memoirs[0]!, '{"torn');
    const r = await run(doctor, {});
    expect(r.checks.find((c) => c.name === 'torn tails')).toMatchObject({
      status: 'fail',
      fix: 'kourai memoir repair',
    });
    expect(r.ok).toBe(false);
  });
});
