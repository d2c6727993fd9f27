import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openIndex } from '../../src/memoir-index/memoir-index.js';
import replay from '../../src/commands/memoir/replay.js';
import { AGENTS } from '../../src/memoir/format/agents.js';
import stats from '../../src/commands/memoir/stats.js';
import { runCommand } from '../../src/run-command.js';
import { removeDir, testCtx, type TestCtx } from '../helpers/ctx.js';
import { readEntries, sampleForge } from '../helpers/forge.js';
import { KEY, settle, ttyCtx, until } from '../helpers/tty.js';
import { synthLines } from '../helpers/synth-lines.js';

let ctx: TestCtx;
let memoirs: string[];
beforeEach(async () => {
  ctx = testCtx();
  memoirs = await sampleForge(ctx.home);
});
afterEach(() => removeDir(ctx.home));

const load = () => import('../../src/commands/memoir/replay.js');

describe('kourai memoir replay, not interactive', () => {
  it('prints the story as text: every session, scene and beat, with affinity lines', async () => {
    expect(await runCommand(load as never, { memoir: [], agent: [] }, ctx)).toBe(0);
    const out = ctx.stdout.text;
    const total = memoirs.reduce((n, m) => n + readEntries(m).length, 0);
    for (const m of memoirs) for (const e of readEntries(m)) expect(out).toContain(e.entry_id);
    expect(out.match(/^session /gm)).toHaveLength(4);
    expect(out).toContain(`${total} beats in 4 sessions`);
    expect(out).toMatch(/↯ \w+ interrupts \w+ · \w+ · silent: not shown to the player/);
    expect(out).toMatch(/^ {2}affinity {2}hephaestus /m);
  });

  it('--json streams NDJSON records; the affinity at the end agrees with memoir stats', async () => {
    await runCommand(load as never, { memoir: [], agent: [], json: true }, ctx);
    const recs = ctx.stdout.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(recs[0]).toMatchObject({ type: 'session', player: 'ariadne', project: 'sample-forge' });
    expect(new Set(recs.map((r) => r.type))).toEqual(new Set(['session', 'scene', 'beat', 'session_end']));
    const beats = recs.filter((r) => r.type === 'beat');
    expect(beats).toHaveLength(memoirs.reduce((n, m) => n + readEntries(m).length, 0));
    const silent = beats.filter((b) => (b.interrupt as { visibility?: string } | null)?.visibility === 'silent');
    expect(silent.length).toBeGreaterThan(0);
    for (const b of silent) expect(b.interrupt).toMatchObject({ shown_to_player: false });
    const last = recs[recs.length - 1] as { type: string; affinity: Record<string, number> };
    expect(last.type).toBe('session_end');
    const s = await stats.run(stats.options.parse({}), testCtx({ home: ctx.home }));
    for (const a of s.by_agent) if (a.affinity !== 0) expect(last.affinity[a.agent]).toBeCloseTo(a.affinity, 6);
    expect(ctx.stderr.text).toBe('');
  });

  it('--agent shows only that agent; an agent absent from the memoirs is "not found" (exit 6)', async () => {
    await runCommand(load as never, { memoir: [], agent: ['cupid'], json: true }, ctx);
    const beats = ctx.stdout.text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { type: string; agent?: string })
      .filter((r) => r.type === 'beat');
    expect(beats.length).toBeGreaterThan(0);
    expect(new Set(beats.map((b) => b.agent))).toEqual(new Set(['cupid']));
    // A memoir holding one session's first scene: some agents never speak in it.
    const one = join(ctx.home, 'one-scene', 'memoir.jsonl');
    mkdirSync(join(ctx.home, 'one-scene'));
    const lines = readFileSync(memoirs[0] as string, 'utf8')
      .split('\n')
      .filter(Boolean);
    const firstScene = (JSON.parse(lines[0] as string) as { scene_id: string }).scene_id;
    writeFileSync(
      one,
      `${lines.filter((l) => (JSON.parse(l) as { scene_id: string }).scene_id === firstScene).join('\n')}\n`,
    );
    const present = new Set(readEntries(one).map((e) => e.agent));
    const missing = AGENTS.find((a) => !present.has(a));
    expect(missing).toBeDefined();
    const absent = (await runCommand(
      load as never,
      { memoir: [one], agent: [missing] },
      testCtx({ home: ctx.home }),
    ).catch((e: unknown) => e)) as { exitCode: number; message: string };
    expect(absent.exitCode).toBe(6);
    expect(absent.message).toBe(`no entries for ${missing} in 1 memoir`);
  });

  it('--at moves only the screen: the text and NDJSON replays refuse it rather than ignore it (exit 2)', async () => {
    for (const mode of [{}, { json: true }, { ndjson: true }]) {
      await expect(
        runCommand(load as never, { memoir: [], agent: [], at: '01M3XF27', ...mode }, ctx),
      ).rejects.toMatchObject({
        exitCode: 2,
        message: expect.stringMatching(/^--at: only the replay screen starts at an entry/),
      });
    }
  });

  it('an unknown agent name is a usage error (exit 2)', async () => {
    await expect(runCommand(load as never, { memoir: [], agent: ['zeus'] }, ctx)).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('unknown agent "zeus"'),
    });
  });

  it('no memoirs at all: not found, with the command that creates the sample forge', async () => {
    const empty = testCtx();
    await expect(runCommand(load as never, { memoir: [], agent: [] }, empty)).rejects.toMatchObject({
      exitCode: 6,
      hint: expect.stringContaining('kourai memoir synth'),
    });
    removeDir(empty.home);
  });
});

