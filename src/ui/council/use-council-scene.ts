import type { CouncilScene } from '../../federation/round/scenes.js';
import { useOutcomeKeys } from '../use-outcome-keys.js';
import {
  councilSceneReducer,
  initialCouncilSceneState,
  type CouncilSceneState,
  type SceneOutcome,
} from './use-council-scene-state.js';

/** Keys go to the reducer (COUNCIL_SCENE_KEYS); `onDone` fires once with how the scene ended. */
export function useCouncilScene(
  scenes: readonly CouncilScene[],
  onDone: (o: SceneOutcome) => void,
  isActive = true,
): { state: CouncilSceneState; ready: boolean } {
  return useOutcomeKeys(councilSceneReducer, scenes, initialCouncilSceneState, onDone, isActive);
}
