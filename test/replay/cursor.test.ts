import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendLines, prepareEntries } from '../../src/memoir/file/append.js';
import type { Agent } from '../../src/memoir/format/agents.js';
import { ulidGenerator } from '../../src/memoir/format/entry-id.js';
import { mulberry32 } from '../../src/runtime/seeded-random.js';
import { StoryCursor } from '../../src/replay/cursor.js';
import { MemoryStory } from './memory-story.js';
import type { BeatRef, StoryFilter, StoryNav } from '../../src/replay/story.js';
import { openIndex, type MemoirIndex } from '../../src/memoir-index/memoir-index.js';
import { StoryIndex } from '../../src/memoir-index/story-queries.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { readEntries, sampleForge } from '../helpers/forge.js';

/**
 * The SQLite cursor must tell the same story as the in-memory reference, whatever the page size:
 * every step, scene jump, position, scene window and affinity, with and without filters.
 */
let home: string;
let index: MemoirIndex;
let memoirs: string[];
let supersededId: string;
let revisionId: string;

beforeAll(async () => {
  home = tempDir('kourai-cursor-');
  memoirs = await sampleForge(home, { sessions: 4, turns: 10, seed: 11 });
  // A revision of an entry in the first session: the original drops out of the story.
  const first = readEntries(memoirs[0] as string);
  const target = first.find((e) => e.agent === 'techne' && e.source === 'specialist_proposed');
  if (!target) throw new Error('fixture: no techne proposal');
  supersededId = target.entry_id;
  const ids = ulidGenerator(
    () => Date.UTC(2026, 10, 1),
    (n) => new Uint8Array(n).fill(7),
  );
  const [p] = prepareEntries(
    [
      {
        value: {
          scene_id: target.scene_id,
          agent: 'techne',
          source: 'specialist_proposed',
          agent_proposed: 'revised text',
          affinity_delta: 0.5,
          supersedes: target.entry_id,
          revision_reason: 'typo',
        },
        where: 'test',
      },
    ],
    ids,
    () => new Date('2026-10-01T12:00:00Z'),
  );
  if (!p) throw new Error('fixture');
  revisionId = p.entry.entry_id;
  appendLines(memoirs[0] as string, [p.line]);
  index = openIndex(home);
  index.update(memoirs);
});

afterAll(() => {
  index?.close();
  removeDir(home);
});

function both(pageSize: number): { cursor: StoryCursor; memory: MemoryStory } {
  const q = new StoryIndex(
    index,
    memoirs.map((p) => index.file(p)?.id as number),
  );
  const cursor = new StoryCursor(q, { pageSize });
  const memory = new MemoryStory(
    cursor.sessions.map((s) => ({ session: s.session, path: s.path, entries: readEntries(s.path) })),
  );
  return { cursor, memory };
}

function walk(nav: StoryNav, filter: StoryFilter, dir: 1 | -1): BeatRef[] {
  const out: BeatRef[] = [];
  let r = nav.edge(dir === 1 ? 'first' : 'last', filter);
  while (r) {
    out.push(r);
    r = nav.step(r, dir, filter);
  }
  return out;
}

const FILTERS: StoryFilter[] = [
  { agents: [] },
  { agents: ['techne'] },
  { agents: ['aidos', 'cupid'] },
  { agents: ['aletheia', 'puck', 'kallos'] },
];

describe('session order', () => {
  it('orders sessions by their first timestamp; memoirs with none (Python hosts) come last', () => {
    const { cursor } = both(200);
    const python = memoirs[2] as string; // synth writes every third session as a Python host
    expect(cursor.sessions.map((s) => s.path)).toEqual([memoirs[0], memoirs[1], memoirs[3], python]);
    expect(cursor.sessions[3]?.startedAt).toBeNull();
    const starts = cursor.sessions.slice(0, 3).map((s) => s.startedAt as string);
    expect([...starts].sort()).toEqual(starts);
  });
});

