import { useInput } from 'ink';
import { useReducer } from 'react';
import type { Agent } from '../../memoir/format/agents.js';
import type { Stance } from '../../privacy/consent.js';
import { expandPress, keyPress } from '../keys.js';
import { consentReducer, initialConsentState, type ConsentState } from './use-consent-state.js';

/**
 * The scene's input: keys (CONSENT_KEYS) go to the reducer, which interprets them against the
 * state at the moment they apply, so keys arriving before the next render land in the right step.
 */
export function useConsent(
  stances: readonly Stance[],
  current: Readonly<Partial<Record<Agent, boolean>>>,
  opts: { isActive?: boolean } = {},
): ConsentState {
  const [state, dispatch] = useReducer(consentReducer, undefined, () => initialConsentState(stances, current));
  useInput(
    (input, key) => {
      for (const press of expandPress(keyPress(input, key))) dispatch({ type: 'key', press });
    },
    { isActive: opts.isActive ?? true },
  );
  return state;
}
