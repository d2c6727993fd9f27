import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import feedback, { type FeedbackResult } from '../../src/commands/feedback.js';
import show from '../../src/commands/memoir/show.js';
import type { Ctx } from '../../src/context.js';
import { appendLines, prepareEntries } from '../../src/memoir/file/append.js';
import { ulidGenerator } from '../../src/memoir/format/entry-id.js';
import { runCommand } from '../../src/run-command.js';
import { removeDir, testCtx, type TestCtx } from '../helpers/ctx.js';
import { lineCount, readEntries, sampleForge } from '../helpers/forge.js';
import { KEY, settle, ttyCtx, until, type TtyCtx } from '../helpers/tty.js';

let ctx: TestCtx;
let memoirs: string[];
let memoir: string;
let techneScene: string;
let kallosScene: string;

beforeEach(async () => {
  ctx = testCtx();
  memoirs = await sampleForge(ctx.home);
  // The newest session (synth writes them in story order; the fourth has kourai timestamps).
  memoir = memoirs[3] as string;
  const entries = readEntries(memoir);
  techneScene = entries.find((e) => e.agent === 'techne' && e.source === 'specialist_proposed')?.scene_id as string;
  kallosScene = entries.find((e) => e.agent === 'kallos' && e.source === 'specialist_proposed')?.scene_id as string;
});
afterEach(() => removeDir(ctx.home));

const load = () => import('../../src/commands/feedback.js');
/** Runs the command as the CLI does (raw commander options in, JSON or text out). */
async function cli(raw: Record<string, unknown>, c: Ctx = ctx): Promise<number> {
  return runCommand(load as never, { memoir: [memoir], ...raw }, c);
}
function jsonOut(c: TestCtx = ctx): FeedbackResult {
  return JSON.parse(c.stdout.text) as FeedbackResult;
}
const techne = () => ({ agent: 'techne', scene: techneScene, proposed: 'x = compute()  # TODO naming' });

describe('kourai feedback, from a script', () => {
  it('--rating 4 --kind accepted --json writes one entry and prints its id; memoir show finds it', async () => {
    const before = lineCount(memoir);
    expect(await cli({ ...techne(), rating: '4', kind: 'accepted', json: true })).toBe(0);
    const r = jsonOut();
    expect(r).toMatchObject({ asked: true, answered: true, skipped: false, reason: 'ready', would_ask: true, memoir });
    expect(r.entry_id).toMatch(/^[0-9A-Z]{26}$/);
    expect(lineCount(memoir)).toBe(before + 1);
    const written = readEntries(memoir).at(-1);
    expect(written).toMatchObject({
      entry_id: r.entry_id,
      scene_id: techneScene,
      agent: 'techne',
      source: 'specialist_proposed',
      agent_proposed: 'x = compute()  # TODO naming',
      player_response: { kind: 'accepted', felt: 'right', delta: null },
      affinity_delta: 0.02,
      training_label: null,
      likert: 4,
    });
    // The scene's context is carried over from the agent's own entry in that scene.
    expect(written?.context?.task_type).toBe('code');
    const shown = await show.run(show.options.parse({ id: r.entry_id as string }), testCtx({ home: ctx.home }));
    expect(shown.entry).toMatchObject({ entry_id: r.entry_id, likert: 4 });
  });

  it('the text result names the entry and how to see it', async () => {
    await cli({ ...techne(), rating: '5', kind: 'accepted', comment: 'spot on' });
    expect(ctx.stdout.text).toMatch(
      /✓ recorded: techne rated 5\/5 \(exactly right\), accepted; affinity \+0\.02 → 0\.36 familiar/,
    );
    expect(ctx.stdout.text).toMatch(/see it: kourai memoir show [0-9A-Z]{26}/);
    expect(readEntries(memoir).at(-1)).toMatchObject({
      comment: 'spot on',
      split: { shared_eligible: false, private_only: true },
    });
  });

  it('a revision file makes a preference pair (proposed 0, revised 1)', async () => {
    const rev = join(ctx.home, 'revised.py');
    writeFileSync(rev, 'entry_count = compute()\n');
    await cli({ ...techne(), revisedFile: rev, rating: '2', kind: 'modified', json: true });
    const e = readEntries(memoir).at(-1);
    expect(e?.player_response).toEqual({ kind: 'modified', delta: 'entry_count = compute()', felt: 'off' });
    expect(e?.training_label).toEqual({
      preference_pair: [
        { text: 'x = compute()  # TODO naming', score: 0 },
        { text: 'entry_count = compute()', score: 1 },
      ],
      weight: 1,
    });
    expect(e?.affinity_delta).toBe(-0.05);
  });

  it('reads the proposal from --proposed-file, or from stdin with -', async () => {
    const f = join(ctx.home, 'proposal.txt');
    writeFileSync(f, 'line one\nline two\n');
    await cli({
      agent: 'techne',
      scene: techneScene,
      proposedFile: f,
      rating: '3',
      kind: 'deferred',
      force: true,
      json: true,
    });
    expect(readEntries(memoir).at(-1)?.agent_proposed).toBe('line one\nline two');
  });
});

