import { useEffect } from 'react';
import type { Agent } from '../../memoir/format/agents.js';
import type { Palette } from '../../output/theme.js';
import type { Stance } from '../../privacy/consent.js';
import { ScreenFrame } from '../screen-frame.js';
import { MIN_SIZE, type ScreenSize } from '../terminal.js';
import { useTerminalSize } from '../use-terminal-size.js';
import { ConsentView } from './consent-view.js';
import { decisionOf } from './use-consent-state.js';
import { useConsent } from './use-consent.js';

/** confirmed: the decision to store; left: q/Esc, nothing changes (exit 0); cancelled: Ctrl-C (exit 130). */
export type ConsentOutcome =
  { confirmed: true; decision: { agent: Agent; allowed: boolean }[] } | { confirmed: false; how: 'left' | 'cancelled' };

/** The scene wired to its keys; calls onDone once, with the decision, a leave or a cancellation. */
export function ConsentApp(p: {
  stances: readonly Stance[];
  current: Readonly<Partial<Record<Agent, boolean>>>;
  palette: Palette;
  onDone: (o: ConsentOutcome) => void;
  size?: ScreenSize;
}): React.JSX.Element {
  const size = useTerminalSize(p.size ?? { columns: 100, rows: 30 });
  const state = useConsent(p.stances, p.current);
  useEffect(() => {
    if (state.step === 'confirmed') p.onDone({ confirmed: true, decision: decisionOf(state) });
    else if (state.step === 'left' || state.step === 'cancelled') p.onDone({ confirmed: false, how: state.step });
    // Fires once when the scene ends; onDone is not a dependency (a new closure must not re-fire it).
  }, [state.step]);
  return (
    <ScreenFrame size={size} min={MIN_SIZE.consent} name="Sovereignty Moment" palette={p.palette}>
      <ConsentView state={state} palette={p.palette} />
    </ScreenFrame>
  );
}
