import { useInput } from 'ink';
import { useEffect, useReducer, useState } from 'react';
import type { CouncilScene } from '../../federation/round/scenes.js';
import { expandPress, keyPress } from '../keys.js';
import { councilSceneReducer, initialCouncilSceneState, type CouncilSceneState, type SceneOutcome } from './use-council-scene-state.js';

/** Keys go to the reducer (COUNCIL_SCENE_KEYS); `onDone` fires once with how the scene ended. */
export function useCouncilScene(scenes: readonly CouncilScene[], onDone: (o: SceneOutcome) => void, isActive = true): { state: CouncilSceneState; ready: boolean } {
  const [state, dispatch] = useReducer(councilSceneReducer, scenes, initialCouncilSceneState);
  useInput(
    (input, key) => {
      for (const press of expandPress(keyPress(input, key))) dispatch({ type: 'key', press });
    },
    { isActive: isActive && state.outcome === null },
  );
  // Runs after useInput's effect: from here on keys reach the scene.
  const [ready, setReady] = useState(false);
  useEffect(() => setReady(isActive), [isActive]);
  useEffect(() => {
    if (state.outcome) onDone(state.outcome);
    // Fires once per outcome; onDone is not a dependency.
  }, [state.outcome]);
  return { state, ready };
}