describe.each([2, 3, 7, 200])('StoryCursor with pages of %i', (pageSize) => {
  it('walks forwards and backwards exactly like the reference, with and without filters', () => {
    const { cursor, memory } = both(pageSize);
    for (const f of FILTERS) {
      const fwd = walk(memory, f, 1);
      expect(walk(cursor, f, 1)).toEqual(fwd);
      expect(walk(cursor, f, -1)).toEqual([...fwd].reverse());
      expect(cursor.count(f)).toBe(fwd.length);
    }
  });

  it('agrees on scene starts, positions and matches at every beat', () => {
    const { cursor, memory } = both(pageSize);
    for (const f of FILTERS) {
      walk(memory, f, 1).forEach((r, i) => {
        expect(cursor.position(r, f)).toBe(i);
        expect(cursor.sceneStart(r, 1, f)).toEqual(memory.sceneStart(r, 1, f));
        expect(cursor.sceneStart(r, -1, f)).toEqual(memory.sceneStart(r, -1, f));
        expect(cursor.matches(r, f)).toBe(true);
      });
    }
  });

  it('agrees on scene windows and on the affinity after every beat', () => {
    const { cursor, memory } = both(pageSize);
    for (const f of FILTERS.slice(0, 2)) {
      for (const r of walk(memory, f, 1)) {
        for (const max of [1, 3, 9]) {
          const a = cursor.scene(r, f, max);
          const b = memory.scene(r, f, max);
          expect({ ...a, beats: a.beats.map((x) => x.entry_id) }).toEqual({
            ...b,
            beats: b.beats.map((x) => x.entry_id),
          });
        }
        expect(cursor.affinityAt(r)).toEqual(memory.affinityAt(r));
        expect(cursor.beat(r)).toEqual(memory.beat(r));
      }
    }
  });
});

describe('StoryCursor, jumping around', () => {
  it('positions and affinities agree with the reference in any visiting order (they are counted from the nearest known point)', () => {
    const { cursor, memory } = both(3);
    const rand = mulberry32(5);
    for (const f of FILTERS.slice(0, 3)) {
      const refs = walk(memory, f, 1);
      const order = [
        ...refs.keys(),
        ...[...refs.keys()].reverse(),
        ...refs.map(() => Math.floor(rand() * refs.length)),
      ];
      for (const i of order) {
        const r = refs[i] as BeatRef;
        expect(cursor.position(r, f)).toBe(i);
        expect(cursor.affinityAt(r)).toEqual(memory.affinityAt(r));
      }
    }
  });
});

describe('StoryCursor lookups', () => {
  it('leaves superseded entries out and finds them as their newest revision', () => {
    const { cursor } = both(5);
    const ids = walk(cursor, { agents: [] }, 1).map((r) => cursor.beat(r).entry_id);
    expect(ids).not.toContain(supersededId);
    expect(ids).toContain(revisionId);
    const hit = cursor.find(supersededId);
    expect(hit && cursor.beat(hit).entry_id).toBe(revisionId);
    expect(cursor.beat(hit as BeatRef).supersedes).toBe(supersededId);
  });

  it('finds entries by id and by unique prefix (6+ characters), including derived Python ids', () => {
    const { cursor, memory } = both(5);
    const all = walk(memory, { agents: [] }, 1);
    for (const r of [all[0], all[17], all[all.length - 1]] as BeatRef[]) {
      const id = memory.beat(r).entry_id;
      expect(cursor.find(id)).toEqual(r);
    }
    const python = all.find((r) => memory.beat(r).entry_id.startsWith('py_')) as BeatRef;
    expect(cursor.find(memory.beat(python).entry_id.slice(0, 12))).toEqual(python);
    expect(cursor.find('nope-not-an-id')).toBeNull();
    expect(cursor.find('01')).toBeNull(); // too short to be a prefix
  });

  it('searches forwards and backwards (every word must match), within the filter', () => {
    const { cursor, memory } = both(4);
    for (const query of ['naming', 'refused', 'whisper limit']) {
      for (const f of FILTERS.slice(0, 2)) {
        const hitsMem: BeatRef[] = [];
        let r = memory.search(query, null, 1, f);
        while (r) {
          hitsMem.push(r);
          r = memory.search(query, r, 1, f);
        }
        const hitsCur: BeatRef[] = [];
        r = cursor.search(query, null, 1, f);
        while (r) {
          hitsCur.push(r);
          r = cursor.search(query, r, 1, f);
        }
        expect(hitsCur).toEqual(hitsMem);
        expect(cursor.search(query, null, -1, f)).toEqual(hitsMem[hitsMem.length - 1] ?? null);
      }
    }
    expect(cursor.search('naming', null, 1, { agents: [] })).not.toBeNull();
  });

  it('lists the agents present, in the forge order', () => {
    const { cursor, memory } = both(5);
    expect(cursor.agents()).toEqual(memory.agents());
    expect(cursor.agents().length).toBeGreaterThan(5);
    const order: Agent[] = cursor.agents();
    expect(order.indexOf('hephaestus')).toBe(0);
  });
});
