import { render } from 'ink';
import type { Ctx } from '../../context.js';
import type { Agent } from '../../memoir/agents.js';
import type { Stance } from '../../privacy/consent.js';
import { ConsentApp, type ConsentOutcome } from './consent-app.js';

/** Plays the Sovereignty Moment on the command's terminal; resolves with the player's choice. */
export async function showConsent(ctx: Ctx, stances: readonly Stance[], current: Readonly<Partial<Record<Agent, boolean>>>): Promise<ConsentOutcome> {
  let outcome: ConsentOutcome = { confirmed: false };
  const app = render(
    <ConsentApp
      stances={stances}
      current={current}
      onDone={(o) => {
        outcome = o;
      }}
    />,
    {
      stdin: ctx.stdin as NodeJS.ReadStream,
      stdout: ctx.stdout as unknown as NodeJS.WriteStream,
      stderr: ctx.stderr as unknown as NodeJS.WriteStream,
      exitOnCtrlC: false,
      patchConsole: false,
    },
  );
  await app.waitUntilExit();
  return outcome;
}
