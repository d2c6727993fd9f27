import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import { sceneOf } from '../../../src/federation/round/scenes.js';
import { CouncilSceneApp } from '../../../src/ui/council/council-scene-view.js';
import {
  councilSceneReducer,
  initialCouncilSceneState,
  type SceneOutcome,
} from '../../../src/ui/council/use-council-scene-state.js';
import { palette } from '../../../src/output/theme.js';
import { details } from '../../federation/council-event-fixture.js';
import { KEY, listening, press, waitFor } from '../../helpers/ink-wait.js';

const scenes = [
  sceneOf(details()),
  sceneOf(details({ beat: 'stoa_falls', exiles: [{ forge: 'sparta', round: 3, you: false }] })),
];

describe('the Council of Sisters screen (Ink)', () => {
  it('steps line by line through both scenes and ends watched', async () => {
    let done: SceneOutcome | null = null;
    const app = render(<CouncilSceneApp scenes={scenes} palette={palette(0)} onDone={(o) => (done = o)} />);
    await waitFor(
      () => listening(app.stdin) && (app.lastFrame() ?? '').includes('The Council of Sisters — round 3'),
      app.lastFrame,
    );
    expect(app.lastFrame()).toMatch(/1\/2 · line 1\/\d+/);
    expect(app.lastFrame()).toMatch(/Cupid does not attend/);
    await press(app.stdin, KEY.enter);
    await waitFor(() => /line 2\//.test(app.lastFrame() ?? ''), app.lastFrame);
    expect(app.lastFrame()).toMatch(/Hephaestus\s+2 of us spoke for this forge: techne, hephaestus/);
    const total = scenes[0]!.lines.length + scenes[1]!.lines.length;
    for (let i = 2; i <= total; i++) await press(app.stdin, KEY.space);
    await waitFor(() => done !== null, app.lastFrame, 'the end of the scenes');
    expect(done).toBe('watched');
    app.unmount();
  });

  it('s skips the rest', async () => {
    let done: SceneOutcome | null = null;
    const app = render(<CouncilSceneApp scenes={scenes} palette={palette(0)} onDone={(o) => (done = o)} />);
    await waitFor(() => listening(app.stdin), app.lastFrame);
    await press(app.stdin, 's');
    await waitFor(() => done !== null, app.lastFrame);
    expect(done).toBe('skipped');
    app.unmount();
  });

  it('reducer: back and forth across scenes, nothing after the end', () => {
    let s = initialCouncilSceneState(scenes);
    s = councilSceneReducer(s, { type: 'prev' });
    expect([s.scene, s.shown]).toEqual([0, 1]);
    for (let i = 1; i < scenes[0]!.lines.length; i++) s = councilSceneReducer(s, { type: 'next' });
    s = councilSceneReducer(s, { type: 'next' });
    expect([s.scene, s.shown]).toEqual([1, 1]);
    s = councilSceneReducer(s, { type: 'prev' });
    expect([s.scene, s.shown]).toEqual([0, scenes[0]!.lines.length]);
    s = councilSceneReducer(s, { type: 'skip' });
    expect(councilSceneReducer(s, { type: 'next' })).toBe(s);
    expect(initialCouncilSceneState([]).outcome).toBe('watched');
  });
});
