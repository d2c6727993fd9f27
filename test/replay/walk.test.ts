import { describe, expect, it } from 'vitest';
import { colors } from '../../src/output/color.js';
import { storyEventText } from '../../src/output/story-text.js';
import { storyRecord } from '../../src/replay/records.js';
import { walkStory } from '../../src/replay/walk.js';
import { smallStory } from '../helpers/story.js';

describe('walkStory', () => {
  it('yields sessions, scenes and beats in story order, with each agent’s running affinity', () => {
    const events = [...walkStory(smallStory(), { agents: [] })];
    const shape = events.map((e) =>
      e.type === 'beat'
        ? `beat ${e.beat.entry_id} ${e.affinity_after}`
        : e.type === 'scene'
          ? `scene ${e.scene_id}`
          : `${e.type} ${e.session.session}`,
    );
    expect(shape).toEqual([
      'session session-one',
      'scene s1.turn-0',
      'beat E001 0',
      'beat E002 0.02',
      'beat E003 0',
      'scene s1.turn-1',
      'beat E004 -0.05',
      'beat E005 0',
      'session_end session-one',
      'session session-two',
      'scene s2.turn-0',
      'beat E006 0.04',
      'beat E007 -0.04',
      'scene s2.turn-1',
      'beat E008 0.05',
      'session_end session-two',
    ]);
    const ends = events.filter((e) => e.type === 'session_end');
    expect(ends.map((e) => (e.type === 'session_end' ? e.affinity : null))).toEqual([
      { metis: 0.02, techne: -0.05 },
      { metis: 0.04, techne: -0.04, cupid: 0.05 },
    ]);
  });

  it('with a filter, shows only those agents (their affinity is still complete)', () => {
    const beats = [...walkStory(smallStory(), { agents: ['techne'] })].filter((e) => e.type === 'beat');
    expect(beats.map((e) => (e.type === 'beat' ? [e.beat.entry_id, e.affinity_after] : null))).toEqual([
      ['E004', -0.05],
      ['E007', -0.04],
    ]);
  });

  it('stops when the signal is aborted', () => {
    const ac = new AbortController();
    const out: string[] = [];
    for (const e of walkStory(smallStory(), { agents: [] }, ac.signal)) {
      out.push(e.type);
      if (out.length === 3) ac.abort();
    }
    expect(out).toHaveLength(3);
  });
});

describe('text and NDJSON forms', () => {
  it('text marks a silent interrupt as not shown to the player, and shows responses, ratings and affinity', () => {
    const text = [...walkStory(smallStory(), { agents: [] })].map((e) => storyEventText(e, colors(0), 120)).join('');
    expect(text).toContain('session session-one');
    expect(text).toContain('scene s1.turn-0');
    expect(text).toContain('↯ aidos interrupts metis · correction · public');
    expect(text).toContain('↯ puck interrupts techne · gossip · silent: not shown to the player');
    expect(text).toContain('player   rejected · felt off');
    expect(text).toContain('player   modified · felt unsure · rated 3/5');
    expect(text).toContain('revised  entry_count = 3');
    expect(text).toContain('comment  better names please');
    expect(text).toContain('affinity -0.05 → techne -0.05 stranger');
    expect(text).toContain('affinity  metis 0.04 · techne -0.04 · cupid 0.05');
  });

  it('NDJSON records carry the type, the beat fields and shown_to_player', () => {
    const recs = [...walkStory(smallStory(), { agents: [] })].map(storyRecord);
    expect(recs[0]).toMatchObject({ type: 'session', session: 'session-one' });
    const silent = recs.find((r) => r.entry_id === 'E005');
    expect(silent).toMatchObject({
      type: 'beat',
      memoir_line: 5,
      agent: 'puck',
      interrupt: {
        by: 'puck',
        target: 'techne',
        target_turn: 'E004',
        reason: 'gossip',
        visibility: 'silent',
        shown_to_player: false,
      },
      shared: false,
      affinity_after: 0,
    });
    expect(recs.find((r) => r.entry_id === 'E003')).toMatchObject({ interrupt: { shown_to_player: true } });
    expect(recs.find((r) => r.entry_id === 'E007')).toMatchObject({
      response: { kind: 'modified', felt: 'unsure', delta: 'entry_count = 3' },
      likert: 3,
      comment: 'better names please',
    });
    expect(recs[recs.length - 1]).toMatchObject({
      type: 'session_end',
      session: 'session-two',
      affinity: { metis: 0.04, techne: -0.04, cupid: 0.05 },
    });
    for (const r of recs) expect(JSON.parse(JSON.stringify(r))).toEqual(r);
  });
});