describe('the gate', () => {
  it('does not ask below the affinity tier: exit 0, says why, writes nothing', async () => {
    const before = lineCount(memoir);
    // No answer given and no terminal: the gate says no, so nothing is asked (exit 0, not 2).
    expect(await cli({ agent: 'kallos', scene: kallosScene, proposed: 'Rename it', json: true })).toBe(0);
    const r = jsonOut();
    expect(r).toMatchObject({
      asked: false,
      answered: false,
      reason: 'affinity_below_tier',
      entry_id: null,
      entry: null,
      would_ask: false,
    });
    expect(r.message).toBe('not asking: affinity with kallos is 0.04 (stranger); feedback opens at familiar (0.15)');
    expect(r.gate).toMatchObject({ affinity: 0.044976, tier: 'stranger', min_tier: 'familiar', min_affinity: 0.15 });
    expect(lineCount(memoir)).toBe(before);
  });

  it('--force asks anyway', async () => {
    await cli({
      agent: 'kallos',
      scene: kallosScene,
      proposed: 'Rename it',
      rating: '4',
      kind: 'accepted',
      force: true,
      json: true,
    });
    expect(jsonOut()).toMatchObject({ asked: true, answered: true, reason: 'forced' });
  });

  it('respects the cooldown after a feedback, counting the agent’s entries since', async () => {
    await cli({ ...techne(), rating: '4', kind: 'accepted' });
    const second = testCtx({ home: ctx.home });
    await cli({ ...techne(), json: true }, second);
    expect(jsonOut(second)).toMatchObject({
      asked: false,
      reason: 'cooldown',
      gate: { entries_since: 0, cooldown: 5 },
    });
    expect(jsonOut(second).message).toBe('not asking: 0 techne entries since its last feedback; the cooldown is 5');
    // Five more techne entries later, it asks again.
    appendTechne(5);
    const third = testCtx({ home: ctx.home });
    await cli({ ...techne(), check: true, json: true }, third);
    expect(jsonOut(third)).toMatchObject({ would_ask: true, reason: 'check_only' });
  });

  it('an answer given by flags is recorded whatever the gate says (the gate decides whether to ask)', async () => {
    await cli({ ...techne(), rating: '4', kind: 'accepted' });
    const before = lineCount(memoir);
    const during = testCtx({ home: ctx.home });
    // In the cooldown, and for an agent below the tier: the host's answer is still written.
    expect(await cli({ ...techne(), rating: '2', kind: 'rejected', json: true }, during)).toBe(0);
    expect(jsonOut(during)).toMatchObject({ answered: true, reason: 'cooldown', entry: { likert: 2 } });
    const below = testCtx({ home: ctx.home });
    expect(
      await cli(
        { agent: 'kallos', scene: kallosScene, proposed: 'Rename it', rating: '5', kind: 'accepted', json: true },
        below,
      ),
    ).toBe(0);
    expect(jsonOut(below)).toMatchObject({ answered: true, reason: 'affinity_below_tier' });
    expect(lineCount(memoir)).toBe(before + 2);
    expect(
      readEntries(memoir)
        .slice(-2)
        .map((e) => [e.agent, e.likert]),
    ).toEqual([
      ['techne', 2],
      ['kallos', 5],
    ]);
  });

  it('--check says whether it would ask and writes nothing', async () => {
    const before = lineCount(memoir);
    await cli({ ...techne(), check: true, json: true });
    expect(jsonOut()).toMatchObject({
      asked: false,
      reason: 'check_only',
      would_ask: true,
      message: 'would ask: affinity with techne is 0.34 (familiar)',
    });
    expect(lineCount(memoir)).toBe(before);
  });

  it('the tier and cooldown come from KOURAI_FEEDBACK_* and flags (flags win)', async () => {
    const env = { ...ctx.env, KOURAI_FEEDBACK_MIN_TIER: 'stranger' };
    const a = testCtx({ home: ctx.home, env });
    await cli({ agent: 'kallos', scene: kallosScene, proposed: 'Rename it', check: true, json: true }, a);
    expect(jsonOut(a).would_ask).toBe(true);
    const b = testCtx({ home: ctx.home, env });
    await cli({ agent: 'techne', scene: techneScene, proposed: 'x', minTier: 'trusted', check: true, json: true }, b);
    expect(jsonOut(b)).toMatchObject({ would_ask: false, gate: { min_tier: 'trusted' } });
    await expect(
      cli(
        { ...techne(), check: true },
        testCtx({ home: ctx.home, env: { ...ctx.env, KOURAI_FEEDBACK_MIN_TIER: 'bestie' } }),
      ),
    ).rejects.toMatchObject({
      exitCode: 3,
      message: expect.stringContaining('KOURAI_FEEDBACK_MIN_TIER=bestie: not a tier'),
    });
  });
});

