import { useOutcomeKeys } from '../use-outcome-keys.js';
import { feedbackReducer, type FeedbackOutcome, type FeedbackState } from './use-feedback-state.js';

/** The Likert prompt's input: keys go to the reducer; `onDone` fires once with the outcome. */
export function useFeedback(
  initial: FeedbackState,
  onDone: (outcome: FeedbackOutcome) => void,
  isActive = true,
): { state: FeedbackState; ready: boolean } {
  return useOutcomeKeys(feedbackReducer, initial, (s: FeedbackState) => s, onDone, isActive);
}
