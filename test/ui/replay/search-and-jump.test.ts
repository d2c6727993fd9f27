import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agent } from '../../../src/memoir/format/agents.js';
import { appendLines, prepareEntries } from '../../../src/memoir/file/append.js';
import { ulidGenerator } from '../../../src/memoir/format/entry-id.js';
import { StoryCursor } from '../../../src/replay/cursor.js';
import { MemoryStory } from '../../replay/memory-story.js';
import { NO_FILTER, type BeatRef, type StoryFilter, type StoryNav } from '../../../src/replay/story.js';
import { openIndex, type MemoirIndex } from '../../../src/memoir-index/memoir-index.js';
import { StoryIndex } from '../../../src/memoir-index/story-queries.js';
import {
  initialReplayState,
  replayReducer,
  type ReplayAction,
  type ReplayState,
} from '../../../src/ui/replay/use-replay-state.js';
import { removeDir, tempDir } from '../../helpers/ctx.js';
import { readEntries, sampleForge } from '../../helpers/forge.js';
import { entry, resetIds, smallStory } from '../../helpers/story.js';

/**
 * The replay screen's search says which match it is on ("match k of m") and names the agent
 * filter when it hides every match; jumping to (or starting at) a superseded id lands on its
 * newest revision, in the view, without a phantom beat or a false "filter cleared".
 */
function run(nav: StoryNav, s: ReplayState, ...actions: ReplayAction[]): ReplayState {
  return actions.reduce<ReplayState>((st, a) => replayReducer(st, a, nav), s);
}
const search = (q: string): ReplayAction[] => [
  { type: 'openSearch' },
  { type: 'typeText', text: q },
  { type: 'submit' },
];
const jump = (id: string): ReplayAction[] => [{ type: 'openJump' }, { type: 'typeText', text: id }, { type: 'submit' }];

describe('replay search', () => {
  it('says "match k of m" and counts through the matches, wrapping at the end', () => {
    const nav = smallStory();
    const m = nav.searchCount('proposal', NO_FILTER);
    expect(m).toBe(4);
    let s = run(nav, initialReplayState(nav), ...search('proposal'));
    expect(s.message?.text).toBe('"proposal": match 1 of 4');
    for (let k = 2; k <= 4; k++) {
      s = run(nav, s, { type: 'searchNext' });
      expect(s.message?.text).toBe(`"proposal": match ${k} of 4`);
    }
    s = run(nav, s, { type: 'searchNext' });
    expect(s.message?.text).toBe('"proposal": match 1 of 4 (wrapped)');
    s = run(nav, s, { type: 'searchPrev' });
    expect(s.message?.text).toBe('"proposal": match 4 of 4 (wrapped)');
  });

  it('counts within the agent filter', () => {
    const nav = smallStory();
    // The view starts on techne's first beat, itself a match: the search goes on to the next.
    const s = run(nav, initialReplayState(nav, { agents: ['techne'] }), ...search('proposal'));
    expect(s.message?.text).toBe('"proposal": match 2 of 2');
  });

  it('a search the filter hides names the filter and how many matches every agent has', () => {
    const nav = smallStory();
    const s = run(nav, initialReplayState(nav, { agents: ['cupid'] }), ...search('proposal'));
    expect(s.message).toEqual({
      text: 'no match for "proposal" among cupid\'s beats; 4 matches with every agent (a changes the filter)',
      tone: 'warn',
    });
    const none = run(nav, initialReplayState(nav, { agents: ['cupid'] }), ...search('zebrafish'));
    expect(none.message?.text).toBe('no match for "zebrafish" (the filter shows cupid only)');
    expect(run(nav, initialReplayState(nav), ...search('zebrafish')).message?.text).toBe('no match for "zebrafish"');
  });
});

