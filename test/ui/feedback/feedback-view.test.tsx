import { join } from 'node:path';
import { cleanup, render } from 'ink-testing-library';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { FeedbackSubject } from '../../../src/feedback/entry.js';
import { writeFeedback } from '../../../src/feedback/write.js';
import { FeedbackApp } from '../../../src/ui/feedback/feedback-view.js';
import { initialFeedbackState, type FeedbackOutcome } from '../../../src/ui/feedback/use-feedback-state.js';
import { palette } from '../../../src/output/theme.js';
import { removeDir, tempDir } from '../../helpers/ctx.js';
import { lineCount, readEntries } from '../../helpers/forge.js';
import { frameWith, waitFor } from '../../helpers/ink-wait.js';
import { KEY } from '../../helpers/tty.js';

let dir: string;
beforeEach(() => {
  dir = tempDir('kourai-feedback-view-');
});
afterEach(() => {
  cleanup();
  removeDir(dir);
});

const subject: FeedbackSubject = {
  agent: 'techne',
  scene_id: 'session-1a2b3c4d.turn-3',
  proposed: 'def load(path):\n    with open(path) as f:\n        return [json.loads(l) for l in f]',
  revised: null,
  context: null,
};

/** Mounts the prompt; an answer is written to the memoir exactly as the command writes it. */
function mount(s: FeedbackSubject = subject) {
  const memoir = join(dir, 'memoir.jsonl');
  const outcomes: FeedbackOutcome[] = [];
  const app = render(
    <FeedbackApp
      subject={{ ...s, affinity: 0.25, tier: 'familiar' }}
      initial={initialFeedbackState({ revised: s.revised !== null })}
      palette={palette(0)}
      size={{ columns: 100, rows: 30 }}
      onDone={(o) => {
        outcomes.push(o);
        if (o.type === 'answered')
          writeFeedback(memoir, s, o.answer, {
            now: () => new Date('2026-11-22T10:00:00Z'),
            secureRandom: (n) => new Uint8Array(n),
          });
      }}
    />,
  );
  return { ...app, memoir, outcomes };
}

describe('FeedbackApp (ink-testing-library)', () => {
  it('shows the proposal and the 1–5 scale; 4 Enter Enter "crisp" Enter writes the entry', async () => {
    // (the first frame has no key hints: they appear once keys reach the prompt)
    const { lastFrame, stdin, memoir, outcomes } = mount();
    const first = await frameWith(lastFrame, 'Enter confirm · Esc skip'); // keys are live
    expect(first).toContain('Feedback for techne · session-1a2b3c4d.turn-3');
    expect(first).toContain('affinity 0.25 familiar');
    expect(first).toContain('with open(path) as f:');
    expect(first).toContain('1 way off');
    expect(first).toContain('5 exactly right');
    stdin.write('4');
    const picked = await frameWith(lastFrame, '[4 right]');
    expect(picked).toContain('felt right · affinity +0.02');
    stdin.write(KEY.enter);
    const kinds = await frameWith(lastFrame, 'What did you do with it?');
    expect(kinds).toContain('▸ 1 accepted');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'Comment (optional)');
    stdin.write('crisp');
    await frameWith(lastFrame, '> crisp');
    stdin.write(KEY.enter);
    await waitFor(() => outcomes.length > 0, lastFrame, 'the outcome');
    expect(outcomes).toEqual([{ type: 'answered', answer: { rating: 4, kind: 'accepted', comment: 'crisp' } }]);
    const [e] = readEntries(memoir);
    expect(e).toMatchObject({
      agent: 'techne',
      scene_id: 'session-1a2b3c4d.turn-3',
      source: 'specialist_proposed',
      agent_proposed: subject.proposed,
      player_response: { kind: 'accepted', felt: 'right', delta: null },
      affinity_delta: 0.02,
      likert: 4,
      comment: 'crisp',
    });
  });

  it('with a revision: both texts are shown, modified is pre-selected, the pair is written', async () => {
    const s = { ...subject, revised: 'def load(path):\n    return list(read_ndjson(path))' };
    const { lastFrame, stdin, memoir, outcomes } = mount(s);
    const f = await frameWith(lastFrame, 'Enter confirm · Esc skip');
    expect(f).toContain('your revision');
    expect(f).toContain('return list(read_ndjson(path))');
    stdin.write('2');
    await frameWith(lastFrame, '[2 a bit off]');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, '▸ 2 modified');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'Comment (optional)');
    stdin.write(KEY.enter);
    await waitFor(() => outcomes.length > 0, lastFrame, 'the outcome');
    const [e] = readEntries(memoir);
    expect(e?.player_response).toEqual({ kind: 'modified', delta: s.revised, felt: 'off' });
    expect(e?.training_label?.preference_pair).toEqual([
      { text: s.proposed, score: 0 },
      { text: s.revised, score: 1 },
    ]);
    expect(e?.affinity_delta).toBe(-0.05);
    expect(e?.likert).toBe(2);
    expect(e).not.toHaveProperty('comment');
  });

  it('Enter before a rating only hints; Esc skips and nothing is written', async () => {
    const { lastFrame, stdin, memoir, outcomes } = mount();
    await frameWith(lastFrame, 'Enter confirm · Esc skip'); // keys are live
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'choose a rating first');
    stdin.write('5');
    await frameWith(lastFrame, '[5 exactly right]');
    stdin.write(KEY.escape);
    await waitFor(() => outcomes.length > 0, lastFrame, 'the outcome');
    expect(outcomes).toEqual([{ type: 'skipped' }]);
    expect(() => lineCount(memoir)).toThrow(/ENOENT/);
  });

  it('Ctrl-C mid-prompt cancels and nothing is written', async () => {
    const { lastFrame, stdin, memoir, outcomes } = mount();
    await frameWith(lastFrame, 'Enter confirm · Esc skip'); // keys are live
    stdin.write('3');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'What did you do with it?');
    stdin.write(KEY.ctrlC);
    await waitFor(() => outcomes.length > 0, lastFrame, 'the outcome');
    expect(outcomes).toEqual([{ type: 'cancelled' }]);
    expect(() => lineCount(memoir)).toThrow(/ENOENT/);
  });

  it('Backspace goes back to change the rating', async () => {
    const { lastFrame, stdin, memoir, outcomes } = mount();
    await frameWith(lastFrame, 'Enter confirm · Esc skip'); // keys are live
    stdin.write('5');
    stdin.write(KEY.enter);
    await frameWith(lastFrame, 'What did you do with it?');
    stdin.write(KEY.backspace);
    await frameWith(lastFrame, '1–5 or ←→ choose');
    stdin.write(KEY.left);
    await frameWith(lastFrame, '[4 right]');
    stdin.write(`${KEY.enter}3${KEY.enter}${KEY.enter}`);
    await waitFor(() => outcomes.length > 0, lastFrame, 'the outcome');
    expect(readEntries(memoir)[0]).toMatchObject({ likert: 4, player_response: { kind: 'rejected' } });
  });
});
