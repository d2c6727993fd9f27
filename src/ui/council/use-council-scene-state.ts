/**
 * The Council of Sisters / Stoa Falls screen's state: which scene, how many of its lines are
 * shown, and how it ended (watched to the end, skipped, or cancelled). A pure reducer.
 */
import type { CouncilScene } from '../../federation/round/scenes.js';
import { bound, COUNCIL_SCENE_KEYS, type KeyPress } from '../keys.js';

export type SceneOutcome = 'watched' | 'skipped' | 'cancelled';

export interface CouncilSceneState {
  scenes: readonly CouncilScene[];
  scene: number;
  /** Lines of the current scene shown (1 = the first). */
  shown: number;
  outcome: SceneOutcome | null;
}

export type CouncilSceneAction =
  { type: 'key'; press: KeyPress } | { type: 'next' } | { type: 'prev' } | { type: 'skip' } | { type: 'cancel' };

export function initialCouncilSceneState(scenes: readonly CouncilScene[]): CouncilSceneState {
  return { scenes, scene: 0, shown: scenes.length ? 1 : 0, outcome: scenes.length ? null : 'watched' };
}

export function councilSceneReducer(s: CouncilSceneState, a: CouncilSceneAction): CouncilSceneState {
  if (s.outcome) return s;
  if (a.type === 'key') {
    const b = COUNCIL_SCENE_KEYS.find((x) => bound(x.keys, a.press));
    return b ? councilSceneReducer(s, { type: b.action }) : s;
  }
  const cur = s.scenes[s.scene];
  switch (a.type) {
    case 'next':
      if (cur && s.shown < cur.lines.length) return { ...s, shown: s.shown + 1 };
      if (s.scene + 1 < s.scenes.length) return { ...s, scene: s.scene + 1, shown: 1 };
      return { ...s, outcome: 'watched' };
    case 'prev':
      if (s.shown > 1) return { ...s, shown: s.shown - 1 };
      if (s.scene > 0) return { ...s, scene: s.scene - 1, shown: s.scenes[s.scene - 1]?.lines.length ?? 1 };
      return s;
    case 'skip':
      return { ...s, outcome: 'skipped' };
    case 'cancel':
      return { ...s, outcome: 'cancelled' };
  }
}
