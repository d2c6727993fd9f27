import { cleanup, render } from 'ink-testing-library';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { palette } from '../../../src/output/theme.js';
import { ReplayApp } from '../../../src/ui/replay/replay-view.js';
import { initialReplayState, type ReplayState } from '../../../src/ui/replay/use-replay-state.js';
import { smallStory } from '../../helpers/story.js';
import { frameWith, waitFor } from '../../helpers/ink-wait.js';
import { KEY } from '../../helpers/tty.js';

afterEach(() => {
  cleanup();
  vi.useRealTimers();
});

function mount(opts: { agents?: ('techne' | 'metis')[] } = {}) {
  const nav = smallStory();
  const done: { how: string; last: ReplayState }[] = [];
  const app = render(
    <ReplayApp
      nav={nav}
      initial={initialReplayState(nav, opts)}
      palette={palette(0)}
      size={{ columns: 100, rows: 30 }}
      onDone={(how, last) => done.push({ how, last })}
    />,
  );
  return { ...app, nav, done };
}

describe('ReplayApp (ink-testing-library)', () => {
  it('shows the first beat with its session, scene and position', async () => {
    const { lastFrame } = mount();
    const f = await frameWith(lastFrame, '? help · q quit'); // keys are live
    expect(f).toContain('session session- (1/2)');
    expect(f).toContain('scene s1.turn-0');
    expect(f).toContain('▸ hephaestus');
    expect(f).toContain('routes to metis');
    expect(f).toContain('1/8');
    expect(f).toContain('paused 1 beat/s');
  });

  it('steps with → and l, and shows the response and the affinity change', async () => {
    const { lastFrame, stdin } = mount();
    await frameWith(lastFrame, '? help · q quit'); // keys are live
    stdin.write(KEY.right);
    const f = await frameWith(lastFrame, '2/8');
    expect(f).toContain('metis · proposal lands');
    expect(f).toContain('player   accepted · felt right');
    expect(f).toContain('affinity +0.02 → metis 0.02 stranger');
    expect(f).toContain('affinity  metis 0.02');
  });

  it('marks a silent interrupt as not shown to the player', async () => {
    const { lastFrame, stdin } = mount();
    await frameWith(lastFrame, '? help · q quit'); // keys are live
    stdin.write('j'); // next scene: s1.turn-1
    await frameWith(lastFrame, 'scene s1.turn-1');
    stdin.write('l');
    const f = await frameWith(lastFrame, '5/8');
    expect(f).toContain('↯ puck broke in on techne · gossip · silent: not shown to the player');
    expect(f).toContain('↯ interrupts techne (∅ silent)');
  });

  it('searches: / naming Enter lands on the match and says where', async () => {
    const { lastFrame, stdin } = mount();
    await frameWith(lastFrame, '? help · q quit'); // keys are live
    stdin.write('/');
    await frameWith(lastFrame, 'search: ');
    stdin.write('naming');
    await frameWith(lastFrame, 'search: naming');
    stdin.write(KEY.enter);
    const f = await frameWith(lastFrame, '"naming": match 1 of 1');
    expect(f).toContain('techne · proposal refused');
  });

  it('filters by agent with a, shows help with ?, and quits with q', async () => {
    const { lastFrame, stdin, done } = mount();
    await frameWith(lastFrame, '? help · q quit'); // keys are live
    stdin.write('a');
    await frameWith(lastFrame, 'showing hephaestus only (1 beat)');
    stdin.write('a');
    const f = await frameWith(lastFrame, 'showing metis only (2 beats)');
    expect(f).toContain('1/2');
    stdin.write('?');
    const h = await frameWith(lastFrame, 'keys');
    expect(h).toContain('jump to an entry id');
    expect(h).toContain('Ctrl-C');
    stdin.write('?');
    await frameWith(lastFrame, 'metis · proposal lands');
    stdin.write('q');
    await waitFor(() => done.length > 0, lastFrame, 'the screen to end');
    expect(done.map((d) => d.how)).toEqual(['quit']);
    expect(done[0]?.last.filter.agents).toEqual(['metis']);
  });

  it('plays on its own when Space is pressed: one beat per tick of its clock, at the chosen speed', async () => {
    // The playback timer is the subject, so the test owns the clock: only setInterval is faked
    // (Ink's own work and these waits use setTimeout/setImmediate and run for real).
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { lastFrame, stdin } = mount();
    await frameWith(lastFrame, '? help · q quit'); // keys are live
    stdin.write('+');
    stdin.write('+');
    stdin.write('+');
    await frameWith(lastFrame, 'speed 8 beats/s');
    stdin.write(' ');
    await frameWith(lastFrame, '▶ playing 8 beats/s');
    await waitFor(() => vi.getTimerCount() > 0, lastFrame, 'the playback timer to start');
    expect(lastFrame()).toContain('1/8');
    vi.advanceTimersByTime(124); // not yet a beat at 8 beats/s
    expect(lastFrame()).toContain('1/8');
    for (let beat = 2; beat <= 8; beat++) {
      vi.advanceTimersByTime(1); // 125 ms since the last beat: the next one
      await frameWith(lastFrame, `${beat}/8`);
      vi.advanceTimersByTime(124);
      expect(lastFrame()).toContain(`${beat}/8`);
    }
    vi.advanceTimersByTime(1);
    const f = await frameWith(lastFrame, 'the end of the story');
    expect(f).toContain('8/8');
    expect(f).toContain('‖ paused');
  });

  it('Ctrl-C ends the screen as a cancel', async () => {
    const { lastFrame, stdin, done } = mount();
    await frameWith(lastFrame, '? help · q quit'); // keys are live
    stdin.write(KEY.ctrlC);
    await waitFor(() => done.length > 0, lastFrame, 'the screen to end');
    expect(done.map((d) => d.how)).toEqual(['cancel']);
  });
});

describe('ReplayView', () => {
  it('shows key hints only once keys are live', async () => {
    const { ReplayView } = await import('../../../src/ui/replay/replay-view.js');
    const { replayFrame } = await import('../../../src/ui/replay/use-replay-state.js');
    const nav = smallStory();
    const st = initialReplayState(nav);
    const props = { frame: replayFrame(nav, st, 5), state: st, width: 100, height: 30, palette: palette(0) };
    const waiting = render(<ReplayView {...props} ready={false} />);
    expect(waiting.lastFrame()).not.toContain('? help');
    const live = render(<ReplayView {...props} ready />);
    expect(live.lastFrame()).toContain('? help · q quit');
  });
});
