import { describe, expect, it } from 'vitest';
import { prepareEntries } from '../../../src/memoir/file/append.js';
import { ulidGenerator } from '../../../src/memoir/format/entry-id.js';
import {
  buildEpisode,
  deriveEpisodes,
  episodeEntry,
  qualityOf,
  renderEpisode,
  storedEpisode,
} from '../../../src/memoir/derive/episodes.js';
import type { MemoirEntry } from '../../../src/memoir/format/schema.js';
import { decideSplit } from '../../../src/memoir/format/split-rule.js';

let n = 0;
const e = (over: Partial<MemoirEntry>): MemoirEntry =>
  ({
    scene_id: 'session-1a2b3c4d.turn-3',
    agent: 'techne',
    source: 'specialist_proposed',
    context: { task_type: 'code', transcript_hash: 'sha256:00', preceding_agents: [] },
    narrative_beat: null,
    agent_proposed: null,
    player_response: null,
    affinity_delta: 0,
    training_label: null,
    split: { shared_eligible: true, private_only: false },
    entry_id: `E${String(n++).padStart(3, '0')}`,
    recorded_at: '2026-10-01T09:00:00.000Z',
    entry_type: 'pipeline_turn',
    ...over,
  }) as MemoirEntry;

describe('qualityOf (the documented rule)', () => {
  it.each([
    [[], 0, 'success'],
    [[], -0.05, 'partial'],
    [[{ kind: 'accepted', felt: 'right' }], 0, 'success'],
    [
      [
        { kind: 'accepted', felt: null },
        { kind: 'accepted', felt: 'unsure' },
      ],
      0,
      'success',
    ],
    [[{ kind: 'accepted', felt: 'off' }], 0, 'partial'],
    [[{ kind: 'modified', felt: 'right' }], 0, 'partial'],
    [
      [
        { kind: 'accepted', felt: 'right' },
        { kind: 'rejected', felt: 'off' },
      ],
      0,
      'partial',
    ],
    [[{ kind: 'rejected', felt: 'off' }], 0, 'failure'],
    [[{ kind: 'deferred', felt: null }], 0, 'failure'],
    [
      [
        { kind: 'rejected', felt: 'off' },
        { kind: 'deferred', felt: null },
      ],
      0.1,
      'failure',
    ],
  ] as const)('%j with affinity %d is %s', (responses, affinity, quality) => {
    expect(qualityOf(responses, affinity).quality).toBe(quality);
  });
});

