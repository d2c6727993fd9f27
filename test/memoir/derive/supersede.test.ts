import { describe, expect, it } from 'vitest';
import { InvalidDataError, UsageError } from '../../../src/errors.js';
import type { MemoirEntry } from '../../../src/memoir/format/schema.js';
import { buildRevision, mergePatch } from '../../../src/memoir/derive/supersede.js';
import { prepareEntries } from '../../../src/memoir/file/append.js';
import { ulidGenerator } from '../../../src/memoir/format/entry-id.js';
import { parseLine } from '../../../src/memoir/format/parse.js';

const shared: MemoirEntry = {
  scene_id: 'session-1a2b3c4d.turn-3',
  agent: 'techne',
  source: 'specialist_proposed',
  context: { task_type: 'code', transcript_hash: 'sha256:00', preceding_agents: ['hephaestus'] },
  narrative_beat: 'techne_proposal_lands',
  agent_proposed: 'def f(): pass',
  player_response: { kind: 'accepted', delta: null, felt: 'right' },
  affinity_delta: 0.02,
  training_label: null,
  split: { shared_eligible: true, private_only: false },
  entry_id: '01M3VB5KNHKYQFF7ZBTC52RPVC',
  recorded_at: '2026-10-01T09:00:00.000Z',
  entry_type: 'pipeline_turn',
};

const privateRevision: MemoirEntry = {
  ...shared,
  source: 'player_revision',
  split: { shared_eligible: false, private_only: true },
  entry_id: '01M3VB5KNHKYQFF7ZBTC52RPVD',
};

describe('mergePatch', () => {
  it('merges objects key by key, replaces arrays and scalars, and null sets null', () => {
    expect(mergePatch({ a: { b: 1, c: 2 }, d: [1, 2], e: 'x' }, { a: { c: 3 }, d: [9], e: null })).toEqual({
      a: { b: 1, c: 3 },
      d: [9],
      e: null,
    });
  });
});

