import { useEffect, useReducer, useState } from 'react';
import { useInput } from 'ink';
import { expandPress, keyPress } from '../keys.js';
import { feedbackReducer, type FeedbackOutcome, type FeedbackState } from './use-feedback-state.js';

/** The Likert prompt's input: keys go to the reducer; `onDone` fires once with the outcome. */
export function useFeedback(initial: FeedbackState, onDone: (outcome: FeedbackOutcome) => void, isActive = true): { state: FeedbackState; ready: boolean } {
  const [state, dispatch] = useReducer(feedbackReducer, initial);

  useInput(
    (input, key) => {
      for (const press of expandPress(keyPress(input, key))) dispatch({ type: 'key', press });
    },
    { isActive: isActive && state.outcome === null },
  );

  // Runs after useInput's effect: from here on keys reach the prompt (see useReplay).
  const [ready, setReady] = useState(false);
  useEffect(() => setReady(isActive), [isActive]);

  useEffect(() => {
    if (state.outcome) onDone(state.outcome);
    // Fires once per outcome; onDone is not a dependency (a new closure each render must not re-fire it).
  }, [state.outcome]);

  return { state, ready };
}
