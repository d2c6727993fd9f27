// Replay, affinity and feedback-gate figures on a 100k-entry memoir (suite `replay`: add it to
// the suites in bench/run.mjs; alone: `npm run build && node -e "import('./bench/replay.mjs').then((m) => m.run(console.log))"`).
import { join } from 'node:path';
import { cleanup, tempDir } from './lib.mjs';
import { AffinityAccumulator } from '../dist/affinity/affinity.js';
import { DEFAULT_POLICY } from '../dist/affinity/gating.js';
import { feedbackHistory } from '../dist/feedback/history.js';
import { appendLines } from '../dist/memoir/file/append.js';
import { synthSessions } from '../dist/memoir/sample/synth.js';
import { StoryCursor } from '../dist/replay/cursor.js';
import { walkStory } from '../dist/replay/walk.js';
import { storyRecord } from '../dist/replay/records.js';
import { openIndex } from '../dist/memoir-index/memoir-index.js';
import { StoryIndex } from '../dist/memoir-index/story-queries.js';
import { initialReplayState, replayFrame, replayReducer } from '../dist/ui/replay/use-replay-state.js';

const ENTRIES = Number(process.env.KOURAI_BENCH_ENTRIES ?? 100_000);

export async function run(report) {
  const dir = tempDir('kourai-bench-replay-');
  try {
    const memoir = join(dir, 'memoir.jsonl');
    let n = 0;
    let batch = [];
    outer: for (const s of synthSessions({ seed: 7, sessions: Number.MAX_SAFE_INTEGER, turns: 40 })) {
      for (const line of s.lines) {
        batch.push(line);
        if (++n >= ENTRIES) break outer;
      }
      if (batch.length > 20_000) {
        appendLines(memoir, batch, { fsync: false });
        batch = [];
      }
    }
    appendLines(memoir, batch, { fsync: false });
    const index = openIndex(join(dir, 'home'));
    index.update([memoir]);
    const fileId = index.file(memoir).id;
    const time = (f) => {
      const t = performance.now();
      const r = f();
      return [performance.now() - t, r];
    };

    const [open, nav] = time(() => new StoryCursor(new StoryIndex(index, [fileId])));
    let st = initialReplayState(nav);
    const [first] = time(() => replayFrame(nav, st, 9));
    report('replay: open + first frame', Math.round(open + first), 'ms', `${ENTRIES} entries`);
    const rssBefore = process.memoryUsage().rss;
    const [steps] = time(() => {
      for (let i = 0; i < 2000; i++) {
        st = replayReducer(st, { type: 'next' }, nav);
        replayFrame(nav, st, 9);
      }
    });
    report('replay: next beat + frame', +(steps / 2000).toFixed(3), 'ms/beat', 'forward, 2000 beats');
    st = replayReducer(st, { type: 'last' }, nav);
    const [last] = time(() => replayFrame(nav, st, 9));
    report('replay: jump to last beat + frame', +last.toFixed(2), 'ms');
    const [back] = time(() => {
      for (let i = 0; i < 500; i++) {
        st = replayReducer(st, { type: 'prev' }, nav);
        replayFrame(nav, st, 9);
      }
    });
    report('replay: previous beat + frame', +(back / 500).toFixed(3), 'ms/beat', 'backward, 500 beats');
    const [scenes] = time(() => {
      for (let i = 0; i < 200; i++) {
        st = replayReducer(st, { type: 'prevScene' }, nav);
        replayFrame(nav, st, 9);
      }
    });
    report('replay: previous scene + frame', +(scenes / 200).toFixed(3), 'ms/scene');
    const [search] = time(() => replayReducer({ ...st, overlay: 'search', input: 'naming' }, { type: 'submit' }, nav));
    report('replay: search (FTS, next match)', +search.toFixed(2), 'ms');
    const [filter] = time(() => replayFrame(nav, replayReducer(st, { type: 'setAgent', agent: 'aletheia' }, nav), 9));
    report('replay: agent filter + frame', +filter.toFixed(2), 'ms');
    report(
      'replay: memory growth while browsing',
      Math.round((process.memoryUsage().rss - rssBefore) / 1048576),
      'MiB',
      'windowed: bounded page and beat caches',
    );

    const [walk, count] = time(() => {
      let k = 0;
      for (const ev of walkStory(nav, { agents: [] })) {
        JSON.stringify(storyRecord(ev));
        k++;
      }
      return k;
    });
    report('replay --json: records', Math.round(count / (walk / 1000)), 'records/s', `${count} records`);

    const q = new StoryIndex(index, [fileId]);
    const [aff] = time(() => {
      const acc = new AffinityAccumulator();
      for (const c of q.affinityChanges())
        acc.add({
          agent: c.agent,
          delta: c.affinity_delta,
          entry_id: c.entry_id,
          scene_id: c.scene_id,
          recorded_at: c.recorded_at,
        });
      return acc.result();
    });
    report('affinity: whole memoir', Math.round(aff), 'ms');
    const [gate] = time(() => feedbackHistory(q, 'techne', DEFAULT_POLICY, undefined));
    report('feedback: gate (affinity + cooldown walk)', Math.round(gate), 'ms');
    index.close();
  } finally {
    cleanup(dir);
  }
}
