import { useInput } from 'ink';
import { useReducer } from 'react';
import type { Agent } from '../../memoir/agents.js';
import type { Stance } from '../../privacy/consent.js';
import { consentReducer, initialConsentState, type ConsentState } from './use-consent-state.js';

/**
 * Keys while choosing: ↑/↓ (k/j) move, space toggles, a allows all, n allows none, enter goes to
 * the summary, esc/q/ctrl-c cancels. On the summary: enter or y confirms, esc/b goes back.
 */
export function useConsent(stances: readonly Stance[], current: Readonly<Partial<Record<Agent, boolean>>>, opts: { isActive?: boolean } = {}): ConsentState {
  const [state, dispatch] = useReducer(consentReducer, undefined, () => initialConsentState(stances, current));
  // The handler does not read `state`: keys arriving before the next render still land in the
  // right step, because the reducer interprets them.
  useInput(
    (input, key) => {
      if (key.ctrl && input === 'c') dispatch({ type: 'cancel' });
      else if (key.upArrow || input === 'k') dispatch({ type: 'up' });
      else if (key.downArrow || input === 'j') dispatch({ type: 'down' });
      else if (input === ' ' || input === 'x') dispatch({ type: 'toggle' });
      else if (input === 'a') dispatch({ type: 'all', allowed: true });
      else if (input === 'n') dispatch({ type: 'all', allowed: false });
      else if (key.return) dispatch({ type: 'enter' });
      else if (input === 'y') dispatch({ type: 'confirm' });
      else if (key.escape) dispatch({ type: 'escape' });
      else if (input === 'b') dispatch({ type: 'back' });
      else if (input === 'q') dispatch({ type: 'cancel' });
    },
    { isActive: opts.isActive ?? true },
  );
  return state;
}