function appendTechne(n: number): void {
  const ids = ulidGenerator(
    () => Date.UTC(2026, 10, 23),
    (k) => new Uint8Array(k).fill(3),
  );
  const items = Array.from({ length: n }, (_, i) => ({
    value: {
      scene_id: `${techneScene}.later-${i}`,
      agent: 'techne',
      source: 'specialist_proposed',
      agent_proposed: `p${i}`,
    },
    where: `t${i}`,
  }));
  appendLines(
    memoir,
    prepareEntries(items, ids, () => new Date('2026-11-23T00:00:00Z')).map((p) => p.line),
  );
}

describe('bad input: a clear message, the documented exit code, nothing written', () => {
  const cases: [string, Record<string, unknown>, number, RegExp][] = [
    [
      'unknown agent',
      { agent: 'techn', scene: 'S', proposed: 'p', rating: '4', kind: 'accepted' },
      2,
      /--agent: unknown agent "techn" \(did you mean "techne"\?\)/,
    ],
    ['missing agent', { scene: 'S', proposed: 'p', rating: '4', kind: 'accepted' }, 2, /--agent: required/],
    [
      'rating 0',
      { agent: 'techne', scene: 'S', proposed: 'p', rating: '0', kind: 'accepted' },
      2,
      /--rating: "0" is not a rating: use a whole number from 1 \(way off\) to 5 \(exactly right\)/,
    ],
    [
      'rating 6',
      { agent: 'techne', scene: 'S', proposed: 'p', rating: '6', kind: 'accepted' },
      2,
      /--rating: "6" is not a rating/,
    ],
    [
      'rating 4.5',
      { agent: 'techne', scene: 'S', proposed: 'p', rating: '4.5', kind: 'accepted' },
      2,
      /--rating: "4.5" is not a rating/,
    ],
    [
      'rating abc',
      { agent: 'techne', scene: 'S', proposed: 'p', rating: 'abc', kind: 'accepted' },
      2,
      /--rating: "abc" is not a rating/,
    ],
    [
      'rating with a space',
      { agent: 'techne', scene: 'S', proposed: 'p', rating: ' 4', kind: 'accepted' },
      2,
      /--rating: " 4" is not a rating/,
    ],
    [
      'rating 1e0',
      { agent: 'techne', scene: 'S', proposed: 'p', rating: '1e0', kind: 'accepted' },
      2,
      /--rating: "1e0" is not a rating/,
    ],
    [
      'rating 0x4',
      { agent: 'techne', scene: 'S', proposed: 'p', rating: '0x4', kind: 'accepted' },
      2,
      /--rating: "0x4" is not a rating/,
    ],
    [
      'unknown kind',
      { agent: 'techne', scene: 'S', proposed: 'p', rating: '4', kind: 'liked' },
      2,
      /--kind: "liked" is not a response kind/,
    ],
    [
      'empty proposal',
      { agent: 'techne', proposed: '   ', rating: '4', kind: 'accepted' },
      2,
      /the proposal is empty \(--proposed\)/,
    ],
    [
      'no proposal',
      { agent: 'techne', rating: '4', kind: 'accepted' },
      2,
      /exactly one of --proposed TEXT or --proposed-file FILE/,
    ],
    [
      'two proposals',
      { agent: 'techne', proposed: 'a', proposedFile: 'b', rating: '4', kind: 'accepted' },
      2,
      /exactly one of --proposed TEXT or --proposed-file FILE/,
    ],
    [
      'missing proposal file',
      { agent: 'techne', proposedFile: 'nope.txt', rating: '4', kind: 'accepted' },
      6,
      /--proposed-file not found: nope\.txt/,
    ],
    [
      'missing revision file',
      { agent: 'techne', proposed: 'p', revisedFile: 'gone.txt', rating: '4', kind: 'accepted' },
      6,
      /--revised-file not found: gone\.txt/,
    ],
    [
      'no rating or kind, not interactive',
      { agent: 'techne', proposed: 'p' },
      2,
      /pass --rating 1-5 and --kind accepted\|modified\|rejected\|deferred/,
    ],
    [
      'no kind, not interactive',
      { agent: 'techne', proposed: 'p', rating: '4' },
      2,
      /cannot show the feedback prompt .*: pass --kind accepted\|modified\|rejected\|deferred$/,
    ],
  ];
  it.each(cases)('%s', async (_name, raw, code, message) => {
    const before = lineCount(memoir);
    const err = await cli({ scene: techneScene, ...raw }).catch((e: unknown) => e);
    expect(err).toMatchObject({ exitCode: code });
    expect((err as Error).message).toMatch(message);
    expect(lineCount(memoir)).toBe(before);
  });

  it('unknown scene: exit 6 and the latest scenes as a hint', async () => {
    const before = lineCount(memoir);
    const err = (await cli({ ...techne(), scene: 'session-deadbeef.turn-99', rating: '4', kind: 'accepted' }).catch(
      (e: unknown) => e,
    )) as { exitCode: number; message: string; hint: string };
    expect(err.exitCode).toBe(6);
    expect(err.message).toBe(`scene "session-deadbeef.turn-99" is not in ${memoir}`);
    expect(err.hint).toMatch(/^its latest scenes: session-/);
    expect(lineCount(memoir)).toBe(before);
  });

  it('a scene of another session of the forge is not in this memoir', async () => {
    const other = readEntries(memoirs[0] as string)[0]?.scene_id as string;
    await expect(cli({ ...techne(), scene: other, rating: '4', kind: 'accepted' })).rejects.toMatchObject({
      exitCode: 6,
    });
  });

  it('--memoir is required, must exist, and must be one session', async () => {
    const raw = { ...techne(), rating: '4', kind: 'accepted' };
    await expect(runCommand(load as never, { ...raw, memoir: [] }, ctx)).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('feedback needs --memoir PATH'),
    });
    await expect(runCommand(load as never, { ...raw, memoir: ['nowhere/memoir.jsonl'] }, ctx)).rejects.toMatchObject({
      exitCode: 6,
    });
    await expect(
      runCommand(load as never, { ...raw, memoir: [join(ctx.home, 'projects')] }, ctx),
    ).rejects.toMatchObject({ exitCode: 6, message: expect.stringContaining('no memoir.jsonl in this directory') });
  });

  it('an empty or unchanged revision is refused', async () => {
    const empty = join(ctx.home, 'empty.txt');
    writeFileSync(empty, '\n');
    await expect(cli({ ...techne(), revisedFile: empty, rating: '4', kind: 'modified' })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('is empty'),
    });
    const same = join(ctx.home, 'same.txt');
    writeFileSync(same, 'x = compute()  # TODO naming\n');
    await expect(cli({ ...techne(), revisedFile: same, rating: '4', kind: 'modified' })).rejects.toMatchObject({
      exitCode: 2,
      message: expect.stringContaining('the proposal unchanged'),
    });
  });

  it('a binary proposal file is refused', async () => {
    const bin = join(ctx.home, 'blob.bin');
    writeFileSync(bin, Buffer.from([0x7f, 0x45, 0x4c, 0x46, 0, 1, 2]));
    await expect(
      cli({ agent: 'techne', scene: techneScene, proposedFile: bin, rating: '4', kind: 'accepted' }),
    ).rejects.toMatchObject({ exitCode: 2, message: expect.stringContaining('looks binary') });
  });
});