describe('kourai memoir replay, on a terminal', () => {
  it('opens the screen, moves with keys and quits with q (exit 0), reporting where it stopped', async () => {
    const c = ttyCtx({ home: ctx.home });
    const done = replay.run(replay.options.parse({ memoir: [memoirs[0]] }), c);
    await until(() => c.tty.stdin.listening, 'the screen');
    c.tty.stdin.type('l');
    await settle();
    c.tty.stdin.type('l');
    await settle();
    c.tty.stdin.type('q');
    const r = await done;
    expect(r).toMatchObject({ mode: 'screen', sessions: 1 });
    expect(r.last_entry_id).toBe(readEntries(memoirs[0] as string)[2]?.entry_id);
  });

  it('--at starts at an entry', async () => {
    const c = ttyCtx({ home: ctx.home });
    const target = readEntries(memoirs[0] as string)[10]?.entry_id as string;
    const done = replay.run(replay.options.parse({ memoir: [memoirs[0]], at: target }), c);
    await until(() => c.tty.stdin.listening, 'the screen');
    c.tty.stdin.type('q');
    expect((await done).last_entry_id).toBe(target);
  });

  it('Ctrl-C ends it with exit 130', async () => {
    const c = ttyCtx({ home: ctx.home });
    const done = replay.run(replay.options.parse({ memoir: [memoirs[0]] }), c);
    done.catch(() => undefined);
    await until(() => c.tty.stdin.listening, 'the screen');
    c.tty.stdin.type(KEY.ctrlC);
    await expect(done).rejects.toMatchObject({ exitCode: 130 });
  });

  it('a terminal too small is refused with a clear message (exit 3)', async () => {
    const c = ttyCtx({ home: ctx.home, columns: 50, rows: 12 });
    await expect(replay.run(replay.options.parse({}), c)).rejects.toMatchObject({
      exitCode: 3,
      message: 'the terminal is 50×12; the replay screen needs at least 60×20',
      hint: 'enlarge the window, or pass --no-input for the text replay',
    });
  });

  it('--json is never interactive', async () => {
    const c = ttyCtx({ home: ctx.home });
    const r = await replay.run(replay.options.parse({ memoir: [memoirs[0]], json: true }), c);
    expect(r.mode).toBe('ndjson');
    expect(c.tty.stdin.listening).toBe(false);
  });
});

describe('kourai memoir replay over a memoir whose full-text index is not built (a bulk load)', () => {
  function bigMemoir(): string {
    const file = join(ctx.home, 'big', 'memoir.jsonl');
    const lines = synthLines(4, 14_000); // over 8 MiB
    mkdirSync(join(ctx.home, 'big'), { recursive: true });
    writeFileSync(file, `${lines.join('\n')}\n`);
    return file;
  }
  const fts = () => {
    const index = openIndex(ctx.home);
    try {
      return {
        unbuilt: index.withoutFullText().length,
        rows: index.db.prepare('SELECT count(*) FROM entries_fts').pluck().get() as number,
        entries: index.db.prepare('SELECT count(*) FROM entries').pluck().get() as number,
      };
    } finally {
      index.close();
    }
  };

  it('the screen opens without building it; the first search builds it in the screen, then finds', async () => {
    const file = bigMemoir();
    const c = ttyCtx({ home: ctx.home });
    const done = replay.run(replay.options.parse({ memoir: [file] }), c);
    await until(() => c.tty.stdin.listening, 'the screen');
    expect(fts()).toMatchObject({ unbuilt: 1, rows: 0 }); // not built before the screen opened
    c.tty.stdin.type('/');
    await settle();
    c.tty.stdin.type('naming');
    await settle();
    c.tty.stdin.type(KEY.enter);
    await until(() => /"naming": match \d+ of \d+/.test(c.tty.stdout.text), 'the search to land');
    expect(c.tty.stdout.text).toContain('building the full-text index');
    c.tty.stdin.type('q');
    expect((await done).mode).toBe('screen');
    expect(c.stderr.text).toBe(''); // progress is in the screen, not on stderr
    const after = fts();
    expect(after.unbuilt).toBe(0);
    expect(after.rows).toBe(after.entries);
  });

  it('Ctrl-C during that build: exit 130, and the index holds none of it or all of it, never part', async () => {
    const file = bigMemoir();
    const c = ttyCtx({ home: ctx.home });
    const done = replay.run(replay.options.parse({ memoir: [file] }), c);
    done.catch(() => undefined);
    await until(() => c.tty.stdin.listening, 'the screen');
    c.tty.stdin.type('/');
    await settle();
    c.tty.stdin.type('naming');
    await settle();
    c.tty.stdin.type(KEY.enter);
    await until(() => c.tty.stdout.text.includes('building the full-text index'), 'the build to start');
    c.tty.stdin.type(KEY.ctrlC);
    await expect(done).rejects.toMatchObject({ exitCode: 130 });
    const after = fts();
    expect([
      { unbuilt: 1, rows: 0 },
      { unbuilt: 0, rows: after.entries },
    ]).toContainEqual({ unbuilt: after.unbuilt, rows: after.rows });
  });
});
