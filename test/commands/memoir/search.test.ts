import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import search from '../../../src/commands/memoir/search.js';
import { ExitCode, type KouraiError } from '../../../src/errors.js';
import { Memoir } from '../../../src/memoir/file/memoir.js';
import type { MemoirInput } from '../../../src/memoir/format/schema.js';
import { searchFtsQuery } from '../../../src/memoir-index/search.js';
import { removeDir, testCtx, type TestCtx } from '../../helpers/ctx.js';
import { runCmd, sampleForge } from '../../helpers/memory.js';

const ctxs: TestCtx[] = [];
afterEach(() => {
  for (const c of ctxs.splice(0)) removeDir(c.home);
});

const at = (day: number): string => new Date(Date.UTC(2026, 9, day, 9)).toISOString();
const base = { scene_id: 'session-aaaa.turn-1', agent: 'kallos', source: 'specialist_proposed' } as const;

function forge(entries: MemoirInput[]): TestCtx {
  const ctx = testCtx();
  ctxs.push(ctx);
  new Memoir(join(ctx.home, 'projects', 'p', 'q', '.kourai', 'forges', 's', 'memoir.jsonl')).append(entries, {
    fsync: false,
  });
  return ctx;
}

const ids = (r: { hits: { entry: Record<string, unknown> }[] }): string[] =>
  r.hits.map((h) => String(h.entry.entry_id));