describe('kourai feedback, interactive (a pretend terminal)', () => {
  async function start(c: TtyCtx, raw: Record<string, unknown> = {}): Promise<{ done: Promise<FeedbackResult> }> {
    const opts = feedback.options.parse({ memoir: [memoir], ...techne(), ...raw });
    const done = feedback.run(opts, c);
    done.catch(() => undefined);
    await until(() => c.tty.stdin.listening, 'the prompt to listen for keys');
    return { done };
  }

  it('types 4, Enter, Enter, a comment, Enter: writes the entry', async () => {
    const c = ttyCtx({ home: ctx.home });
    const before = lineCount(memoir);
    const { done } = await start(c);
    c.tty.stdin.type('4');
    await settle();
    c.tty.stdin.type(KEY.enter);
    await settle();
    c.tty.stdin.type(KEY.enter);
    await settle();
    c.tty.stdin.type('reads well');
    await settle();
    c.tty.stdin.type(KEY.enter);
    const r = await done;
    expect(r).toMatchObject({ asked: true, answered: true });
    expect(lineCount(memoir)).toBe(before + 1);
    expect(readEntries(memoir).at(-1)).toMatchObject({
      entry_id: r.entry_id,
      likert: 4,
      comment: 'reads well',
      player_response: { kind: 'accepted', felt: 'right' },
    });
  });

  it('Esc skips: nothing written, and the next prompt waits (back-off after a skip)', async () => {
    const c = ttyCtx({ home: ctx.home });
    const before = lineCount(memoir);
    const { done } = await start(c);
    c.tty.stdin.type('5');
    await settle();
    c.tty.stdin.type(KEY.escape);
    const r = await done;
    expect(r).toMatchObject({ asked: true, answered: false, skipped: true, entry_id: null });
    expect(r.message).toBe('skipped: nothing was written; the next prompt for techne waits for 10 more of its entries');
    expect(lineCount(memoir)).toBe(before);
    const next = testCtx({ home: ctx.home });
    await cli({ ...techne(), json: true }, next);
    expect(jsonOut(next)).toMatchObject({
      asked: false,
      reason: 'cooldown',
      gate: { skips: 1, cooldown: 10, entries_since: 0 },
    });
    expect(jsonOut(next).message).toMatch(
      /since the player skipped a prompt for it; the cooldown is 10 \(backed off after 1 skip\)/,
    );
    appendTechne(9);
    const still = testCtx({ home: ctx.home });
    await cli({ ...techne(), json: true }, still);
    expect(jsonOut(still)).toMatchObject({ asked: false, gate: { entries_since: 9 } });
    appendTechne(1);
    const now = testCtx({ home: ctx.home });
    await cli({ ...techne(), rating: '4', kind: 'accepted', json: true }, now);
    expect(jsonOut(now)).toMatchObject({ asked: true, answered: true });
    // An answer ends the back-off: the next cooldown is the base one again.
    appendTechne(5);
    const after = testCtx({ home: ctx.home });
    await cli({ ...techne(), check: true, json: true }, after);
    expect(jsonOut(after)).toMatchObject({ would_ask: true, gate: { skips: 0, cooldown: 5 } });
  });

  it('a rating written by another host after a skip ends the back-off too', async () => {
    const c = ttyCtx({ home: ctx.home });
    const { done } = await start(c);
    c.tty.stdin.type(KEY.escape);
    expect((await done).skipped).toBe(true);
    const ids = ulidGenerator(
      () => Date.UTC(2026, 10, 24),
      (k) => new Uint8Array(k).fill(9),
    );
    const [rated] = prepareEntries(
      [
        {
          value: {
            scene_id: techneScene,
            agent: 'techne',
            source: 'specialist_proposed',
            agent_proposed: 'q',
            likert: 5,
          },
          where: 'host',
        },
      ],
      ids,
      () => new Date('2026-11-24T00:00:00Z'),
    );
    appendLines(memoir, [rated?.line as string]);
    const next = testCtx({ home: ctx.home });
    await cli({ ...techne(), check: true, json: true }, next);
    expect(jsonOut(next)).toMatchObject({ would_ask: false, gate: { skips: 0, cooldown: 5, entries_since: 0 } });
    expect(jsonOut(next).message).toMatch(/since its last feedback; the cooldown is 5$/);
  });

  it('Ctrl-C mid-prompt: exit 130, nothing written', async () => {
    const c = ttyCtx({ home: ctx.home });
    const before = lineCount(memoir);
    const { done } = await start(c);
    c.tty.stdin.type('4');
    await settle();
    c.tty.stdin.type(KEY.enter);
    await settle();
    c.tty.stdin.type(KEY.ctrlC);
    await expect(done).rejects.toMatchObject({ exitCode: 130, message: 'feedback cancelled; nothing was written' });
    expect(lineCount(memoir)).toBe(before);
  });

  it('SIGINT from outside (the context’s signal) cancels too', async () => {
    const ac = new AbortController();
    const c = ttyCtx({ home: ctx.home, signal: ac.signal });
    const { done } = await start(c);
    ac.abort();
    await expect(done).rejects.toMatchObject({ exitCode: 130 });
  });

  it('a stdin that closes mid-prompt cancels: exit 130, nothing written', async () => {
    const c = ttyCtx({ home: ctx.home });
    const before = lineCount(memoir);
    const { done } = await start(c);
    c.tty.stdin.type('4');
    await settle();
    c.tty.stdin.close();
    await expect(done).rejects.toMatchObject({
      exitCode: 130,
      message: 'feedback cancelled: the input closed before the prompt was answered; nothing was written',
    });
    expect(lineCount(memoir)).toBe(before);
  });

  it('a terminal too small is refused before the prompt starts (exit 3), naming the flags to use instead', async () => {
    const c = ttyCtx({ home: ctx.home, columns: 40, rows: 10 });
    const before = lineCount(memoir);
    const err = (await feedback
      .run(feedback.options.parse({ memoir: [memoir], ...techne() }), c)
      .catch((e: unknown) => e)) as { exitCode: number; message: string; hint: string };
    expect(err.exitCode).toBe(3);
    expect(err.message).toBe('the terminal is 40×10; the feedback prompt needs at least 60×18');
    expect(err.hint).toBe(
      'enlarge the window, or answer with flags: --rating 1-5 --kind accepted|modified|rejected|deferred',
    );
    expect(c.tty.stdin.listening).toBe(false);
    expect(lineCount(memoir)).toBe(before);
  });

  it('with --rating and --kind in a terminal, no prompt is shown', async () => {
    const c = ttyCtx({ home: ctx.home });
    const r = await feedback.run(
      feedback.options.parse({ memoir: [memoir], ...techne(), rating: '5', kind: 'accepted' }),
      c,
    );
    expect(r.answered).toBe(true);
    expect(c.tty.stdout.text).toBe('');
  });
});
