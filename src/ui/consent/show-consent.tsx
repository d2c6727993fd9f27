import type { Ctx } from '../../context.js';
import type { Agent } from '../../memoir/format/agents.js';
import { palette } from '../../output/theme.js';
import type { Stance } from '../../privacy/consent.js';
import { runScreen } from '../mount.js';
import type { ScreenSize } from '../terminal.js';
import { ConsentApp, type ConsentOutcome } from './consent-app.js';

/** Plays the Sovereignty Moment on the command's terminal; resolves with the player's choice (a closed input leaves, Ctrl-C cancels). */
export async function showConsent(
  ctx: Ctx,
  stances: readonly Stance[],
  current: Readonly<Partial<Record<Agent, boolean>>>,
  size: ScreenSize,
): Promise<ConsentOutcome> {
  return runScreen<ConsentOutcome>(
    ctx,
    (finish) => (
      <ConsentApp stances={stances} current={current} palette={palette(ctx.colorLevel)} size={size} onDone={finish} />
    ),
    {
      onStdinEnd: { confirmed: false, how: 'left' },
      onAbort: { confirmed: false, how: 'cancelled' },
    },
  );
}
