import { copyFileSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import inspect from '../../../src/commands/memoir/inspect.js';
import show from '../../../src/commands/memoir/show.js';
import supersede from '../../../src/commands/memoir/supersede.js';
import verify from '../../../src/commands/memoir/verify.js';
import { ExitCode, type KouraiError } from '../../../src/errors.js';
import { derivedId } from '../../../src/memoir/format/entry-id.js';
import { decideSplit } from '../../../src/memoir/format/split-rule.js';
import type { MemoirEntry } from '../../../src/memoir/format/schema.js';
import { removeDir, testCtx, type TestCtx } from '../../helpers/ctx.js';
import { lines, runCmd, sampleForge } from '../../helpers/memory.js';

const ctxs: TestCtx[] = [];
const newCtx = (o: Parameters<typeof testCtx>[0] = {}): TestCtx => {
  const c = testCtx(o);
  ctxs.push(c);
  return c;
};
afterEach(() => {
  for (const c of ctxs.splice(0)) removeDir(c.home);
});

async function failure(p: Promise<unknown>): Promise<KouraiError> {
  try {
    await p;
  } catch (err) {
    return err as KouraiError;
  }
  throw new Error('expected the command to fail');
}

describe('memoir supersede', () => {
  it('appends a corrected entry to the same memoir; reads of the old id resolve to it', async () => {
    const ctx = newCtx();
    const memoirs = await sampleForge(ctx);
    const path = memoirs[0] as string;
    const original = lines(path).find((l) => l.source === 'specialist_proposed' && l.agent === 'kallos') as MemoirEntry;
    const before = lines(path).length;

    const r = await runCmd(
      supersede,
      { id: original.entry_id, patch: '{"agent_proposed":"rename `x` to `entry_count`"}', reason: 'typo' },
      ctx,
    );
    expect(r).toMatchObject({
      requested: original.entry_id,
      supersedes: original.entry_id,
      memoir: path,
      entry_type: 'pipeline_turn',
      shared: true,
      changed: ['agent_proposed'],
      narrowed: null,
    });
    const after = lines(path);
    expect(after).toHaveLength(before + 1);
    const written = after[after.length - 1] as MemoirEntry;
    expect(written).toMatchObject({
      entry_id: r.entry_id,
      supersedes: original.entry_id,
      revision_reason: 'typo',
      agent: 'kallos',
      scene_id: original.scene_id,
      agent_proposed: 'rename `x` to `entry_count`',
    });
    expect(written.player_response).toEqual(original.player_response);
    expect(Object.keys(written).slice(0, 10)).toEqual([
      'scene_id',
      'agent',
      'source',
      'context',
      'narrative_beat',
      'agent_proposed',
      'player_response',
      'affinity_delta',
      'training_label',
      'split',
    ]);

    const shown = await runCmd(show, { id: original.entry_id }, ctx);
    expect(shown.resolved_from).toBe(original.entry_id);
    expect(shown.entry.entry_id).toBe(r.entry_id);
    expect(show.render?.(shown, ctx)).toContain(`${original.entry_id} was superseded: showing its newest revision`);

    const listed = await runCmd(inspect, { scene: original.scene_id, limit: '0' }, ctx);
    expect(listed.entries.map((e) => e.entry_id)).toContain(r.entry_id);
    expect(listed.entries.map((e) => e.entry_id)).not.toContain(original.entry_id);
    const all = await runCmd(inspect, { scene: original.scene_id, limit: '0', allRevisions: true }, ctx);
    expect(all.entries.map((e) => e.entry_id)).toContain(original.entry_id);
  });

  it('correcting an old id corrects its newest revision (no fork), and --history shows the chain', async () => {
    const ctx = newCtx();
    const memoirs = await sampleForge(ctx);
    const original = lines(memoirs[0] as string).find((l) => l.source === 'specialist_proposed') as MemoirEntry;
    const first = await runCmd(
      supersede,
      { id: original.entry_id, patch: '{"affinity_delta":0.5}', reason: 'first' },
      ctx,
    );
    const second = await runCmd(
      supersede,
      { id: original.entry_id, patch: '{"narrative_beat":"corrected_beat"}', reason: 'second' },
      ctx,
    );
    expect(second.supersedes).toBe(first.entry_id);
    expect(ctx.stderr.text).toContain(`${original.entry_id} was already corrected`);

    const h = await runCmd(show, { id: first.entry_id, history: true }, ctx);
    expect(h.history?.map((x) => [x.entry_id, x.depth, x.head, x.revision_reason, x.changed])).toEqual([
      [original.entry_id, 0, false, null, []],
      [first.entry_id, 1, false, 'first', ['affinity_delta']],
      [second.entry_id, 2, true, 'second', ['narrative_beat']],
    ]);
    expect(h.entry.entry_id).toBe(second.entry_id);
    const text = show.render?.(h, ctx) ?? '';
    expect(text).toContain(`history of ${original.entry_id}: 3 entries; reads resolve to ${second.entry_id}`);
    expect(text).toContain('reason: second; changed: narrative_beat');

    const v = await runCmd(verify, {}, ctx);
    expect(v.problems.filter((p) => p.kind === 'revision')).toEqual([]);
  });

  it('adversarial: a correction that tries to make a private entry shared is written private', async () => {
    const ctx = newCtx();
    const memoirs = await sampleForge(ctx);
    const path = memoirs[0] as string;
    const priv = lines(path).find((l) => l.source === 'player_revision') as MemoirEntry;
    const patch = JSON.stringify({
      source: 'specialist_proposed',
      agent_proposed: 'now shareable?',
      split: { shared_eligible: true, private_only: false },
    });
    const r = await runCmd(supersede, { id: priv.entry_id, patch, reason: 'share it' }, ctx);
    expect(r.shared).toBe(false);
    expect(r.narrowed).toMatch(/never widen privacy/);
    const written = lines(path).at(-1) as MemoirEntry;
    expect(written.split).toEqual({ shared_eligible: false, private_only: true });
    expect(written.source).toBe('specialist_proposed');
    expect(decideSplit(written).shareable).toBe(false);
    const listed = await runCmd(inspect, { split: 'shared', limit: '0' }, ctx);
    expect(listed.entries.map((e) => e.entry_id)).not.toContain(r.entry_id);
  });

  it('corrects a Python-written line by its derived py_ id', async () => {
    const ctx = newCtx();
    const dir = join(ctx.home, 'forge');
    mkdirSync(dir);
    const path = join(dir, 'memoir.jsonl');
    copyFileSync(new URL('../../fixtures/memoir/python-written.jsonl', import.meta.url), path);
    const all = readFileSync(path, 'utf8').split('\n');
    // line 1: Cupid (bond-only, private); line 5: an Aidos interrupt (inferred entry type "interrupt")
    for (const [lineNo, type] of [
      [0, 'pipeline_turn'],
      [4, 'interrupt'],
    ] as const) {
      const text = all[lineNo] as string;
      const id = derivedId(text);
      const original = JSON.parse(text) as MemoirEntry;
      const r = await runCmd(
        supersede,
        { id, patch: '{"narrative_beat":"fixed_beat"}', reason: 'beat was wrong', memoir: [dir] },
        ctx,
      );
      expect(r.supersedes).toBe(id);
      const written = lines(path).at(-1) as MemoirEntry;
      expect(written).toMatchObject({
        supersedes: id,
        entry_type: type,
        agent: original.agent,
        source: original.source,
        narrative_beat: 'fixed_beat',
      });
      expect(written.split).toEqual(
        decideSplit(original).shareable ? original.split : { shared_eligible: false, private_only: true },
      );
      const shown = await runCmd(show, { id, memoir: [dir], history: true }, ctx);
      expect(shown.resolved_from).toBe(id);
      expect(shown.entry.entry_id).toBe(r.entry_id);
      expect(shown.history?.map((h) => h.entry_id)).toEqual([id, r.entry_id]);
    }
    expect((lines(path).at(-2) as MemoirEntry).split).toEqual({ shared_eligible: false, private_only: true }); // Cupid's stays private
  });

  it('reads the correction from --file and from stdin (--file -)', async () => {
    const ctx = newCtx({ stdinText: '{"affinity_delta": 0.25}' });
    const memoirs = await sampleForge(ctx);
    const original = lines(memoirs[1] as string).find((l) => l.source === 'specialist_proposed') as MemoirEntry;
    const r = await runCmd(supersede, { id: original.entry_id, file: '-', reason: 'from stdin' }, ctx);
    expect(r.changed).toEqual(['affinity_delta']);
    const patchFile = join(ctx.home, 'patch.json');
    (await import('node:fs')).writeFileSync(patchFile, '{"affinity_delta": 0.75}');
    const r2 = await runCmd(supersede, { id: r.entry_id, file: 'patch.json', reason: 'from a file' }, ctx);
    expect((lines(memoirs[1] as string).at(-1) as MemoirEntry).affinity_delta).toBe(0.75);
    expect(r2.supersedes).toBe(r.entry_id);
  });

  it('fails with the documented exit codes and writes nothing', async () => {
    const ctx = newCtx();
    const memoirs = await sampleForge(ctx);
    const path = memoirs[0] as string;
    const original = lines(path).find((l) => l.source === 'specialist_proposed') as MemoirEntry;
    const size = statSync(path).size;
    const cases: [Record<string, unknown>, number, RegExp][] = [
      [
        { id: '01NOTANIDNOTANIDNOTANIDXYZ', patch: '{"affinity_delta":1}', reason: 'r' },
        ExitCode.notFound,
        /no entry with id/,
      ],
      [{ id: original.entry_id, reason: 'r' }, ExitCode.usage, /one JSON argument or with --file/],
      [{ id: original.entry_id, patch: '{"affinity_delta":', reason: 'r' }, ExitCode.invalidData, /malformed JSON/],
      [
        { id: original.entry_id, patch: '{"entry_type":"loyalty_beat"}', reason: 'r' },
        ExitCode.invalidData,
        /keeps the entry type/,
      ],
      [{ id: original.entry_id, patch: '{"agent":"zeus"}', reason: 'r' }, ExitCode.invalidData, /unknown agent "zeus"/],
      [{ id: original.entry_id, patch: '{"affinity_delta":1}', reason: '   ' }, ExitCode.usage, /--reason/],
    ];
    for (const [raw, code, msg] of cases) {
      const err = await failure(runCmd(supersede, raw, ctx));
      expect(err.message).toMatch(msg);
      expect(err.exitCode).toBe(code);
    }
    expect(() => supersede.options.parse({ id: 'x', patch: '{}' })).toThrow(/required/);
    expect(statSync(path).size).toBe(size);
  });
});
