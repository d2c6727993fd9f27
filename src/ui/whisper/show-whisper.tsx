import type { Ctx } from '../../context.js';
import { palette } from '../../output/theme.js';
import type { WhisperReport } from '../../privacy/whisper-report.js';
import { runScreen } from '../mount.js';
import type { ScreenSize } from '../terminal.js';
import { WhisperApp } from './whisper-app.js';

/** Shows the gauge until the player closes it; resolves with how: quit (q, Esc, a closed input) or cancel (Ctrl-C). */
export async function showWhisper(ctx: Ctx, report: WhisperReport, size: ScreenSize): Promise<'quit' | 'cancel'> {
  return runScreen<'quit' | 'cancel'>(
    ctx,
    (finish) => <WhisperApp report={report} palette={palette(ctx.colorLevel)} size={size} onDone={finish} />,
    { onStdinEnd: 'quit', onAbort: 'cancel' },
  );
}