describe('memoir search', () => {
  it('a better match ranks above a newer, weaker one', async () => {
    const ctx = forge([
      {
        ...base,
        entry_id: 'STRONG-OLD',
        recorded_at: at(1),
        agent_proposed: 'naming: rename tmp2; naming matters; consistent naming',
      },
      {
        ...base,
        entry_id: 'WEAK-NEW',
        recorded_at: at(20),
        agent_proposed:
          'a long proposal about the index, the reader, the writer, torn tails, quarantine, fsync and naming once',
      },
      {
        ...base,
        entry_id: 'UNRELATED',
        recorded_at: at(25),
        agent_proposed: 'fsync the directory after creating the memoir',
      },
    ]);
    const r = await runCmd(search, { query: ['naming'] }, ctx);
    expect(ids(r)).toEqual(['STRONG-OLD', 'WEAK-NEW']);
    expect(r.total).toBe(2);
    expect((r.hits[0]?.score ?? 0) > (r.hits[1]?.score ?? 0)).toBe(true);
    expect(r.hits[0]?.rank).toBe(1);
  });

  it('breaks equal scores by recency, then by entry id', async () => {
    const ctx = forge([
      { ...base, entry_id: 'B-OLD', recorded_at: at(1), agent_proposed: 'wrap the call arguments' },
      { ...base, entry_id: 'C-NEW', recorded_at: at(9), agent_proposed: 'wrap the call arguments' },
      { ...base, entry_id: 'A-NEW', recorded_at: at(9), agent_proposed: 'wrap the call arguments' },
    ]);
    const r = await runCmd(search, { query: 'wrap' }, ctx);
    expect(ids(r)).toEqual(['A-NEW', 'C-NEW', 'B-OLD']);
  });

  it('any word may match; entries matching more words rank first; the last word is a prefix', async () => {
    const ctx = forge([
      { ...base, entry_id: 'BOTH', recorded_at: at(1), agent_proposed: 'quarantine the torn tail' },
      { ...base, entry_id: 'ONE', recorded_at: at(5), agent_proposed: 'quarantine file beside the memoir' },
      { ...base, entry_id: 'PREFIX', recorded_at: at(6), agent_proposed: 'tailing logs' },
    ]);
    const r = await runCmd(search, { query: ['quarantine', 'tail'] }, ctx);
    expect(ids(r)[0]).toBe('BOTH');
    expect(ids(r).sort()).toEqual(['BOTH', 'ONE', 'PREFIX']);
    expect(searchFtsQuery('quarantine tail')).toBe('"quarantine" OR "tail"*');
  });

  it('filters by agent, source, type, split, scene and time', async () => {
    const ctx = forge([
      { ...base, entry_id: 'K', recorded_at: at(1), agent_proposed: 'naming' },
      {
        ...base,
        agent: 'aidos',
        entry_id: 'A',
        recorded_at: at(2),
        agent_proposed: 'naming',
        scene_id: 'session-bbbb.turn-1',
      },
      { ...base, source: 'player_revision', entry_id: 'P', recorded_at: at(3), agent_proposed: 'naming' },
    ]);
    expect(ids(await runCmd(search, { query: 'naming', agent: ['aidos'] }, ctx))).toEqual(['A']);
    expect(ids(await runCmd(search, { query: 'naming', split: 'private' }, ctx))).toEqual(['P']);
    expect(ids(await runCmd(search, { query: 'naming', source: ['player_revision'] }, ctx))).toEqual(['P']);
    expect(ids(await runCmd(search, { query: 'naming', type: ['interrupt'] }, ctx))).toEqual([]);
    expect(ids(await runCmd(search, { query: 'naming', scene: 'session-bbbb' }, ctx))).toEqual(['A']);
    expect(ids(await runCmd(search, { query: 'naming', since: '2026-10-02', until: '2026-10-03' }, ctx))).toEqual([
      'A',
    ]);
  });

  it('finds newest revisions only, unless --all-revisions', async () => {
    const ctx = forge([
      { ...base, entry_id: 'OLD', recorded_at: at(1), agent_proposed: 'retry the council upload' },
      {
        ...base,
        entry_id: 'NEW',
        recorded_at: at(2),
        agent_proposed: 'retry the council upload with backoff',
        supersedes: 'OLD',
        revision_reason: 'added backoff',
      },
    ]);
    expect(ids(await runCmd(search, { query: 'council' }, ctx))).toEqual(['NEW']);
    expect(ids(await runCmd(search, { query: 'council', allRevisions: true }, ctx)).sort()).toEqual(['NEW', 'OLD']);
    // the reason is searchable too
    expect(ids(await runCmd(search, { query: 'backoff' }, ctx))).toEqual(['NEW']);
  });

  it('caps the limit and says so', async () => {
    const ctx = testCtx();
    ctxs.push(ctx);
    await sampleForge(ctx);
    const r = await runCmd(search, { query: 'hephaestus', limit: '500' }, ctx);
    expect(r.limit).toBe(200);
    expect(r.capped).toBe(true);
    expect(r.shown).toBeLessThanOrEqual(200);
    expect(ctx.stderr.text).toContain('above the cap');
    const small = await runCmd(search, { query: 'hephaestus', limit: '3' }, ctx);
    expect(small.shown).toBe(3);
    expect(small.total).toBeGreaterThan(3);
    expect(search.render?.(small, ctx)).toContain(`3 of ${small.total} matches, best first`);
  });

  it('treats FTS5 syntax in the query as text, and needs at least one word', async () => {
    const ctx = forge([{ ...base, entry_id: 'X', agent_proposed: 'a "quoted" NEAR(thing) AND more' }]);
    expect(ids(await runCmd(search, { query: '"quoted" AND NEAR(' }, ctx))).toEqual(['X']);
    let err: KouraiError | undefined;
    try {
      await runCmd(search, { query: '   ' }, ctx);
    } catch (e) {
      err = e as KouraiError;
    }
    expect(err?.exitCode).toBe(ExitCode.usage);
    expect(search.render?.(await runCmd(search, { query: 'absent' }, ctx), ctx)).toContain('no entries match');
  });
});

describe('excerpt', () => {
  it('shows the text around the first query word, starting on a word', async () => {
    const { excerpt } = await import('../../../src/memoir-index/search.js');
    const text = `${'lorem ipsum dolor sit amet '.repeat(6)}the naming matters here ${'and more text follows '.repeat(5)}`;
    const x = excerpt(text, ['naming'], 60);
    expect(x).toContain('naming');
    expect(x.startsWith('…')).toBe(true);
    expect(x.slice(1)).toMatch(/^(lorem|ipsum|dolor|sit|amet|the) /);
    expect(excerpt('short text', ['absent'], 60)).toBe('short text');
  });
});
