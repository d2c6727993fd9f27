import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanup, render } from 'ink-testing-library';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { palette } from '../../../src/output/theme.js';
import { StoryCursor } from '../../../src/replay/cursor.js';
import type { TextIndexBuilder } from '../../../src/memoir-index/indexed.js';
import { fullTextBuilder } from '../../../src/memoir-index/indexed.js';
import { openIndex, type MemoirIndex } from '../../../src/memoir-index/memoir-index.js';
import { StoryIndex } from '../../../src/memoir-index/story-queries.js';
import { ReplayApp } from '../../../src/ui/replay/replay-view.js';
import { initialReplayState, type ReplayState } from '../../../src/ui/replay/use-replay-state.js';
import { removeDir, tempDir } from '../../helpers/ctx.js';
import { frameWith, waitFor } from '../../helpers/ink-wait.js';
import { KEY } from '../../helpers/tty.js';
import { synthLines } from '../../helpers/synth-lines.js';

/**
 * The replay screen over a memoir whose full-text index a bulk load left unbuilt: the first search
 * builds it inside the screen with a progress gauge, then searches; Esc stops the build (the index
 * keeps none of it) and the screen stays; Ctrl-C during the build ends the screen, and once the
 * build has settled nothing of it is in the index. A real index on a real memoir (over 8 MiB).
 */
let dir: string;
let file: string;
beforeAll(() => {
  dir = tempDir();
  file = join(dir, 'memoir.jsonl');
  const lines = synthLines(9, 14_000); // over 8 MiB: a bulk load
  writeFileSync(file, `${lines.join('\n')}\n`);
});
afterAll(() => removeDir(dir));

const opened: MemoirIndex[] = [];
afterEach(() => {
  cleanup();
  for (const i of opened.splice(0)) i.close();
});

let n = 0;
/** A fresh home, bulk-loaded (no full-text rows); the builder's runs are gated by the test. */
function setup() {
  const index = openIndex(join(dir, `home${n++}`));
  opened.push(index);
  const [u] = index.update([file]);
  const fileIds = [u?.fileId as number];
  const real = fullTextBuilder(index, fileIds);
  if (!real) throw new Error('expected the full-text index to be unbuilt after a bulk load');
  // A run waits until the test opens the gate (or until it is aborted) before the real build
  // starts, so that keys can be typed while it "runs" without racing it. Progress is recorded.
  const progress: [number, number][] = [];
  let open = false;
  let waiting: (() => void) | undefined;
  const gated: TextIndexBuilder = {
    bytes: real.bytes,
    async build(onProgress, signal) {
      onProgress(0, real.bytes);
      await new Promise<void>((resolve) => {
        if (open) resolve();
        waiting = resolve;
        signal.addEventListener('abort', () => resolve(), { once: true });
      });
      return real.build((done, total) => {
        progress.push([done, total]);
        onProgress(done, total);
      }, signal);
    },
  };
  const release = (): void => {
    open = true;
    waiting?.();
  };
  const nav = new StoryCursor(new StoryIndex(index, fileIds));
  const done: { how: string; last: ReplayState }[] = [];
  const app = render(
    <ReplayApp
      nav={nav}
      initial={initialReplayState(nav, { needsTextIndex: true })}
      palette={palette(0)}
      size={{ columns: 120, rows: 34 }}
      onDone={(how, last) => done.push({ how, last })}
      textIndex={gated}
    />,
  );
  const fts = () => ({
    unbuilt: index.withoutFullText().length,
    rows: index.db.prepare('SELECT count(*) FROM entries_fts').pluck().get() as number,
  });
  return { ...app, index, real, progress, release, done, fts };
}

async function searchFor(app: ReturnType<typeof setup>, q: string): Promise<void> {
  await frameWith(app.lastFrame, '? help · q quit'); // keys are live
  app.stdin.write('/');
  await frameWith(app.lastFrame, 'search: ');
  app.stdin.write(q);
  await frameWith(app.lastFrame, `search: ${q}`);
  app.stdin.write(KEY.enter);
}

describe('replay screen: the first search builds the full-text index, with progress', () => {
  it('shows the gauge, then lands on the first match; progress reaches the total', async () => {
    const app = setup();
    await searchFor(app, 'naming');
    const gauge = await frameWith(app.lastFrame, /0\.0 MB of \d+ MB read; the search "naming" runs once it is built/);
    expect(gauge).toMatch(/building the full-text index ░+ 0% · Esc cancels/);
    app.release();
    const f = await frameWith(app.lastFrame, /"naming": match 1 of \d+/);
    expect(f).not.toContain('building the full-text index');
    expect(app.progress.length).toBeGreaterThan(1);
    expect(app.progress.at(-1)).toEqual([app.real.bytes, app.real.bytes]);
    expect(app.fts()).toEqual({ unbuilt: 0, rows: expect.any(Number) as number });
    expect(app.fts().rows).toBeGreaterThan(0);
    // Built: the next search needs no build.
    const runs = app.progress.length;
    app.stdin.write('/');
    await frameWith(app.lastFrame, 'search: ');
    app.stdin.write('plan');
    await frameWith(app.lastFrame, 'search: plan');
    app.stdin.write(KEY.enter);
    await frameWith(app.lastFrame, /"plan": match \d+ of \d+/);
    expect(app.progress.length).toBe(runs);
  });

  it('Esc stops the build: nothing written, the screen stays, and the next search builds it', async () => {
    const app = setup();
    await searchFor(app, 'naming');
    await frameWith(app.lastFrame, 'Esc cancels');
    app.stdin.write(KEY.escape); // the build then starts with its signal aborted: its first checkpoint stops it
    const f = await frameWith(
      app.lastFrame,
      'search cancelled: the full-text index was not built (nothing was written); / searches again',
    );
    expect(f).toContain('? help · q quit');
    expect(app.fts()).toEqual({ unbuilt: 1, rows: 0 });
    expect(app.done).toEqual([]);
    app.stdin.write('n'); // the same search again
    await frameWith(app.lastFrame, 'Esc cancels');
    app.release();
    await frameWith(app.lastFrame, /"naming": match 1 of \d+/);
    expect(app.fts().unbuilt).toBe(0);
  });

  it('Ctrl-C during the build ends the screen as a cancel; the build rolls back', async () => {
    const app = setup();
    await searchFor(app, 'naming');
    await frameWith(app.lastFrame, 'Esc cancels');
    app.stdin.write(KEY.ctrlC);
    await waitFor(() => app.done.length > 0, app.lastFrame, 'the screen to end');
    expect(app.done.map((d) => d.how)).toEqual(['cancel']);
    await app.real.settled();
    expect(app.fts()).toEqual({ unbuilt: 1, rows: 0 });
  });
});
