import { join } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendLines } from '../../src/memoir/file/append.js';
import { synthSessions } from '../../src/memoir/sample/synth.js';
import { StoryCursor } from '../../src/replay/cursor.js';
import { openIndex, type MemoirIndex } from '../../src/memoir-index/memoir-index.js';
import { StoryIndex } from '../../src/memoir-index/story-queries.js';
import { initialReplayState, replayFrame, replayReducer } from '../../src/ui/replay/use-replay-state.js';
import { removeDir, tempDir } from '../helpers/ctx.js';

/**
 * The replay screen's memory claim in the default run (the 100k-entry walk is KOURAI_SLOW's):
 * stepping through a 10k-entry memoir, as the screen does (a frame every few beats), the live heap
 * after a full GC does not grow with the beats visited. The cursor keeps 8 pages and 256 beats;
 * a cache that never evicts grows by 1.5–2.5 MB over these 10k beats. Memory, not time, is measured.
 */
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const liveHeap = (): number => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};

const N = 10_500;
let dir: string;
let index: MemoirIndex;
let memoir: string;

beforeAll(() => {
  dir = tempDir('kourai-replay-mem-');
  memoir = join(dir, 'memoir.jsonl');
  const lines: string[] = [];
  outer: for (const s of synthSessions({ seed: 3, sessions: Number.MAX_SAFE_INTEGER, turns: 40 })) {
    for (const l of s.lines) {
      lines.push(l);
      if (lines.length >= N) break outer;
    }
  }
  appendLines(memoir, lines, { fsync: false });
  index = openIndex(join(dir, 'home'));
  index.update([memoir]);
}, 120_000);
afterAll(() => {
  index?.close();
  removeDir(dir);
});

describe('replay in bounded memory (10k beats)', () => {
  it('the live heap does not grow with the beats visited', () => {
    const nav = new StoryCursor(new StoryIndex(index, [index.file(memoir)?.id as number]));
    let st = initialReplayState(nav);
    const samples: number[] = []; // live heap after every 1,000 beats
    for (let beat = 1; beat <= 10_000; beat++) {
      st = replayReducer(st, { type: 'next' }, nav);
      if (beat % 10 === 0) replayFrame(nav, st, 9);
      if (beat % 1000 === 0) samples.push(liveHeap());
    }
    expect(replayFrame(nav, st, 9).position).toBe(10_000); // it really walked 10k beats
    // least-squares slope of the heap over the samples, in bytes per 1,000 beats
    const n = samples.length;
    const mx = (n - 1) / 2;
    const my = samples.reduce((a, b) => a + b, 0) / n;
    const slope =
      samples.reduce((a, y, x) => a + (x - mx) * (y - my), 0) / samples.reduce((a, _, x) => a + (x - mx) ** 2, 0);
    const mb = (b: number): string => `${(b / 1e6).toFixed(2)} MB`;
    expect(slope, `heap after each 1k beats: ${samples.map(mb).join(', ')}`).toBeLessThan(80_000);
  });
});
