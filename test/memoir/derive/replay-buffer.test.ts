import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isLoadBearing } from '../../../src/memoir/derive/load-bearing.js';
import {
  compareInformativeness,
  selectReplayBuffer,
  type BufferCandidate,
} from '../../../src/memoir/derive/replay-buffer.js';
import { ENTRY_TYPES, RESPONSE_KINDS, SOURCES } from '../../../src/memoir/format/sources.js';

const cand = (entry_id: string, extra: Partial<BufferCandidate> = {}): BufferCandidate => ({
  entry_id,
  source: 'specialist_proposed',
  entry_type: 'pipeline_turn',
  player_response: { kind: 'accepted' },
  interrupt: null,
  chain: 'none',
  has_preference: false,
  affinity_delta: 0,
  recorded_at: '2026-10-01T00:00:00.000Z',
  ...extra,
});

describe('selectReplayBuffer', () => {
  it('keeps every load-bearing entry, then fills the bound in the documented order', () => {
    const cs = [
      cand('routine-old', { recorded_at: '2026-01-01T00:00:00.000Z' }),
      cand('routine-new', { recorded_at: '2026-12-01T00:00:00.000Z' }),
      cand('affinity', { affinity_delta: -0.3 }),
      cand('interrupt', {
        source: 'agent_interrupt',
        entry_type: 'interrupt',
        player_response: null,
        interrupt: { reason_class: 'gossip' },
      }),
      cand('pair', { has_preference: true }),
      cand('revision', { source: 'player_revision', player_response: { kind: 'modified' } }),
      cand('undated', { recorded_at: null }),
    ];
    const b = selectReplayBuffer(cs, 5);
    expect(b.kept.map((d) => d.entry_id)).toEqual(['revision', 'pair', 'interrupt', 'affinity', 'routine-new']);
    expect(b.kept[0]).toMatchObject({ load_bearing: true, rank: 1 });
    expect(b.dropped.map((d) => d.entry_id)).toEqual(['routine-old', 'undated']);
    expect(b.dropped[0]?.why).toMatch(/below the bound \(rank 6\)/);
    expect(b.over_bound).toBe(false);
    expect(b.warnings).toEqual([]);
  });

  it('ranks rejected above modified above interrupts among entries that are not load-bearing', () => {
    // Make them routine by superseding nothing and using sources that are not load-bearing.
    const rejected = cand('r', { source: 'puck_engagement', player_response: { kind: 'rejected' } });
    const modified = cand('m', { source: 'puck_engagement', player_response: { kind: 'modified' } });
    const interrupt = cand('i', { source: 'puck_engagement', entry_type: 'interrupt', player_response: null });
    expect([interrupt, modified, rejected].sort(compareInformativeness).map((c) => c.entry_id)).toEqual([
      'r',
      'm',
      'i',
    ]);
  });

  it('adversarial: a bound smaller than the load-bearing set keeps all of them and warns', () => {
    const lb = Array.from({ length: 6 }, (_, i) => cand(`lb${i}`, { source: 'disagreement_resolution' }));
    const rest = Array.from({ length: 4 }, (_, i) => cand(`r${i}`, { has_preference: true }));
    const b = selectReplayBuffer([...rest, ...lb], 3);
    expect(b.kept.map((d) => d.entry_id).sort()).toEqual(lb.map((c) => c.entry_id).sort());
    expect(b.kept.every((d) => d.load_bearing)).toBe(true);
    expect(b.dropped.map((d) => d.entry_id).sort()).toEqual(['r0', 'r1', 'r2', 'r3']);
    expect(b.over_bound).toBe(true);
    expect(b.warnings[0]).toMatch(/load-bearing entries alone \(6\) exceed the bound \(3\)/);
  });

  it('a bound of zero keeps only the load-bearing entries', () => {
    const b = selectReplayBuffer([cand('a'), cand('b', { source: 'player_profile' })], 0);
    expect(b.kept.map((d) => d.entry_id)).toEqual(['b']);
    expect(b.over_bound).toBe(true);
  });

  it('drops superseded entries and keeps the head of their chain as load-bearing', () => {
    const b = selectReplayBuffer(
      [cand('old', { chain: 'superseded', source: 'player_revision' }), cand('new', { chain: 'head' })],
      10,
    );
    expect(b.kept.map((d) => [d.entry_id, d.reasons])).toEqual([['new', ['revision_head']]]);
    expect(b.dropped).toEqual([expect.objectContaining({ entry_id: 'old', rank: null, reasons: ['superseded'] })]);
  });

  it('rejects a negative or fractional bound', () => {
    expect(() => selectReplayBuffer([], -1)).toThrow(RangeError);
    expect(() => selectReplayBuffer([], 1.5)).toThrow(RangeError);
  });

  const arbCandidate = fc.record({
    entry_id: fc.string({ minLength: 1, maxLength: 6 }),
    source: fc.constantFrom(...SOURCES),
    entry_type: fc.constantFrom(...ENTRY_TYPES),
    player_response: fc.option(fc.record({ kind: fc.constantFrom(...RESPONSE_KINDS) }), { nil: null }),
    interrupt: fc.constant(null),
    chain: fc.constantFrom('none' as const, 'head' as const, 'superseded' as const),
    has_preference: fc.boolean(),
    affinity_delta: fc.double({ min: -1, max: 1, noNaN: true }),
    recorded_at: fc.option(
      fc
        .date({ min: new Date('2020-01-01'), max: new Date('2030-01-01'), noInvalidDate: true })
        .map((d) => d.toISOString()),
      { nil: null },
    ),
  });

  it('property: load-bearing kept, size max(bound, load-bearing) when possible, order-independent', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(arbCandidate, { selector: (c) => c.entry_id, maxLength: 40 }),
        fc.integer({ min: 0, max: 50 }),
        fc.integer(),
        (cs, bound, seed) => {
          const b = selectReplayBuffer(cs, bound);
          const live = cs.filter((c) => c.chain !== 'superseded');
          const lb = live.filter((c) => isLoadBearing(c, c));
          const kept = new Set(b.kept.map((d) => d.entry_id));
          for (const c of lb) expect(kept.has(c.entry_id)).toBe(true);
          for (const c of cs.filter((x) => x.chain === 'superseded')) expect(kept.has(c.entry_id)).toBe(false);
          expect(b.kept.length).toBe(Math.min(live.length, Math.max(bound, lb.length)));
          expect(b.kept.length + b.dropped.length).toBe(cs.length);
          // Shuffling the input changes nothing.
          const shuffled = [...cs].sort(
            (x, y) => ((x.entry_id.charCodeAt(0) * 31 + seed) % 7) - ((y.entry_id.charCodeAt(0) * 31 + seed) % 7),
          );
          expect(selectReplayBuffer(shuffled, bound)).toEqual(b);
        },
      ),
    );
  });
});
