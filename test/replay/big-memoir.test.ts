import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendLines } from '../../src/memoir/file/append.js';
import { synthSessions } from '../../src/memoir/sample/synth.js';
import { PAGE_SIZE, StoryCursor } from '../../src/replay/cursor.js';
import { walkStory } from '../../src/replay/walk.js';
import { openIndex, type MemoirIndex } from '../../src/memoir-index/memoir-index.js';
import { StoryIndex } from '../../src/memoir-index/story-queries.js';
import { initialReplayState, replayFrame, replayReducer } from '../../src/ui/replay/use-replay-state.js';
import { removeDir, tempDir } from '../helpers/ctx.js';

/** A 100k-entry memoir through the replay cursor (slow: KOURAI_SLOW=1). Timings are in bench/replay.mjs. */
const N = 100_000;
let dir: string;
let index: MemoirIndex;
let memoir: string;

const slowOnly =
  'slow: runs with KOURAI_SLOW=1 (npm run test:slow); the default run checks bounded memory over 10k beats (bounded-memory.test.ts)';

describe('replay of a 100k-entry memoir', () => {
  beforeAll(() => {
    if (!process.env.KOURAI_SLOW) return;
    dir = tempDir('kourai-big-');
    memoir = join(dir, 'memoir.jsonl');
    let n = 0;
    const lines: string[] = [];
    outer: for (const s of synthSessions({ seed: 3, sessions: Number.MAX_SAFE_INTEGER, turns: 40 })) {
      for (const l of s.lines) {
        lines.push(l);
        if (++n >= N) break outer;
      }
    }
    appendLines(memoir, lines, { fsync: false });
    index = openIndex(join(dir, 'home'));
    index.update([memoir]);
  }, 120_000);
  afterAll(() => {
    index?.close();
    if (dir) removeDir(dir);
  });

  it('navigates end to end by keyset pages: first, last, positions, scene jumps', (ctx) => {
    ctx.skip(!process.env.KOURAI_SLOW, slowOnly);
    const nav = new StoryCursor(new StoryIndex(index, [index.file(memoir)?.id as number]));
    expect(nav.count({ agents: [] })).toBe(N);
    let st = initialReplayState(nav);
    expect(replayFrame(nav, st, 9).position).toBe(0);
    st = replayReducer(st, { type: 'last' }, nav);
    const last = replayFrame(nav, st, 9);
    expect(last.position).toBe(N - 1);
    expect(last.beat?.ref.line).toBe(N);
    for (let i = 0; i < 3 * PAGE_SIZE; i++) st = replayReducer(st, { type: 'prev' }, nav);
    expect(replayFrame(nav, st, 9).position).toBe(N - 1 - 3 * PAGE_SIZE);
    st = replayReducer(st, { type: 'first' }, nav);
    st = replayReducer(st, { type: 'nextScene' }, nav);
    expect(nav.beat(st.ref as NonNullable<typeof st.ref>).scene_id).not.toBe(
      nav.beat({ session: 0, line: 1 }).scene_id,
    );
  });

  it('streams every beat for --json with the final affinity equal to the index sums', (ctx) => {
    ctx.skip(!process.env.KOURAI_SLOW, slowOnly);
    const nav = new StoryCursor(new StoryIndex(index, [index.file(memoir)?.id as number]));
    let beats = 0;
    let end: Record<string, number> = {};
    for (const ev of walkStory(nav, { agents: [] })) {
      if (ev.type === 'beat') beats++;
      if (ev.type === 'session_end') end = ev.affinity as Record<string, number>;
    }
    expect(beats).toBe(N);
    const sums = index.db
      .prepare('SELECT agent, sum(affinity_delta) AS s FROM entries GROUP BY agent HAVING count(*) > 0')
      .all() as { agent: string; s: number }[];
    for (const r of sums) if (r.s !== 0) expect(end[r.agent]).toBeCloseTo(r.s, 6);
  });
});
