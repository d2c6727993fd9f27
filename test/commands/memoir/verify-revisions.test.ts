import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import buffer from '../../../src/commands/memoir/buffer.js';
import show from '../../../src/commands/memoir/show.js';
import supersede from '../../../src/commands/memoir/supersede.js';
import verify from '../../../src/commands/memoir/verify.js';
import { ExitCode, type KouraiError } from '../../../src/errors.js';
import { Memoir } from '../../../src/memoir/file/memoir.js';
import type { MemoirInput } from '../../../src/memoir/format/schema.js';
import { removeDir, testCtx, type TestCtx } from '../../helpers/ctx.js';
import { runCmd } from '../../helpers/memory.js';

const ctxs: TestCtx[] = [];
afterEach(() => {
  for (const c of ctxs.splice(0)) removeDir(c.home);
});

const id = (s: string): string => `01M3VB5KNHKYQFF7ZBTC52R${s.padStart(3, '0')}`.slice(0, 26);

/** A memoir whose chains have every kind of problem, written by hand (as a buggy host would). */
function brokenForge(ctx: TestCtx): string {
  const path = join(ctx.home, 'projects', 'p', 'q', '.kourai', 'forges', 's', 'memoir.jsonl');
  const base = {
    scene_id: 'session-aaaa.turn-1',
    agent: 'techne',
    source: 'specialist_proposed',
    agent_proposed: 'x',
  } as const;
  const at = (n: number): string => new Date(Date.UTC(2026, 9, 1, 9, n)).toISOString();
  const entries: MemoirInput[] = [
    { ...base, entry_id: id('A'), recorded_at: at(1) },
    { ...base, entry_id: id('B'), recorded_at: at(2), supersedes: id('A'), revision_reason: 'one' },
    { ...base, entry_id: id('C'), recorded_at: at(3), supersedes: id('A'), revision_reason: 'two' },
    { ...base, entry_id: id('D'), recorded_at: at(4), supersedes: id('ZZZ'), revision_reason: 'of nothing' },
    { ...base, entry_id: id('E'), recorded_at: at(5), supersedes: id('F') },
    { ...base, entry_id: id('F'), recorded_at: at(6), supersedes: id('E') },
    { ...base, source: 'affinity_change', entry_type: 'loyalty_beat', entry_id: id('G'), recorded_at: at(7) },
    {
      ...base,
      source: 'affinity_change',
      entry_type: 'pipeline_turn',
      entry_id: id('H'),
      recorded_at: at(8),
      supersedes: id('G'),
    },
    { ...base, source: 'player_revision', entry_id: id('P'), recorded_at: at(9) },
    {
      ...base,
      source: 'specialist_proposed',
      entry_id: id('Q'),
      recorded_at: at(10),
      supersedes: id('P'),
      split: { shared_eligible: true, private_only: false },
    },
  ];
  new Memoir(path).append(entries, { fsync: false });
  return path;
}

describe('memoir verify: revision chains', () => {
  it('reports cycles, dangling references, forks, type changes and widened privacy (exit 1)', async () => {
    const ctx = testCtx();
    ctxs.push(ctx);
    const path = brokenForge(ctx);
    const r = await runCmd(verify, {}, ctx);
    expect(r.ok).toBe(false);
    expect(verify.exitCode?.(r)).toBe(1);
    const rev = r.problems.filter((p) => p.kind === 'revision');
    const summary = rev.map((p) => [p.message.split(':')[0], p.line]).sort();
    expect(summary).toEqual(
      [
        ['revision cycle', 5],
        ['dangling revision', 4],
        ['forked revision', 1],
        ['revision changes the entry type', 8],
        ['revision widens privacy', 10],
      ].sort(),
    );
    for (const p of rev) {
      expect(p.path).toBe(path);
      expect(p.severity).toBe('error');
      expect(p.fix).toMatch(/^kourai memoir show \S+ --history$/);
    }
    expect(rev.find((p) => p.message.startsWith('forked'))?.message).toContain(`${id('B')}, ${id('C')}`);
    expect(verify.render?.(r, ctx)).toContain('revision cycle');
  });

  it('reads through a fork take the newest branch and warn', async () => {
    const ctx = testCtx();
    ctxs.push(ctx);
    brokenForge(ctx);
    const s = await runCmd(show, { id: id('A') }, ctx);
    expect(s.entry.entry_id).toBe(id('C'));
    expect(s.revision_warning).toMatch(/forks/);
  });

  it('refuses to correct an entry whose chain loops (exit 8)', async () => {
    const ctx = testCtx();
    ctxs.push(ctx);
    brokenForge(ctx);
    let err: KouraiError | undefined;
    try {
      await runCmd(supersede, { id: id('E'), patch: '{"agent_proposed":"y"}', reason: 'r' }, ctx);
    } catch (e) {
      err = e as KouraiError;
    }
    expect(err?.exitCode).toBe(ExitCode.integrity);
    expect(err?.message).toMatch(/loops/);
  });

  it('a revision claiming shared over a private entry stays out of a shared replay buffer', async () => {
    const ctx = testCtx();
    ctxs.push(ctx);
    brokenForge(ctx);
    const b = await runCmd(buffer, { max: '100', dryRun: true, split: 'shared' }, ctx);
    const ids = [...b.kept, ...b.dropped].map((d) => d.entry_id);
    expect(ids).not.toContain(id('Q'));
    expect(ids).not.toContain(id('P'));
  });
});
