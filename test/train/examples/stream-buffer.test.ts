import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { MemoirEntry } from '../../../src/memoir/format/schema.js';
import { REASON_CLASSES, RESPONSE_KINDS, type Source } from '../../../src/memoir/format/sources.js';
import { replayBufferFromIndex } from '../../../src/memoir-index/replay-candidates.js';
import { streamReplayBuffer } from '../../../src/train/examples/stream-buffer.js';
import { ent, indexed } from './helpers.js';

/** The streaming selection keeps exactly what `selectReplayBuffer` keeps (the buffer). */

const row = fc.record({
  agent: fc.constantFrom('techne', 'metis', 'cupid' as const),
  source: fc.constantFrom<Source>(
    'specialist_proposed',
    'player_revision',
    'agent_interrupt',
    'affinity_change',
    'disagreement_resolution',
  ),
  kind: fc.option(fc.constantFrom(...RESPONSE_KINDS)),
  reason: fc.constantFrom(...REASON_CLASSES),
  pair: fc.boolean(),
  affinity: fc.constantFrom(0, 0.01, -0.03, 0.05),
  minute: fc.integer({ min: 0, max: 20 }),
  dated: fc.boolean(),
  revises: fc.option(fc.nat(50), { freq: 4 }),
  private: fc.boolean(),
});

type Row = typeof row extends fc.Arbitrary<infer T> ? T : never;

function build(rows: Row[]): MemoirEntry[] {
  const out: MemoirEntry[] = [];
  for (const r of rows) {
    const target = r.revises !== null && out.length > 0 ? out[r.revises % out.length] : undefined;
    const e = ent({
      scene_id: `s${out.length % 5}`,
      agent: target?.agent ?? r.agent,
      source: target?.source ?? r.source,
      agent_proposed: `p${out.length}`,
      player_response: r.kind ? { kind: r.kind, delta: null, felt: null } : null,
      training_label: r.pair
        ? {
            preference_pair: [
              { text: 'a', score: 0 },
              { text: 'b', score: 1 },
            ],
            weight: 1,
          }
        : null,
      affinity_delta: r.affinity,
      // Ties in time are common, so the order falls through to the entry id.
      ...(r.dated
        ? { recorded_at: new Date(Date.UTC(2026, 9, 1) + r.minute * 60_000).toISOString() }
        : { recorded_at: undefined }),
      ...((target?.source ?? r.source) === 'agent_interrupt'
        ? {
            interrupt: {
              interrupting_agent: 'aidos',
              target_agent: 'techne',
              target_turn: 's0',
              reason_class: r.reason,
              visibility: 'public',
            },
          }
        : {}),
      ...(target ? { supersedes: target.entry_id } : {}),
      ...(r.private ? { split: { shared_eligible: false, private_only: true } } : {}),
    });
    out.push(e);
  }
  return out;
}

describe('streamReplayBuffer', () => {
  it('keeps the same entries as selectReplayBuffer, for any memoir, filter and bound', () => {
    fc.assert(
      fc.property(
        fc.array(row, { minLength: 0, maxLength: 60 }),
        fc.nat(30),
        fc.constantFrom(undefined, 'shared' as const),
        fc.option(fc.constantFrom('techne', 'metis')),
        (rows, bound, split, agent) => {
          const entries = build(rows);
          const s = indexed(entries.slice(0, entries.length >> 1), entries.slice(entries.length >> 1));
          try {
            const filter = { files: s.files, ...(split ? { split } : {}), ...(agent ? { agents: [agent] } : {}) };
            const want = replayBufferFromIndex(s.index, filter, bound).buffer;
            const got = streamReplayBuffer(s.index, filter, bound);
            expect(got.kept.map((r) => r.entry_id).sort()).toEqual(want.kept.map((d) => d.entry_id).sort());
            expect(got.loadBearing).toBe(want.load_bearing);
            expect(got.overBound).toBe(want.over_bound);
            expect(got.superseded).toBe(want.dropped.filter((d) => d.rank === null).length);
            expect(got.belowBound).toBe(want.dropped.filter((d) => d.rank !== null).length);
            // Memoir order.
            const order = got.kept.map((r) => [r.file_id, r.line]);
            expect(order).toEqual(
              [...order].sort((a, b) => (a[0] as number) - (b[0] as number) || (a[1] as number) - (b[1] as number)),
            );
          } finally {
            s.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('a strict bound keeps at most `bound` entries: the best-ranked of what selectReplayBuffer keeps, load-bearing first', () => {
    fc.assert(
      fc.property(
        fc.array(row, { minLength: 0, maxLength: 60 }),
        fc.nat(30),
        fc.constantFrom(undefined, 'shared' as const),
        (rows, bound, split) => {
          const entries = build(rows);
          const s = indexed(entries.slice(0, entries.length >> 1), entries.slice(entries.length >> 1));
          try {
            const filter = { files: s.files, ...(split ? { split } : {}) };
            const want = replayBufferFromIndex(s.index, filter, bound).buffer;
            const byRank = [...want.kept].sort((a, b) => (a.rank as number) - (b.rank as number));
            const got = streamReplayBuffer(s.index, filter, bound, { strictBound: true });
            expect(got.kept.length).toBeLessThanOrEqual(bound);
            expect(got.kept.map((r) => r.entry_id).sort()).toEqual(
              byRank
                .slice(0, bound)
                .map((d) => d.entry_id)
                .sort(),
            );
            expect(got.loadBearing).toBe(want.load_bearing);
            expect(got.bearingOverBound).toBe(Math.max(0, want.load_bearing - bound));
          } finally {
            s.close();
          }
        },
      ),
      { numRuns: 60 },
    );
  });
});
