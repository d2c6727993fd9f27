import { render } from 'ink';
import type { Ctx } from '../../context.js';
import type { WhisperReport } from '../../privacy/whisper-report.js';
import { WhisperApp } from './whisper-app.js';

/** Mounts the gauge on the command's terminal and waits until the player closes it. */
export async function showWhisper(ctx: Ctx, report: WhisperReport): Promise<void> {
  const app = render(<WhisperApp report={report} />, {
    stdin: ctx.stdin as NodeJS.ReadStream,
    stdout: ctx.stdout as unknown as NodeJS.WriteStream,
    stderr: ctx.stderr as unknown as NodeJS.WriteStream,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  await app.waitUntilExit();
}