describe('buildEpisode', () => {
  const scene = [
    e({ agent: 'hephaestus', narrative_beat: 'hephaestus_routes_to_techne', agent_proposed: 'route:techne' }),
    e({
      agent: 'techne',
      agent_proposed: 'x = compute()',
      player_response: { kind: 'modified', delta: 'entry_count = compute()', felt: 'unsure' },
      affinity_delta: 0.01,
    }),
    e({
      agent: 'techne',
      source: 'player_revision',
      agent_proposed: 'entry_count = compute()',
      player_response: { kind: 'modified', delta: 'entry_count = compute()', felt: 'unsure' },
    }),
    e({
      agent: 'aidos',
      source: 'agent_interrupt',
      entry_type: 'interrupt',
      context: null,
      agent_proposed: 'Slop.',
      interrupt: {
        interrupting_agent: 'aidos',
        target_agent: 'techne',
        target_turn: 'E001',
        reason_class: 'correction',
        visibility: 'public',
      },
    }),
    e({
      agent: 'kallos',
      source: 'disagreement_resolution',
      agent_proposed: 'Kallos: keep the idiomatic short name',
      player_response: { kind: 'accepted', delta: null, felt: 'right' },
    }),
  ];

  it('derives goal, approach, outcome, quality, lessons, tags and actors', () => {
    const ep = buildEpisode('scene', 'session-1a2b3c4d.turn-3', scene, {
      asked: 'Make the council server survive restarts',
    });
    expect(ep).not.toBeNull();
    if (!ep) return;
    expect(ep.goal).toBe('code — Make the council server survive restarts');
    expect(ep.date).toBe('2026-10-01');
    expect(ep.approach.agents).toEqual(['hephaestus', 'techne', 'aidos', 'kallos']);
    expect(ep.approach.interrupts).toEqual([
      { by: 'aidos', target: 'techne', reason_class: 'correction', visibility: 'public' },
    ]);
    // the player_revision restates techne's `modified` response: counted once
    expect(ep.responses.map((r) => [r.agent, r.kind])).toEqual([
      ['techne', 'modified'],
      ['kallos', 'accepted'],
    ]);
    expect(ep.outcome).toBe('techne modified (felt unsure); sided with kallos (felt right)');
    expect(ep.quality).toBe('partial');
    expect(ep.lessons).toEqual([
      `player revised techne's code: "entry_count = compute()"`,
      `player sided with kallos (code): "Kallos: keep the idiomatic short name"`,
    ]);
    expect(ep.tags).toEqual(['code', 'disagreement', 'interrupt:correction', 'revision']);
    expect(ep.actors).toEqual(['hephaestus', 'techne', 'aidos', 'kallos', 'player']);
    expect(ep.entry_ids).toEqual(scene.map((x) => x.entry_id));
  });

  it('renders one line in the documented form, with the lessons under it', () => {
    const ep = buildEpisode('scene', 'k', scene, { asked: 'Make the council server survive restarts' });
    expect(ep && renderEpisode(ep)).toBe(
      [
        '- (2026-10-01, episode, partial) code — Make the council server survive restarts. Outcome: techne modified (felt unsure); sided with kallos (felt right)',
        `    - lesson: player revised techne's code: "entry_count = compute()"`,
        `    - lesson: player sided with kallos (code): "Kallos: keep the idiomatic short name"`,
      ].join('\n'),
    );
  });

  it('records a rejected proposal as a lesson, and a rework with no player_revision entry', () => {
    const ep = buildEpisode('scene', 'k', [
      e({
        agent: 'kallos',
        context: { task_type: 'style_review', transcript_hash: 'h', preceding_agents: [] },
        agent_proposed: 'wrap at 80',
        player_response: { kind: 'rejected', delta: null, felt: 'off' },
      }),
      e({
        agent: 'metis',
        context: { task_type: 'plan', transcript_hash: 'h', preceding_agents: [] },
        agent_proposed: 'plan A',
        player_response: { kind: 'modified', delta: 'plan B', felt: null },
      }),
    ]);
    expect(ep?.lessons).toEqual([
      `kallos's style_review proposal was rejected (felt off): "wrap at 80"`,
      `player reworked metis's plan proposal: "plan B"`,
    ]);
    expect(ep?.quality).toBe('partial');
    expect(ep?.goal).toBe('style_review/plan — no task description');
  });

  it('without a task, the goal is the first narrative beat; undated entries give an undated episode', () => {
    const ep = buildEpisode('scene', 'k', [
      e({
        agent: 'cupid',
        source: 'cupid_scene',
        context: null,
        narrative_beat: 'cupid_late_night_check_in',
        recorded_at: undefined,
      }),
    ]);
    expect(ep?.goal).toBe('cupid late night check in');
    expect(ep?.date).toBeNull();
    expect(ep && renderEpisode(ep)).toBe(
      '- (undated, episode, success) cupid late night check in. Outcome: no player response',
    );
  });

  it('dates a corrected entry at its original time', () => {
    const orig = e({ recorded_at: '2026-10-01T09:00:00.000Z' });
    const fix = e({ recorded_at: '2026-11-22T10:00:00.000Z', supersedes: orig.entry_id });
    const ep = buildEpisode('scene', 'k', [fix], {
      originalTime: new Map([[fix.entry_id, orig.recorded_at as string]]),
    });
    expect(ep?.date).toBe('2026-10-01');
    expect(ep?.context.last_at).toBe('2026-10-01T09:00:00.000Z');
    expect(buildEpisode('scene', 'k', [fix])?.date).toBe('2026-11-22');
  });

  it('ignores episode entries, and returns null when nothing else is left', () => {
    const stored = e({ entry_type: 'episode', source: 'raw_transcript' });
    expect(buildEpisode('scene', 'k', [stored])).toBeNull();
    const a = buildEpisode('scene', 'k', scene);
    const b = buildEpisode('scene', 'k', [...scene, stored]);
    expect(b?.content_hash).toBe(a?.content_hash);
  });

  it('hashes content: same entries, same hash; a corrected entry, a new hash', () => {
    const a = buildEpisode('scene', 'k', scene);
    const again = buildEpisode(
      'scene',
      'k',
      scene.map((x) => structuredClone(x)),
    );
    expect(again?.content_hash).toBe(a?.content_hash);
    expect(a?.content_hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    const changed = buildEpisode('scene', 'k', [
      ...scene.slice(0, 4),
      { ...(scene[4] as MemoirEntry), entry_id: 'NEW', supersedes: 'E004' },
    ]);
    expect(changed?.content_hash).not.toBe(a?.content_hash);
    expect(changed?.tags).toContain('corrected');
    expect(buildEpisode('session', 'k', scene)?.content_hash).not.toBe(a?.content_hash);
  });

  it('deriveEpisodes groups by scene or by session, and uses the session task for scenes', () => {
    const s1 = [
      e({
        scene_id: 'session-aaaa.turn-0',
        agent: 'hephaestus',
        source: 'task_description',
        agent_proposed: 'Fix the index',
      }),
      e({
        scene_id: 'session-aaaa.turn-1',
        agent: 'techne',
        player_response: { kind: 'accepted', delta: null, felt: 'right' },
      }),
      e({ scene_id: 'session-bbbb.turn-0', agent: 'metis' }),
    ];
    const byScene = deriveEpisodes(s1, 'scene', { askedBySession: new Map([['session-aaaa', 'Fix the index']]) });
    expect(byScene.map((x) => x.key)).toEqual(['session-aaaa.turn-0', 'session-aaaa.turn-1', 'session-bbbb.turn-0']);
    expect(byScene[1]?.goal).toBe('code — Fix the index');
    const bySession = deriveEpisodes(s1, 'session');
    expect(bySession.map((x) => [x.key, x.context.entries])).toEqual([
      ['session-aaaa', 2],
      ['session-bbbb', 1],
    ]);
  });
});

describe('episodeEntry', () => {
  const ids = ulidGenerator(
    () => Date.UTC(2026, 10, 22),
    () => new Uint8Array(10),
  );
  const now = () => new Date('2026-11-22T10:00:00.000Z');

  it('adversarial: an episode of a session with only private entries is written private, attributed to a bond-only agent', () => {
    const privateOnly = [
      e({
        scene_id: 'session-cccc.turn-0',
        agent: 'cupid',
        source: 'cupid_scene',
        context: null,
        narrative_beat: 'cupid_quiet_encouragement',
        agent_proposed: 'I noticed.',
        split: { shared_eligible: false, private_only: true },
      }),
      e({
        scene_id: 'session-cccc.turn-1',
        agent: 'puck',
        source: 'puck_engagement',
        context: null,
        narrative_beat: 'puck_riddle',
        player_response: { kind: 'accepted', delta: null, felt: 'right' },
        split: { shared_eligible: false, private_only: true },
      }),
    ];
    const [ep] = deriveEpisodes(privateOnly, 'session');
    expect(ep).toBeDefined();
    if (!ep) return;
    expect(ep.quality).toBe('success');
    expect(ep.tags).toContain('bond');
    const [prepared] = prepareEntries([{ value: episodeEntry(ep), where: 'episode' }], ids, now);
    const entry = prepared?.entry as MemoirEntry;
    expect(entry.entry_type).toBe('episode');
    expect(entry.source).toBe('raw_transcript');
    expect(entry.agent).toBe('cupid');
    expect(entry.split).toEqual({ shared_eligible: false, private_only: true });
    expect(decideSplit(entry)).toMatchObject({ shareable: false, reason: 'bond_only_agent' });
    expect(storedEpisode(entry)?.content_hash).toBe(ep.content_hash);
  });

  it('an episode of shareable entries is private too (entry type and source are instances)', () => {
    const [ep] = deriveEpisodes([e({ agent: 'techne' })], 'scene');
    if (!ep) throw new Error('no episode');
    const [prepared] = prepareEntries([{ value: episodeEntry(ep), where: 'episode' }], ids, now);
    expect(prepared?.entry.agent).toBe('hephaestus');
    expect(decideSplit(prepared?.entry as MemoirEntry).shareable).toBe(false);
    expect(prepared?.entry.agent_proposed).toBe(renderEpisode(ep));
  });
});
