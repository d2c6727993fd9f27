import { useInput } from 'ink';
import { useEffect, useReducer, useState, type Reducer } from 'react';
import { expandPress, keyPress, type KeyPress } from './keys.js';

/**
 * A screen that ends in an outcome: keys go to the reducer until it has one, then `onDone` fires
 * once with it. `ready` turns true after useInput's effect, from when keys reach the screen.
 */
export function useOutcomeKeys<S extends { outcome: O | null }, A, O, I>(
  reducer: Reducer<S, A | { type: 'key'; press: KeyPress }>,
  init: I,
  initState: (init: I) => S,
  onDone: (outcome: O) => void,
  isActive: boolean,
): { state: S; ready: boolean } {
  const [state, dispatch] = useReducer(reducer, init, initState);
  useInput(
    (input, key) => {
      for (const press of expandPress(keyPress(input, key))) dispatch({ type: 'key', press });
    },
    { isActive: isActive && state.outcome === null },
  );
  const [ready, setReady] = useState(false);
  useEffect(() => setReady(isActive), [isActive]);
  useEffect(() => {
    if (state.outcome) onDone(state.outcome);
    // Fires once per outcome; onDone is not a dependency (a new closure each render must not re-fire it).
  }, [state.outcome]);
  return { state, ready };
}