describe('buildRevision', () => {
  it('names the replaced id, carries the reason and keeps the entry type', () => {
    const r = buildRevision({
      original: shared,
      originalShareable: true,
      patch: { agent_proposed: 'def f(): return 1' },
      reason: ' typo ',
    });
    expect(r.input.supersedes).toBe(shared.entry_id);
    expect(r.input.revision_reason).toBe('typo');
    expect(r.input.entry_type).toBe('pipeline_turn');
    expect(r.input.agent_proposed).toBe('def f(): return 1');
    expect(r.input.entry_id).toBeUndefined();
    expect(r.input.recorded_at).toBeUndefined();
    expect(r.changed).toEqual(['agent_proposed']);
    expect(r.narrowed).toBeUndefined();
  });

  it('merges a partial nested patch over the original', () => {
    const r = buildRevision({
      original: shared,
      originalShareable: true,
      patch: { player_response: { felt: 'unsure' } },
      reason: 'felt',
    });
    expect(r.input.player_response).toEqual({ kind: 'accepted', delta: null, felt: 'unsure' });
    expect(r.changed).toEqual(['player_response']);
  });

  it('infers the entry type of a Python line (no entry_type) and keeps it', () => {
    const { entry_type: _t, ...py } = shared;
    const r = buildRevision({
      original: { ...py, entry_id: 'py_ABC' } as MemoirEntry,
      originalShareable: true,
      patch: { affinity_delta: 0.5 },
      reason: 'r',
    });
    expect(r.input.entry_type).toBe('pipeline_turn');
    expect(r.input.supersedes).toBe('py_ABC');
  });

  it('refuses to change the entry type', () => {
    expect(() =>
      buildRevision({ original: shared, originalShareable: true, patch: { entry_type: 'loyalty_beat' }, reason: 'r' }),
    ).toThrow(InvalidDataError);
    // repeating the same type is fine
    expect(
      buildRevision({
        original: shared,
        originalShareable: true,
        patch: { entry_type: 'pipeline_turn', affinity_delta: 0 },
        reason: 'r',
      }).input.entry_type,
    ).toBe('pipeline_turn');
  });

  it.each(['entry_id', 'recorded_at', 'supersedes', 'revision_reason'])('refuses to patch %s', (key) => {
    expect(() =>
      buildRevision({ original: shared, originalShareable: true, patch: { [key]: 'x' }, reason: 'r' }),
    ).toThrow(InvalidDataError);
  });

  it('adversarial: a revision that asks to make a private entry shared stays private', () => {
    const r = buildRevision({
      original: privateRevision,
      originalShareable: false,
      patch: {
        source: 'specialist_proposed',
        agent_proposed: 'better',
        split: { shared_eligible: true, private_only: false },
      },
      reason: 'share it',
    });
    expect(r.input.split).toEqual({ shared_eligible: false, private_only: true });
    expect(r.narrowed).toMatch(/never widen privacy/);
  });

  it('adversarial: a patch that only asks for a shared split on a private entry is refused', () => {
    expect(() =>
      buildRevision({
        original: privateRevision,
        originalShareable: false,
        patch: { split: { shared_eligible: true, private_only: false } },
        reason: 'share',
      }),
    ).toThrow(/never widen privacy/);
  });

  it('a private original stays private even when its own line claims shared (lenient upstream split)', () => {
    const lenient = {
      ...shared,
      agent: 'cupid',
      source: 'cupid_scene',
      split: { shared_eligible: true, private_only: false },
    } as MemoirEntry;
    const r = buildRevision({
      original: lenient,
      originalShareable: false,
      patch: { agent_proposed: 'x' },
      reason: 'r',
    });
    expect(r.input.split).toEqual({ shared_eligible: false, private_only: true });
  });

  it('may make a shared entry private', () => {
    const r = buildRevision({
      original: shared,
      originalShareable: true,
      patch: { split: { shared_eligible: false, private_only: true } },
      reason: 'too personal',
    });
    expect(r.input.split).toEqual({ shared_eligible: false, private_only: true });
    expect(r.changed).toEqual(['split']);
  });

  it('refuses an empty reason, a non-object patch, a patch that changes nothing and unknown keys', () => {
    expect(() =>
      buildRevision({ original: shared, originalShareable: true, patch: { affinity_delta: 1 }, reason: '  ' }),
    ).toThrow(UsageError);
    expect(() => buildRevision({ original: shared, originalShareable: true, patch: [1], reason: 'r' })).toThrow(
      InvalidDataError,
    );
    expect(() =>
      buildRevision({
        original: shared,
        originalShareable: true,
        patch: { agent_proposed: shared.agent_proposed },
        reason: 'r',
      }),
    ).toThrow(/changes nothing/);
    expect(() =>
      buildRevision({ original: shared, originalShareable: true, patch: { agent_propsed: 'x' }, reason: 'r' }),
    ).toThrow(/unknown key "agent_propsed"/);
  });

  it('leaves out keys of the original no model declares, one warning each, as pydantic leaves them out', () => {
    const withExtra = { ...shared, host: 'py-host-1', host_score: 1 } as MemoirEntry;
    const r = buildRevision({
      original: withExtra,
      originalShareable: true,
      patch: { agent_proposed: 'y' },
      reason: 'r',
    });
    expect(r.input).not.toHaveProperty('host');
    expect(r.input).not.toHaveProperty('host_score');
    expect(r).not.toHaveProperty('carried');
    expect(r.changed).toEqual(['agent_proposed']);
    expect(r.ignored).toEqual([
      `${shared.entry_id}: key "host" is not a memoir field; left out of the revision, as the upstream model leaves it out`,
      `${shared.entry_id}: key "host_score" is not a memoir field; left out of the revision, as the upstream model leaves it out`,
    ]);
    const plain = buildRevision({
      original: shared,
      originalShareable: true,
      patch: { agent_proposed: 'y' },
      reason: 'r',
    });
    expect(plain.ignored).toEqual([]);
  });

  it('refuses a patch that sets a key no model declares, even one the original holds', () => {
    const withExtra = { ...shared, host_mood: 'calm' } as MemoirEntry;
    expect(() =>
      buildRevision({ original: withExtra, originalShareable: true, patch: { host_mood: 'tense' }, reason: 'r' }),
    ).toThrow(/unknown key "host_mood" in the correction/);
  });
});

describe('a correction keeps a host context whole', () => {
  it('a patch of another field leaves every context key, its order and number forms, as written', () => {
    const line =
      '{"scene_id":"s.turn-1","agent":"techne","source":"specialist_proposed","context":{"host":"py-host-1","7":1.0,"task_type":"qa"},"narrative_beat":null,"agent_proposed":"x","player_response":null,"affinity_delta":0.0,"training_label":null,"split":{"shared_eligible":true,"private_only":false}}';
    const p = parseLine(line);
    if (!p.ok) throw new Error(p.message);
    const r = buildRevision({
      original: p.entry,
      originalShareable: true,
      patch: { agent_proposed: 'y' },
      reason: 'typo',
    });
    const [out] = prepareEntries(
      [{ value: r.input, where: 'supersede' }],
      ulidGenerator(
        () => Date.UTC(2026, 10, 22),
        (n) => new Uint8Array(n),
      ),
      () => new Date('2026-11-22T10:00:00.000Z'),
    );
    expect(out?.line).toContain(',"context":{"host":"py-host-1","7":1.0,"task_type":"qa"},');
    expect(r.changed).toEqual(['agent_proposed']);
  });
});
