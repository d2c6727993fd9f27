import { describe, expect, it } from 'vitest';
import {
  affinityFor,
  feedbackEntry,
  feltFor,
  RATINGS,
  suggestedKind,
  type FeedbackSubject,
} from '../../src/feedback/entry.js';
import { prepareEntries } from '../../src/memoir/file/append.js';
import { ulidGenerator } from '../../src/memoir/format/entry-id.js';
import { parseLine } from '../../src/memoir/format/parse.js';
import { MemoirInputSchema } from '../../src/memoir/format/schema.js';

const subject: FeedbackSubject = {
  agent: 'techne',
  scene_id: 'session-1a2b3c4d.turn-3',
  proposed: 'x = compute()',
  revised: null,
  context: { task_type: 'code', transcript_hash: 'sha256:00', preceding_agents: ['hephaestus'] },
};
const ids = () =>
  ulidGenerator(
    () => Date.UTC(2026, 10, 22),
    (n) => new Uint8Array(n),
  );
const now = () => new Date('2026-11-22T10:00:00.000Z');

describe('rating mapping', () => {
  it('maps 1–2 to off (-0.05), 3 to unsure (0), 4–5 to right (+0.02)', () => {
    expect(RATINGS.map((r) => [r, feltFor(r), affinityFor(r)])).toEqual([
      [1, 'off', -0.05],
      [2, 'off', -0.05],
      [3, 'unsure', 0],
      [4, 'right', 0.02],
      [5, 'right', 0.02],
    ]);
  });

  it('suggests a kind from the rating; a revision suggests modified', () => {
    expect(RATINGS.map((r) => suggestedKind(r, false))).toEqual([
      'rejected',
      'rejected',
      'deferred',
      'accepted',
      'accepted',
    ]);
    expect(suggestedKind(5, true)).toBe('modified');
  });
});

describe('feedbackEntry', () => {
  it('writes one specialist_proposed entry with the raw rating in likert', () => {
    const input = feedbackEntry(subject, { rating: 5, kind: 'accepted', comment: null });
    expect(MemoirInputSchema.safeParse(input).success).toBe(true);
    const [p] = prepareEntries([{ value: input, where: 'feedback' }], ids(), now);
    expect(p?.entry).toMatchObject({
      scene_id: 'session-1a2b3c4d.turn-3',
      agent: 'techne',
      source: 'specialist_proposed',
      context: subject.context,
      narrative_beat: 'techne_proposal_lands',
      agent_proposed: 'x = compute()',
      player_response: { kind: 'accepted', felt: 'right', delta: null },
      affinity_delta: 0.02,
      training_label: null,
      likert: 5,
      entry_type: 'pipeline_turn',
      // A proposal alone is a pattern: the strict rule lets it be shared.
      split: { shared_eligible: true, private_only: false },
    });
    expect(p?.entry).not.toHaveProperty('comment');
    // The line carries the ten upstream keys first, then the extensions.
    const keys = Object.keys(JSON.parse(p?.line ?? '{}') as object);
    expect(keys.slice(0, 10)).toEqual([
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
    expect(keys).toContain('likert');
  });

  it('a revision becomes the delta and a preference pair (proposed 0, revised 1, weight 1.0), and makes the entry private', () => {
    const input = feedbackEntry(
      { ...subject, revised: 'entry_count = compute()' },
      { rating: 2, kind: 'modified', comment: null },
    );
    const [p] = prepareEntries([{ value: input, where: 'feedback' }], ids(), now);
    expect(p?.entry.player_response).toEqual({ kind: 'modified', delta: 'entry_count = compute()', felt: 'off' });
    expect(p?.entry.training_label).toEqual({
      preference_pair: [
        { text: 'x = compute()', score: 0 },
        { text: 'entry_count = compute()', score: 1 },
      ],
      weight: 1,
    });
    expect(p?.line).toContain('"weight":1.0');
    expect(p?.entry.affinity_delta).toBe(-0.05);
    expect(p?.entry.narrative_beat).toBe('techne_proposal_reworked');
    expect(p?.entry.split).toEqual({ shared_eligible: false, private_only: true });
  });

  it('a comment is kept in the comment extension and makes the entry private; a blank one is dropped', () => {
    const [p] = prepareEntries(
      [{ value: feedbackEntry(subject, { rating: 3, kind: 'deferred', comment: 'ask me tomorrow' }), where: 'f' }],
      ids(),
      now,
    );
    expect(p?.entry).toMatchObject({
      comment: 'ask me tomorrow',
      likert: 3,
      affinity_delta: 0,
      narrative_beat: 'techne_proposal_deferred',
    });
    expect(p?.entry.split.private_only).toBe(true);
    const blank = feedbackEntry(subject, { rating: 3, kind: 'deferred', comment: '   ' });
    expect(blank).not.toHaveProperty('comment');
    expect(blank).not.toHaveProperty('split');
  });

  it('Cupid and Puck feedback stays private by the rule', () => {
    const [p] = prepareEntries(
      [
        {
          value: feedbackEntry({ ...subject, agent: 'cupid' }, { rating: 4, kind: 'accepted', comment: null }),
          where: 'f',
        },
      ],
      ids(),
      now,
    );
    expect(p?.entry.split).toEqual({ shared_eligible: false, private_only: true });
  });
});

describe('feedbackEntry keeps a host context whole', () => {
  it('every key of the copied context, in its order and with its number forms', () => {
    const host =
      '{"scene_id":"s.turn-1","agent":"techne","source":"specialist_proposed","context":{"task_type":"qa","host":"py-host-1","7":1.0,"coverage":{"delta":0.0,"lines":12}},"narrative_beat":null,"agent_proposed":"x","player_response":null,"affinity_delta":0.0,"training_label":null,"split":{"shared_eligible":true,"private_only":false}}';
    const parsed = parseLine(host);
    if (!parsed.ok) throw new Error(parsed.message);
    const input = feedbackEntry(
      { ...subject, context: parsed.entry.context },
      { rating: 4, kind: 'accepted', comment: null },
    );
    const [p] = prepareEntries([{ value: input, where: 'feedback' }], ids(), now);
    expect(p?.line).toContain(
      ',"context":{"task_type":"qa","host":"py-host-1","7":1.0,"coverage":{"delta":0.0,"lines":12}},',
    );
  });
});