describe('superseded ids: jump and --at land on the newest revision', () => {
  function revisedStory(): { nav: MemoryStory; original: string; revision: string; head: string } {
    resetIds();
    const original = entry({
      scene_id: 's1.turn-0',
      agent: 'techne',
      narrative_beat: 'techne_proposal_lands',
      agent_proposed: 'first text',
      affinity_delta: 0.02,
    });
    const revision = entry({
      scene_id: 's1.turn-0',
      agent: 'techne',
      narrative_beat: 'techne_proposal_lands',
      agent_proposed: 'second text',
      affinity_delta: 0.02,
      supersedes: original.entry_id,
    });
    const again = entry({
      scene_id: 's1.turn-0',
      agent: 'techne',
      narrative_beat: 'techne_proposal_lands',
      agent_proposed: 'third text',
      affinity_delta: 0.02,
      supersedes: revision.entry_id,
    });
    const other = entry({
      scene_id: 's1.turn-1',
      agent: 'metis',
      narrative_beat: 'metis_proposal_lands',
      agent_proposed: 'plan',
    });
    return {
      nav: new MemoryStory([{ session: 'one', entries: [original, other, revision, again] }]),
      original: original.entry_id,
      revision: revision.entry_id,
      head: again.entry_id,
    };
  }

  it('in the reference story', () => {
    const { nav, original, revision, head } = revisedStory();
    for (const old of [original, revision]) {
      for (const agents of [[], ['techne']] as const) {
        const s = run(nav, initialReplayState(nav, { agents: [...agents] }), ...jump(old));
        expect(s.ref && nav.beat(s.ref).entry_id).toBe(head);
        expect(s.message?.text).toBe(`jumped to ${head}`);
        expect(s.filter.agents).toEqual([...agents]);
        const at = initialReplayState(nav, { agents: [...agents], at: old });
        expect(at.ref && nav.beat(at.ref).entry_id).toBe(head);
        expect(at.message).toBeNull();
      }
    }
  });
});

describe('the cursor over the index agrees', () => {
  let home: string;
  let index: MemoirIndex;
  let cursor: StoryCursor;
  let memory: MemoryStory;
  let superseded: string;
  let head: string;

  beforeAll(async () => {
    home = tempDir('kourai-search-');
    const memoirs = await sampleForge(home, { sessions: 3, turns: 8, seed: 5 });
    const first = readEntries(memoirs[0] as string);
    const target = first.find((e) => e.agent === 'kallos' && e.source === 'specialist_proposed');
    if (!target) throw new Error('fixture: no kallos proposal');
    superseded = target.entry_id;
    const ids = ulidGenerator(
      () => Date.UTC(2026, 10, 1),
      (n) => new Uint8Array(n).fill(5),
    );
    const [a] = prepareEntries(
      [
        {
          value: {
            ...target,
            entry_id: undefined,
            recorded_at: undefined,
            agent_proposed: 'naming fixed once',
            supersedes: superseded,
            revision_reason: 'a',
          },
          where: 't',
        },
      ],
      ids,
      () => new Date('2026-11-01T00:00:00Z'),
    );
    const [b] = prepareEntries(
      [
        {
          value: {
            ...target,
            entry_id: undefined,
            recorded_at: undefined,
            agent_proposed: 'naming fixed twice',
            supersedes: a?.entry.entry_id,
            revision_reason: 'b',
          },
          where: 't',
        },
      ],
      ids,
      () => new Date('2026-11-01T00:00:01Z'),
    );
    head = b?.entry.entry_id as string;
    appendLines(memoirs[0] as string, [a?.line as string, b?.line as string]);
    index = openIndex(home);
    index.update(memoirs);
    cursor = new StoryCursor(
      new StoryIndex(
        index,
        memoirs.map((p) => index.file(p)?.id as number),
      ),
      { pageSize: 7 },
    );
    memory = new MemoryStory(
      cursor.sessions.map((s) => ({ session: s.session, path: s.path, entries: readEntries(s.path) })),
    );
  });
  afterAll(() => {
    index.close();
    removeDir(home);
  });

  it.each([
    ['naming', NO_FILTER],
    ['naming', { agents: ['kallos'] }],
    ['proposal lands', { agents: ['techne', 'metis'] }],
  ] as [string, StoryFilter][])('"%s" with %j: the same counts and ranks as the reference', (q, f) => {
    expect(cursor.searchCount(q, f)).toBe(memory.searchCount(q, f));
    let r: BeatRef | null = cursor.search(q, null, 1, f);
    let k = 0;
    while (r) {
      k++;
      expect(cursor.searchRank(r, q, f)).toBe(k);
      expect(memory.searchRank(r, q, f)).toBe(k);
      r = cursor.search(q, r, 1, f);
    }
    expect(k).toBe(cursor.searchCount(q, f));
  });

  it('a jump to the superseded id, with and without the agent filter, shows the newest revision', () => {
    for (const agents of [[], ['kallos']] as Agent[][]) {
      const s = run(cursor, initialReplayState(cursor, { agents }), ...jump(superseded));
      expect(s.ref && cursor.beat(s.ref).entry_id).toBe(head);
      expect(s.message?.text).toBe(`jumped to ${head}`);
      const at = initialReplayState(cursor, { agents, at: superseded });
      expect(at.ref && cursor.beat(at.ref).entry_id).toBe(head);
      expect(at.message).toBeNull();
    }
  });
});
