import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RevisionGraph, type RevisionNode } from '../../../src/memoir/derive/revisions.js';

let order = 0;
const node = (entry_id: string, supersedes: string | null, extra: Partial<RevisionNode> = {}): RevisionNode => ({
  entry_id,
  supersedes,
  recorded_at: null,
  order: order++,
  entry_type: 'pipeline_turn',
  shareable: true,
  ...extra,
});

describe('RevisionGraph.resolve', () => {
  it('resolves every id of a chain to its newest revision', () => {
    const g = new RevisionGraph([node('A', null), node('B', 'A'), node('C', 'B')]);
    for (const id of ['A', 'B', 'C']) expect(g.resolve(id).head).toBe('C');
    expect(g.resolve('A').path).toEqual(['A', 'B', 'C']);
    expect(g.resolve('B').path).toEqual(['B', 'C']);
    expect(g.resolve('C')).toMatchObject({ head: 'C', path: ['C'], forked: false, cycle: false });
  });

  it('an id outside any chain resolves to itself', () => {
    const g = new RevisionGraph([node('A', null)]);
    expect(g.resolve('Z')).toMatchObject({ head: 'Z', path: ['Z'], forked: false, cycle: false });
  });

  it('at a fork, takes the newest leaf by recorded_at, whatever the input order', () => {
    const nodes = [
      node('A', null, { recorded_at: '2026-01-01T00:00:00.000Z' }),
      node('B', 'A', { recorded_at: '2026-01-03T00:00:00.000Z' }),
      node('C', 'A', { recorded_at: '2026-01-02T00:00:00.000Z' }),
      node('D', 'C', { recorded_at: '2026-01-04T00:00:00.000Z' }),
    ];
    for (const perm of [nodes, [...nodes].reverse()]) {
      const r = new RevisionGraph(perm).resolve('A');
      expect(r.head).toBe('D');
      expect(r.path).toEqual(['A', 'C', 'D']);
      expect(r.forked).toBe(true);
    }
  });

  it('undated revisions are ordered by their position in the memoirs', () => {
    const g = new RevisionGraph([node('A', null), node('B', 'A', { order: 10 }), node('C', 'A', { order: 5 })]);
    expect(g.resolve('A').head).toBe('B');
  });

  it('terminates on a cycle and says so', () => {
    const g = new RevisionGraph([node('A', 'B'), node('B', 'A')]);
    const r = g.resolve('A');
    expect(r.cycle).toBe(true);
    expect(['A', 'B']).toContain(r.head);
    const self = new RevisionGraph([node('S', 'S')]).resolve('S');
    expect(self.cycle).toBe(true);
    expect(self.head).toBe('S');
  });

  it('property: resolution terminates, ends at the head, and follows supersedes links back', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.integer({ min: 0, max: 12 }), fc.option(fc.integer({ min: 0, max: 12 }), { nil: null })), {
          maxLength: 30,
        }),
        (pairs) => {
          const nodes = pairs.map(([id, sup], i) => ({
            entry_id: `n${id}`,
            supersedes: sup === null ? null : `n${sup}`,
            recorded_at: null,
            order: i,
          }));
          const g = new RevisionGraph(nodes);
          for (const n of nodes) {
            const r = g.resolve(n.entry_id);
            expect(r.path[0]).toBe(n.entry_id);
            expect(r.path[r.path.length - 1]).toBe(r.head);
            for (let i = 1; i < r.path.length; i++) expect(g.get(r.path[i] as string)?.supersedes).toBe(r.path[i - 1]);
            if (!r.cycle) expect(g.isSuperseded(r.head)).toBe(false);
          }
        },
      ),
    );
  });
});

describe('RevisionGraph.history', () => {
  it('gives the whole chain from any of its ids, original first', () => {
    const g = new RevisionGraph([node('A', null), node('B', 'A'), node('C', 'B'), node('X', null)]);
    for (const id of ['A', 'B', 'C']) {
      const h = g.history(id);
      expect(h.map((x) => [x.node.entry_id, x.depth, x.head])).toEqual([
        ['A', 0, false],
        ['B', 1, false],
        ['C', 2, true],
      ]);
    }
  });

  it('shows both branches of a fork, marking the newest leaf as head', () => {
    const g = new RevisionGraph([node('A', null), node('B', 'A'), node('C', 'A')]);
    const h = g.history('C');
    expect(h.map((x) => x.node.entry_id)).toEqual(['A', 'B', 'C']);
    expect(h.filter((x) => x.head).map((x) => x.node.entry_id)).toEqual(['C']);
  });

  it('a chain whose original is missing starts at the oldest present revision', () => {
    const g = new RevisionGraph([node('B', 'A'), node('C', 'B')]);
    expect(g.history('C').map((x) => x.node.entry_id)).toEqual(['B', 'C']);
  });
});

describe('RevisionGraph.problems', () => {
  it('reports a cycle once, naming every entry on it', () => {
    const g = new RevisionGraph([node('A', 'C'), node('B', 'A'), node('C', 'B')]);
    const cycles = g.problems().filter((p) => p.kind === 'cycle');
    expect(cycles).toHaveLength(1);
    expect([...(cycles[0]?.ids ?? [])].sort()).toEqual(['A', 'B', 'C']);
  });

  it('reports an entry that supersedes itself as a cycle', () => {
    expect(new RevisionGraph([node('A', 'A')]).problems().map((p) => p.kind)).toEqual(['cycle']);
  });

  it('reports a dangling reference', () => {
    const p = new RevisionGraph([node('B', 'GONE')]).problems();
    expect(p).toEqual([expect.objectContaining({ kind: 'dangling', entry_id: 'B', ids: ['B', 'GONE'] })]);
  });

  it('reports a fork on the entry revised twice', () => {
    const p = new RevisionGraph([node('A', null), node('B', 'A'), node('C', 'A')]).problems();
    expect(p).toEqual([expect.objectContaining({ kind: 'fork', entry_id: 'A', ids: ['B', 'C'] })]);
  });

  it('reports a revision that changes the entry type', () => {
    const p = new RevisionGraph([
      node('A', null, { entry_type: 'loyalty_beat' }),
      node('B', 'A', { entry_type: 'pipeline_turn' }),
    ]).problems();
    expect(p.map((x) => x.kind)).toEqual(['type_change']);
  });

  it('reports a revision that claims to be shareable when anything it replaces is private', () => {
    const g = new RevisionGraph([
      node('A', null, { shareable: false }),
      node('B', 'A', { shareable: false }),
      node('C', 'B', { shareable: true }),
    ]);
    expect(g.problems().map((x) => [x.kind, x.entry_id])).toEqual([['widens_privacy', 'C']]);
    expect(g.effectiveShareable('C')).toBe(false);
    expect(g.effectiveShareable('A')).toBe(false);
  });

  it('a clean chain has no problems and stays shareable', () => {
    const g = new RevisionGraph([node('A', null), node('B', 'A'), node('C', 'B')]);
    expect(g.problems()).toEqual([]);
    expect(g.effectiveShareable('C')).toBe(true);
  });
});
