import { appendLines, prepareEntries } from '../memoir/file/append.js';
import { ulidGenerator } from '../memoir/format/entry-id.js';
import type { MemoirEntry } from '../memoir/format/schema.js';
import { feedbackEntry, type FeedbackAnswer, type FeedbackSubject } from './entry.js';

/**
 * Writes one answered prompt: the entry is validated in full, then appended in one write (see
 * appendLines). Called only once the prompt is complete, so nothing is ever half-written.
 */
export function writeFeedback(
  memoir: string,
  subject: FeedbackSubject,
  answer: FeedbackAnswer,
  clock: { now: () => Date; secureRandom: (n: number) => Uint8Array },
): { entry: MemoirEntry; line: string } {
  const ids = ulidGenerator(() => clock.now().getTime(), clock.secureRandom);
  const [prepared] = prepareEntries([{ value: feedbackEntry(subject, answer), where: 'feedback' }], ids, clock.now);
  if (!prepared) throw new Error('prepareEntries returned no entry');
  appendLines(memoir, [prepared.line], { now: clock.now });
  return prepared;
}
