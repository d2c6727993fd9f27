import type { Ctx } from '../../context.js';
import { runScreen } from '../mount.js';
import { palette } from '../../output/theme.js';
import type { ScreenSize } from '../terminal.js';
import { FeedbackApp, type FeedbackSubjectView } from './feedback-view.js';
import type { FeedbackOutcome, FeedbackState } from './use-feedback-state.js';

/** Shows the Likert prompt until it is answered, skipped or cancelled (a closed stdin cancels). */
export async function showFeedbackPrompt(
  ctx: Ctx,
  subject: FeedbackSubjectView,
  initial: FeedbackState,
  size: ScreenSize,
): Promise<FeedbackOutcome> {
  return runScreen<FeedbackOutcome>(
    ctx,
    (finish) => (
      <FeedbackApp subject={subject} initial={initial} palette={palette(ctx.colorLevel)} size={size} onDone={finish} />
    ),
    {
      onStdinEnd: { type: 'cancelled', why: 'the input closed before the prompt was answered' },
      onAbort: { type: 'cancelled', why: 'interrupted' },
    },
  );
}
