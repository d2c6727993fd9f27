import { useInput } from 'ink';
import { useReducer } from 'react';
import type { Agent } from '../../memoir/agents.js';
import type { Stance } from '../../privacy/consent.js';
import { consentReducer, initialConsentState, type ConsentState } from './use-consent-state.js';

/**
 * Keys while choosing: ↑/↓ (k/j) move, space toggles, a allows all, n allows none, enter goes to
 * the summary, esc/ctrl-c cancels. On the summary: enter or y confirms, esc/b goes back.
 */
export function useConsent(stances: readonly Stance[], current: Readonly<Partial<Record<Agent, boolean>>>, opts: { isActive?: boolean } = {}): ConsentState {
  const [state, dispatch] = useReducer(consentReducer, undefined, () => initialConsentState(stances, current));
  useInput(
    (input, key) => {
      if (key.ctrl && input === 'c') return dispatch({ type: 'cancel' });
      if (state.step === 'choose') {
        if (key.upArrow || input === 'k') dispatch({ type: 'up' });
        else if (key.downArrow || input === 'j') dispatch({ type: 'down' });
        else if (input === ' ' || input === 'x') dispatch({ type: 'toggle' });
        else if (input === 'a') dispatch({ type: 'all', allowed: true });
        else if (input === 'n') dispatch({ type: 'all', allowed: false });
        else if (key.return) dispatch({ type: 'next' });
        else if (key.escape || input === 'q') dispatch({ type: 'cancel' });
      } else if (state.step === 'confirm') {
        if (key.return || input === 'y') dispatch({ type: 'confirm' });
        else if (key.escape || input === 'b' || input === 'n') dispatch({ type: 'back' });
      }
    },
    { isActive: opts.isActive ?? true },
  );
  return state;
}
