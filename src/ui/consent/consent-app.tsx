import { useApp } from 'ink';
import { useEffect } from 'react';
import type { Agent } from '../../memoir/agents.js';
import type { Stance } from '../../privacy/consent.js';
import { decisionOf } from './use-consent-state.js';
import { useConsent } from './use-consent.js';
import { ConsentView } from './consent-view.js';

export type ConsentOutcome = { confirmed: true; decision: { agent: Agent; allowed: boolean }[] } | { confirmed: false };

/** The scene wired to its keys; calls onDone once, with the decision or a cancellation. */
export function ConsentApp(p: { stances: readonly Stance[]; current: Readonly<Partial<Record<Agent, boolean>>>; onDone: (o: ConsentOutcome) => void }): React.JSX.Element {
  const state = useConsent(p.stances, p.current);
  const { exit } = useApp();
  const { onDone } = p;
  useEffect(() => {
    if (state.step === 'confirmed') {
      onDone({ confirmed: true, decision: decisionOf(state) });
      exit();
    } else if (state.step === 'cancelled') {
      onDone({ confirmed: false });
      exit();
    }
  }, [state, onDone, exit]);
  return <ConsentView state={state} />;
}
