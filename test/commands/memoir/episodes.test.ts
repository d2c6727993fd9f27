import { statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import episodes from '../../../src/commands/memoir/episodes.js';
import inspect from '../../../src/commands/memoir/inspect.js';
import supersede from '../../../src/commands/memoir/supersede.js';
import verify from '../../../src/commands/memoir/verify.js';
import { Memoir } from '../../../src/memoir/file/memoir.js';
import type { MemoirEntry } from '../../../src/memoir/format/schema.js';
import { decideSplit } from '../../../src/memoir/format/split-rule.js';
import { removeDir, testCtx, type TestCtx } from '../../helpers/ctx.js';
import { lines, runCmd, sampleForge } from '../../helpers/memory.js';

const ctxs: TestCtx[] = [];
const newCtx = (): TestCtx => {
  const c = testCtx();
  ctxs.push(c);
  return c;
};
afterEach(() => {
  for (const c of ctxs.splice(0)) removeDir(c.home);
});

const FORMAT = /^- \((\d{4}-\d{2}-\d{2}|undated), episode, (success|partial|failure)\) .+\. Outcome: .+$/;

describe('memoir episodes', () => {
  it('lists one episode per scene, in the one-line form with lessons under it', async () => {
    const ctx = newCtx();
    const memoirs = await sampleForge(ctx);
    const r = await runCmd(episodes, {}, ctx);
    const scenes = new Set(memoirs.flatMap((p) => lines(p).map((l) => String(l.scene_id))));
    expect(r.episodes.map((e) => e.key).sort()).toEqual([...scenes].sort());
    expect(r.written + r.updated + r.unchanged).toBe(0);
    const text = episodes.render?.(r, ctx) ?? '';
    const heads = text.split('\n').filter((l) => l.startsWith('- ('));
    expect(heads).toHaveLength(r.episodes.length);
    for (const h of heads) expect(h).toMatch(FORMAT);
    expect(text).toMatch(/\n {4}- lesson: player revised \w+'s \w+: "/);
    expect(text).toMatch(/\n {4}- lesson: \w+'s \w+ proposal was rejected/);
    // chronological, undated (Python-host) sessions last
    const dates = r.episodes.map((e) => e.context.first_at);
    const dated = dates.filter((d): d is string => d !== null);
    expect(dated).toEqual([...dated].sort());
    expect(dates.slice(dated.length).every((d) => d === null)).toBe(true);
    expect(
      r.episodes.some((e) => e.quality === 'failure') &&
        r.episodes.some((e) => e.quality === 'partial') &&
        r.episodes.some((e) => e.quality === 'success'),
    ).toBe(true);
  });

  it('--by session gives one episode per session with every lesson of the session', async () => {
    const ctx = newCtx();
    const memoirs = await sampleForge(ctx);
    const r = await runCmd(episodes, { by: 'session' }, ctx);
    expect(r.episodes).toHaveLength(memoirs.length);
    const revisions = memoirs.flatMap(lines).filter((l) => l.source === 'player_revision').length;
    expect(r.episodes.flatMap((e) => e.lessons).filter((l) => l.startsWith('player revised'))).toHaveLength(revisions);
  });

  it('--write appends private episode entries once; a repeated --write writes nothing', async () => {
    const ctx = newCtx();
    const memoirs = await sampleForge(ctx);
    const first = await runCmd(episodes, { write: true, by: 'session' }, ctx);
    expect(first.written).toBe(memoirs.length);
    expect(first.episodes.every((e) => e.stored?.status === 'written')).toBe(true);
    const sizes = memoirs.map((p) => statSync(p).size);
    const stored = memoirs.flatMap(lines).filter((l) => l.entry_type === 'episode') as MemoirEntry[];
    expect(stored).toHaveLength(memoirs.length);
    for (const s of stored) {
      expect(s.split).toEqual({ shared_eligible: false, private_only: true });
      expect(s.source).toBe('raw_transcript');
      expect(decideSplit(s).shareable).toBe(false);
      expect((s.episode as { content_hash: string }).content_hash).toMatch(/^sha256:/);
    }

    const again = await runCmd(episodes, { write: true, by: 'session' }, ctx);
    expect([again.written, again.updated, again.unchanged]).toEqual([0, 0, memoirs.length]);
    expect(memoirs.map((p) => statSync(p).size)).toEqual(sizes);
    expect(episodes.render?.(again, ctx)).toContain(`already written ${memoirs.length}`);

    // per-scene episodes are separate from per-session ones
    const scenes = await runCmd(episodes, { write: true, scene: 'session-' }, ctx);
    expect(scenes.written).toBe(scenes.episodes.length);
    expect((await runCmd(episodes, { write: true, scene: 'session-' }, ctx)).written).toBe(0);

    // stored episodes never become input to new episodes
    const listed = await runCmd(episodes, { by: 'session' }, ctx);
    expect(listed.episodes.map((e) => e.content_hash)).toEqual(first.episodes.map((e) => e.content_hash));
    expect((await runCmd(verify, {}, ctx)).ok).toBe(true);
  });

  it('when a summarised entry is corrected, --write updates that episode as a revision', async () => {
    const ctx = newCtx();
    const memoirs = await sampleForge(ctx);
    const before = await runCmd(episodes, { write: true }, ctx);
    const target = lines(memoirs[0] as string).find(
      (l) => l.source === 'specialist_proposed' && (l.player_response as { kind?: string } | null)?.kind === 'accepted',
    ) as MemoirEntry;
    const fix = await runCmd(
      supersede,
      {
        id: target.entry_id,
        patch: '{"player_response":{"kind":"rejected","felt":"off"}}',
        reason: 'the player actually refused it',
      },
      ctx,
    );
    const r = await runCmd(episodes, { write: true }, ctx);
    expect([r.written, r.updated]).toEqual([0, 1]);
    const updated = r.episodes.find((e) => e.stored?.status === 'updated');
    expect(updated?.key).toBe(target.scene_id);
    expect(updated?.tags).toContain('corrected');
    // a correction does not move the episode in time, nor the corrected entry within it
    const was = before.episodes.find((e) => e.key === target.scene_id);
    expect(updated?.context.first_at).toBe(was?.context.first_at);
    expect(updated?.context.last_at).toBe(was?.context.last_at);
    expect(updated?.approach.agents).toEqual(was?.approach.agents);
    expect(updated?.entry_ids.indexOf(fix.entry_id)).toBe(was?.entry_ids.indexOf(target.entry_id));
    expect(updated?.entry_ids).not.toContain(target.entry_id);
    expect(updated?.lessons.some((l) => l.includes('proposal was rejected'))).toBe(true);
    expect(updated?.stored?.supersedes).toMatch(/^[0-9A-Z]{26}$/);
    // --scene is a prefix (turn-1 also matches turn-10): keep this scene's episodes only.
    const listed = await runCmd(inspect, { type: ['episode'], scene: target.scene_id, limit: '0' }, ctx);
    expect(listed.entries.filter((e) => e.scene_id === target.scene_id).map((e) => e.entry_id)).toEqual([
      updated?.stored?.entry_id,
    ]);
    expect((await runCmd(episodes, { write: true }, ctx)).updated).toBe(0);
  });

  it('adversarial: a session with only private entries still gives an episode, written private', async () => {
    const ctx = newCtx();
    const path = join(ctx.home, 'projects', 'p', 'q', '.kourai', 'forges', 's', 'memoir.jsonl');
    new Memoir(path).append(
      [
        {
          scene_id: 'session-cccc.turn-0',
          agent: 'cupid',
          source: 'cupid_scene',
          narrative_beat: 'cupid_quiet_encouragement',
          agent_proposed: 'I noticed.',
        },
        {
          scene_id: 'session-cccc.turn-1',
          agent: 'puck',
          source: 'puck_engagement',
          narrative_beat: 'puck_riddle',
          player_response: { kind: 'accepted', felt: 'right' },
        },
        {
          scene_id: 'session-cccc.turn-2',
          agent: 'metis',
          source: 'player_profile',
          entry_type: 'council_event',
          narrative_beat: 'sovereignty_moment_opens',
        },
      ],
      { fsync: false },
    );
    const r = await runCmd(episodes, { by: 'session', write: true }, ctx);
    expect(r.episodes).toHaveLength(1);
    expect(r.episodes[0]).toMatchObject({
      key: 'session-cccc',
      quality: 'success',
      actors: ['cupid', 'puck', 'metis', 'player'],
    });
    const stored = lines(path).at(-1) as MemoirEntry;
    expect(stored.entry_type).toBe('episode');
    expect(stored.split).toEqual({ shared_eligible: false, private_only: true });
    expect(decideSplit(stored).shareable).toBe(false);
    const shared = await runCmd(inspect, { split: 'shared', limit: '0' }, ctx);
    expect(shared.total).toBe(0);
  });
});
