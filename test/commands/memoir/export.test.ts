import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import exportCmd, { type ExportResult } from '../../../src/commands/memoir/export.js';
import synth from '../../../src/commands/memoir/synth.js';
import { appendLines } from '../../../src/memoir/file/append.js';
import { encodeEntry } from '../../../src/memoir/format/encode.js';
import { memoirPathFor } from '../../../src/memoir/file/discover.js';
import type { MemoirEntry } from '../../../src/memoir/format/schema.js';
import { runCommand } from '../../../src/run-command.js';
import { removeDir, testCtx, type TestCtx } from '../../helpers/ctx.js';
import { runCmd } from '../../helpers/memory.js';
import { ent } from '../../train/examples/helpers.js';

const reader = fileURLToPath(new URL('../../fixtures/python/trl_dpo_reader.py', import.meta.url));

/** Reads the files as TRL's DPO trainer would get them (python3, standard library only). */
function trlRead(
  files: readonly string[],
  conversational = false,
): { file: string; rows: number; columns: string[]; format: string; type: string; prompts: string[] }[] {
  const r = spawnSync('python3', [reader, ...(conversational ? ['--conversational'] : []), ...files], {
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`the TRL-style reader refused the export: ${r.stderr || r.error?.message}`);
  return r.stdout
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}

interface Rec {
  prompt: string;
  chosen: string;
  rejected: string;
}
const records = (path: string): Rec[] =>
  readFileSync(path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Rec);

const ctxs: TestCtx[] = [];
function newCtx(): TestCtx {
  const c = testCtx();
  ctxs.push(c);
  return c;
}
afterEach(() => {
  for (const c of ctxs.splice(0)) removeDir(c.home);
});

const cli = (raw: Record<string, unknown>, ctx: TestCtx): Promise<number> =>
  runCommand(() => import('../../../src/commands/memoir/export.js') as never, { memoir: [], agent: [], ...raw }, ctx);

/** Everything of the forge that must not leave: private entries' texts, revisions, task descriptions. */
function secrets(memoirs: readonly string[]): Set<string> {
  const out = new Set<string>();
  for (const m of memoirs) {
    for (const l of readFileSync(m, 'utf8').split('\n').filter(Boolean)) {
      const e = JSON.parse(l) as MemoirEntry;
      const priv =
        e.split.private_only ||
        !e.split.shared_eligible ||
        e.source === 'player_revision' ||
        e.source === 'task_description';
      if (priv && e.agent_proposed) out.add(e.agent_proposed);
      if (e.player_response?.delta) out.add(e.player_response.delta);
    }
  }
  return out;
}

describe('memoir export --format trl-dpo', () => {
  it('by default: shareable pairs only, one file per agent, read by a TRL-style loader; no private text anywhere', async () => {
    const ctx = newCtx();
    const { memoirs } = await runCmd(synth, { sessions: '8' }, ctx);
    const r = await runCmd(exportCmd, { format: 'trl-dpo', json: true }, ctx);
    expect(r).toMatchObject({
      format: 'trl-dpo',
      out: join(ctx.home, 'trl-dpo'),
      include_private: false,
      malformed: 0,
    });
    expect(ctx.stderr.text).not.toContain('warning');
    const agents = r.files.map((f) => f.agent);
    expect(agents).toEqual(expect.arrayContaining(['techne', 'mneme', 'dokimasia']));
    for (const a of ['cupid', 'puck', 'hephaestus']) expect(agents).not.toContain(a);
    const read = trlRead(r.files.map((f) => f.path));
    expect(read.map((x) => x.rows)).toEqual(r.files.map((f) => f.records));
    expect(
      read.every(
        (x) => x.format === 'standard' && x.type === 'preference' && x.columns.join() === 'chosen,prompt,rejected',
      ),
    ).toBe(true);
    const hidden = secrets(memoirs);
    expect(hidden.size).toBeGreaterThan(50);
    for (const f of r.files) {
      for (const rec of records(f.path)) {
        expect(rec.prompt).toMatch(/^You are \w+, .*\nTask type: \w+\n$/);
        for (const t of [rec.prompt, rec.chosen, rec.rejected])
          for (const s of hidden) expect(t.includes(s), `${f.agent}: ${s}`).toBe(false);
      }
    }
  });

  it('--format trl-dpo-chat: the same pairs as messages with roles, read by a TRL-style conversational loader', async () => {
    const ctx = newCtx();
    await runCmd(synth, { sessions: '8' }, ctx);
    const std = await runCmd(exportCmd, { format: 'trl-dpo', json: true }, ctx);
    const chat = await runCmd(exportCmd, { format: 'trl-dpo-chat', json: true }, ctx);
    expect(chat).toMatchObject({ format: 'trl-dpo-chat', out: join(ctx.home, 'trl-dpo-chat'), records: std.records });
    const read = trlRead(
      chat.files.map((f) => f.path),
      true,
    );
    expect(read.every((x) => x.format === 'conversational' && x.columns.join() === 'chosen,prompt,rejected')).toBe(
      true,
    );
    // The standard reader refuses it, and the conversational one refuses the standard files.
    expect(spawnSync('python3', [reader, chat.files[0]!.path]).status).toBe(1);
    expect(spawnSync('python3', [reader, '--conversational', std.files[0]!.path]).status).toBe(1);
    for (const [i, f] of chat.files.entries()) {
      const plain = records(std.files[i]!.path);
      const lines = readFileSync(f.path, 'utf8')
        .trim()
        .split('\n')
        .map(
          (l) =>
            JSON.parse(l) as {
              prompt: { role: string; content: string }[];
              chosen: { role: string; content: string }[];
              rejected: { role: string; content: string }[];
            },
        );
      lines.forEach((row, k) => {
        expect(row.prompt.map((m) => m.role)).toEqual(['system', 'user']);
        // The standard prompt, split into the two turns.
        expect(`${row.prompt[0]!.content}\n${row.prompt[1]!.content}\n`).toBe(plain[k]!.prompt);
        expect(row.chosen).toEqual([{ role: 'assistant', content: plain[k]!.chosen }]);
        expect(row.rejected).toEqual([{ role: 'assistant', content: plain[k]!.rejected }]);
      });
    }
    const text = await cli({ format: 'trl-dpo-chat', out: 'again' }, ctx);
    expect(text).toBe(0);
    expect(ctx.stdout.text).toMatch(/in TRL's DPO format \(conversational: messages with roles\)/);
  });

  it('--include-private: a warning on stderr; revisions and the task in the prompt', async () => {
    const ctx = newCtx();
    await runCmd(synth, { sessions: '8' }, ctx);
    const shared = await runCmd(exportCmd, { format: 'trl-dpo', out: 'shared' }, ctx);
    const all = await runCmd(exportCmd, { format: 'trl-dpo', out: 'all', includePrivate: true }, ctx);
    expect(ctx.stderr.text).toMatch(
      /warning: --include-private: the files hold private entries and the player’s own words/,
    );
    expect(all.records).toBeGreaterThan(shared.records);
    const techne = records(all.files.find((f) => f.agent === 'techne')?.path as string);
    expect(techne.some((x) => /\nTask: .+\n$/.test(x.prompt))).toBe(true);
    expect(trlRead(all.files.map((f) => f.path)).map((x) => x.rows)).toEqual(all.files.map((f) => f.records));
  });

  it('canaries: the player’s words and private entries reach the files only with --include-private', async () => {
    const ctx = newCtx();
    const path = memoirPathFor(ctx.home, 'p', 'q', 's1');
    mkdirSync(join(path, '..'), { recursive: true });
    const entries = [
      ent({
        scene_id: 'x.turn-1',
        agent: 'hephaestus',
        source: 'task_description',
        agent_proposed: 'CANARY task description',
      }),
      ent({
        scene_id: 'x.turn-1',
        agent: 'techne',
        agent_proposed: 'function a() {}',
        player_response: { kind: 'modified', delta: 'CANARY revised', felt: 'unsure' },
        training_label: {
          preference_pair: [
            { text: 'function a() {}', score: 0 },
            { text: 'CANARY revised', score: 1 },
          ],
          weight: 1,
        },
        comment: 'CANARY comment',
      }),
      ent({
        scene_id: 'x.turn-1',
        agent: 'techne',
        agent_proposed: 'function b(x) {}',
        player_response: { kind: 'rejected', delta: null, felt: 'off' },
      }),
      ent({
        scene_id: 'x.turn-1',
        agent: 'techne',
        agent_proposed: 'function b(x: number): void {}',
        player_response: { kind: 'accepted', delta: null, felt: 'right' },
        training_label: {
          preference_pair: [
            { text: 'function b(x) {}', score: 0 },
            { text: 'function b(x: number): void {}', score: 1 },
          ],
          weight: 1,
        },
      }),
      ent({
        scene_id: 'x.turn-2',
        agent: 'techne',
        agent_proposed: 'CANARY private',
        split: { shared_eligible: false, private_only: true },
        training_label: {
          preference_pair: [
            { text: 'CANARY private old', score: 0 },
            { text: 'CANARY private', score: 1 },
          ],
          weight: 1,
        },
      }),
    ];
    appendLines(
      path,
      entries.map((e) => encodeEntry(e)),
      { fsync: false },
    );
    const shared = await runCmd(exportCmd, { format: 'trl-dpo', out: 'a', json: true }, ctx);
    expect(shared.files.map((f) => [f.agent, f.records])).toEqual([['techne', 1]]);
    const text = readFileSync(shared.files[0]?.path as string, 'utf8');
    expect(text).not.toContain('CANARY');
    expect(records(shared.files[0]?.path as string)).toEqual([
      {
        prompt: 'You are Techne, the coder of a Kourai forge. Write the code.\nTask type: code\n',
        chosen: 'function b(x: number): void {}',
        rejected: 'function b(x) {}',
      },
    ]);
    const all = await runCmd(exportCmd, { format: 'trl-dpo', out: 'b', includePrivate: true }, ctx);
    const allText = readFileSync(all.files[0]?.path as string, 'utf8');
    expect(allText).toContain('CANARY revised');
    expect(allText).toContain('Task: CANARY task description');
    expect(allText).toContain('CANARY private');
    expect(allText).not.toContain('CANARY comment'); // comments are not pairs
  });

  it('--agent narrows; same memoirs, same bytes', async () => {
    const ctx = newCtx();
    await runCmd(synth, {}, ctx);
    const a = await runCmd(exportCmd, { format: 'trl-dpo', agent: ['techne'], out: 'one' }, ctx);
    expect(a.files.map((f) => f.agent)).toEqual(['techne']);
    const b = await runCmd(exportCmd, { format: 'trl-dpo', agent: ['techne'], out: 'two' }, ctx);
    expect(readFileSync(b.files[0]?.path as string)).toEqual(readFileSync(a.files[0]?.path as string));
    expect(readdirSync(join(ctx.home, 'one'))).toEqual(['techne.jsonl']);
  });

  it.each([
    [{ format: 'parquet' }, 2, /--format: "parquet" is not a format; expected trl-dpo/],
    [{}, 2, /--format: is required/],
    [{ format: 'trl-dpo', agent: ['zeus'] }, 2, /unknown agent "zeus"/],
    [{ format: 'trl-dpo', agent: ['cupid'] }, 2, /--agent cupid: cupid is bond-only, so nothing of it is shareable/],
  ])('bad input %j: exit %i, nothing written', async (raw, code, message) => {
    const ctx = newCtx();
    await runCmd(synth, { sessions: '1' }, ctx);
    await expect(cli(raw, ctx)).rejects.toMatchObject({ exitCode: code, message: expect.stringMatching(message) });
    expect(existsSync(join(ctx.home, 'trl-dpo'))).toBe(false);
  });

  it('no memoirs: exit 6 and how to make the sample forge', async () => {
    await expect(cli({ format: 'trl-dpo' }, newCtx())).rejects.toMatchObject({
      exitCode: 6,
      hint: expect.stringContaining('kourai memoir synth'),
    });
  });

  it('--out that is a file: exit 3, nothing written; Ctrl-C: exit 130, no file and no temporary file', async () => {
    const ctx = newCtx();
    await runCmd(synth, {}, ctx);
    writeFileSync(join(ctx.home, 'taken'), 'x');
    await expect(cli({ format: 'trl-dpo', out: 'taken' }, ctx)).rejects.toMatchObject({ exitCode: 3 });
    expect(readFileSync(join(ctx.home, 'taken'), 'utf8')).toBe('x');
    const ac = new AbortController();
    ac.abort();
    const cancelled = testCtx({ home: ctx.home, signal: ac.signal });
    await expect(cli({ format: 'trl-dpo', out: 'cancelled' }, cancelled)).rejects.toMatchObject({ exitCode: 130 });
    const left = existsSync(join(ctx.home, 'cancelled')) ? readdirSync(join(ctx.home, 'cancelled')) : [];
    expect(left).toEqual([]);
  });

  it('the text result lists the files and how to load them', async () => {
    const ctx = newCtx();
    await runCmd(synth, {}, ctx);
    const r: ExportResult = await runCmd(exportCmd, { format: 'trl-dpo' }, ctx);
    const text = exportCmd.render?.(r, ctx) ?? '';
    expect(text).toMatch(/^wrote \d+ shareable preference pairs in TRL's DPO format to /);
    expect(text).toMatch(/techne\s+\d+\s+.*techne\.jsonl/);
    expect(text).toContain('load with: datasets.load_dataset("json", data_files=');
  });
});
