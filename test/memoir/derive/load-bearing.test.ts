import { describe, expect, it } from 'vitest';
import {
  ENTRY_TYPE_VERDICTS,
  isLoadBearing,
  loadBearingVerdict,
  SOURCE_VERDICTS,
  type LoadBearingFacts,
} from '../../../src/memoir/derive/load-bearing.js';
import {
  ENTRY_TYPES,
  REASON_CLASSES,
  RESPONSE_KINDS,
  SOURCES,
  type EntryType,
  type Source,
} from '../../../src/memoir/format/sources.js';

/**
 * The decisions, written out once more by hand. A new source or entry type must be added here
 * AND to the tables in load-bearing.ts, or this suite fails: nothing inherits a default.
 */
const EXPECTED_SOURCE: Record<Source, 'always' | 'when' | 'routine' | 'never'> = {
  specialist_proposed: 'when',
  player_revision: 'always',
  agent_interrupt: 'when',
  disagreement_resolution: 'always',
  cupid_scene: 'routine',
  puck_engagement: 'routine',
  affinity_change: 'routine',
  player_profile: 'always',
  raw_transcript: 'routine',
  task_description: 'routine',
};
const EXPECTED_TYPE: Record<EntryType, 'always' | 'when' | 'routine' | 'never'> = {
  pipeline_turn: 'routine',
  interrupt: 'routine',
  council_event: 'always',
  loyalty_beat: 'always',
  episode: 'never',
};

const facts = (source: Source, entry_type: EntryType, extra: Partial<LoadBearingFacts> = {}): LoadBearingFacts => ({
  source,
  entry_type,
  player_response: null,
  interrupt: null,
  ...extra,
});
const none = { chain: 'none' } as const;

describe('load-bearing verdict tables', () => {
  it('have exactly one verdict for every source', () => {
    expect(Object.keys(SOURCE_VERDICTS).sort()).toEqual([...SOURCES].sort());
    expect(Object.keys(EXPECTED_SOURCE).sort()).toEqual([...SOURCES].sort());
  });

  it('have exactly one verdict for every entry type', () => {
    expect(Object.keys(ENTRY_TYPE_VERDICTS).sort()).toEqual([...ENTRY_TYPES].sort());
    expect(Object.keys(EXPECTED_TYPE).sort()).toEqual([...ENTRY_TYPES].sort());
  });

  it.each(SOURCES.map((s) => [s]))('source %s has the decided verdict and says why', (s) => {
    expect(SOURCE_VERDICTS[s].verdict).toBe(EXPECTED_SOURCE[s]);
    expect(SOURCE_VERDICTS[s].why.length).toBeGreaterThan(10);
  });

  it.each(ENTRY_TYPES.map((t) => [t]))('entry type %s has the decided verdict and says why', (t) => {
    expect(ENTRY_TYPE_VERDICTS[t].verdict).toBe(EXPECTED_TYPE[t]);
    expect(ENTRY_TYPE_VERDICTS[t].why.length).toBeGreaterThan(10);
  });
});

describe('isLoadBearing', () => {
  // Every source against a routine type, every type against a routine source.
  it.each(SOURCES.map((s) => [s]))('source %s alone: verdict applies on a plain turn', (s) => {
    const e = facts(s, 'pipeline_turn');
    expect(isLoadBearing(e, none)).toBe(EXPECTED_SOURCE[s] === 'always');
  });

  it.each(ENTRY_TYPES.map((t) => [t]))('entry type %s alone: verdict applies with a routine source', (t) => {
    const e = facts('raw_transcript', t);
    expect(isLoadBearing(e, none)).toBe(EXPECTED_TYPE[t] === 'always');
  });

  it.each(RESPONSE_KINDS.map((k) => [k]))('a specialist proposal the player %s', (kind) => {
    const v = loadBearingVerdict(facts('specialist_proposed', 'pipeline_turn', { player_response: { kind } }), none);
    expect(v.load_bearing).toBe(kind === 'rejected' || kind === 'modified');
    if (kind === 'rejected') expect(v.reasons).toEqual(['rejected_path']);
    if (kind === 'modified') expect(v.reasons).toEqual(['reworked_proposal']);
    if (kind === 'accepted') expect(v.reasons).toEqual(['routine']);
  });

  it.each(REASON_CLASSES.map((r) => [r]))('an interrupt with reason class %s', (reason_class) => {
    const e = facts('agent_interrupt', 'interrupt', { interrupt: { reason_class } });
    expect(isLoadBearing(e, none)).toBe(reason_class === 'safety' || reason_class === 'correction');
  });

  it('an interrupt whose reason is unknown (a Python line) is routine', () => {
    expect(isLoadBearing(facts('agent_interrupt', 'interrupt'), none)).toBe(false);
  });

  it('the head of a revision chain is load-bearing; a superseded entry never is', () => {
    const routine = facts('specialist_proposed', 'pipeline_turn', { player_response: { kind: 'accepted' } });
    expect(loadBearingVerdict(routine, { chain: 'head' })).toEqual({ load_bearing: true, reasons: ['revision_head'] });
    const strong = facts('player_revision', 'loyalty_beat');
    expect(loadBearingVerdict(strong, { chain: 'superseded' })).toEqual({
      load_bearing: false,
      reasons: ['superseded'],
    });
  });

  it('episodes are never load-bearing, not even as the head of a chain or from a load-bearing source', () => {
    expect(loadBearingVerdict(facts('player_profile', 'episode'), { chain: 'head' })).toEqual({
      load_bearing: false,
      reasons: ['derived_episode'],
    });
  });

  it('lists every rule that applied', () => {
    const v = loadBearingVerdict(facts('player_profile', 'council_event'), { chain: 'head' });
    expect(v.reasons).toEqual(['source:player_profile', 'type:council_event', 'revision_head']);
  });
});
