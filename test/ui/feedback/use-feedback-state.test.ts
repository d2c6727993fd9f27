import { describe, expect, it } from 'vitest';
import { MAX_COMMENT } from '../../../src/feedback/entry.js';
import { expandPress, FEEDBACK_KEYS, type KeyPress } from '../../../src/ui/keys.js';
import {
  feedbackReducer,
  initialFeedbackState,
  type FeedbackState,
} from '../../../src/ui/feedback/use-feedback-state.js';

const t = (input: string): KeyPress => ({ input, name: null });
const n = (name: KeyPress['name']): KeyPress => ({ input: '', name });
const press = (s: FeedbackState, ...keys: (KeyPress | string)[]): FeedbackState =>
  keys.reduce<FeedbackState>(
    (st, k) => feedbackReducer(st, { type: 'key', press: typeof k === 'string' ? t(k) : k }),
    s,
  );
const fresh = (revised = false): FeedbackState => initialFeedbackState({ revised });

describe('feedback reducer', () => {
  it('rating, then kind, then comment: 4 Enter Enter "nice" Enter', () => {
    const s = press(fresh(), '4', n('enter'), n('enter'), 'nice', n('space'), 'work', n('enter'));
    expect(s.outcome).toEqual({ type: 'answered', answer: { rating: 4, kind: 'accepted', comment: 'nice work' } });
  });

  it('does not pick a rating for the player: Enter first only hints', () => {
    const s = press(fresh(), n('enter'));
    expect(s.step).toBe('rating');
    expect(s.rating).toBeNull();
    expect(s.hint).toMatch(/choose a rating first/);
  });

  it('arrows start at the middle and stay within 1–5; other keys hint', () => {
    expect(press(fresh(), n('right')).rating).toBe(3);
    expect(press(fresh(), n('left'), n('left'), n('left'), n('left')).rating).toBe(1);
    expect(press(fresh(), '5', n('up'), n('right')).rating).toBe(5);
    expect(press(fresh(), '9').rating).toBeNull();
    expect(press(fresh(), 'x').hint).toMatch(/press 1–5/);
  });

  it('pre-selects the kind from the rating (and a revision) but lets the player change it', () => {
    expect(press(fresh(), '1', n('enter')).kind).toBe('rejected');
    expect(press(fresh(), '3', n('enter')).kind).toBe('deferred');
    expect(press(fresh(true), '5', n('enter')).kind).toBe('modified');
    expect(press(fresh(), '5', n('enter'), '4').kind).toBe('deferred');
    expect(press(fresh(), '5', n('enter'), n('down'), n('down')).kind).toBe('rejected');
    expect(press(fresh(), '5', n('enter'), n('up'), n('up')).kind).toBe('accepted');
  });

  it('Backspace goes back a step (on an empty comment), and edits a comment', () => {
    let s = press(fresh(), '2', n('enter'), n('backspace'));
    expect(s.step).toBe('rating');
    expect(s.rating).toBe(2);
    s = press(s, n('enter'), n('enter'), 'ab', n('backspace'));
    expect(s).toMatchObject({ step: 'comment', comment: 'a' });
    s = press(s, n('backspace'), n('backspace'));
    expect(s.step).toBe('kind');
  });

  it('digits in the comment are text, not choices', () => {
    const s = press(fresh(), '4', n('enter'), n('enter'), '1', '2', n('enter'));
    expect(s.outcome).toEqual({ type: 'answered', answer: { rating: 4, kind: 'accepted', comment: '12' } });
  });

  it('an empty comment is no comment', () => {
    const s = press(fresh(), '3', n('enter'), n('enter'), n('space'), n('enter'));
    expect(s.outcome).toEqual({ type: 'answered', answer: { rating: 3, kind: 'deferred', comment: null } });
  });

  it('Esc skips at any step; Ctrl-C and Ctrl-D cancel; nothing happens after the outcome', () => {
    expect(press(fresh(), n('escape')).outcome).toEqual({ type: 'skipped' });
    expect(press(fresh(), '4', n('enter'), n('enter'), 'abc', n('escape')).outcome).toEqual({ type: 'skipped' });
    expect(press(fresh(), '4', n('ctrl-c')).outcome).toEqual({ type: 'cancelled' });
    expect(press(fresh(), n('ctrl-d')).outcome).toEqual({ type: 'cancelled' });
    const done = press(fresh(), n('escape'));
    expect(press(done, '4', n('enter'))).toBe(done);
  });

  it('keys that arrive together (a paste, or tmux send-keys) are split into presses', () => {
    const keys = expandPress(t('4\r\rgood\r'));
    expect(keys).toEqual([t('4'), n('enter'), n('enter'), t('good'), n('enter')]);
    const s = keys.reduce<FeedbackState>((st, k) => feedbackReducer(st, { type: 'key', press: k }), fresh());
    expect(s.outcome).toEqual({ type: 'answered', answer: { rating: 4, kind: 'accepted', comment: 'good' } });
    // Outside the comment, a run of text is taken key by key.
    expect(press(fresh(), '25').rating).toBe(5);
  });

  it('keeps control characters out of the comment and caps its length', () => {
    let s = press(fresh(), '4', n('enter'), n('enter'), 'a\u0007b');
    expect(s.comment).toBe('ab');
    s = press(s, 'x'.repeat(MAX_COMMENT + 10));
    expect(s.comment.length).toBe(MAX_COMMENT);
    expect(s.hint).toMatch(/at most/);
  });

  it('answers given by flags skip their questions', () => {
    expect(initialFeedbackState({ rating: 4, revised: false })).toMatchObject({
      step: 'kind',
      rating: 4,
      kind: 'accepted',
    });
    expect(initialFeedbackState({ rating: 2, kind: 'modified', revised: false, comment: 'pre' })).toMatchObject({
      step: 'comment',
      kind: 'modified',
      comment: 'pre',
    });
  });

  it('the key table documents every key the prompt handles', () => {
    const documented = FEEDBACK_KEYS.flatMap((b) => b.keys);
    for (const k of ['1', '5', 'left', 'right', 'up', 'down', 'enter', 'backspace', 'escape', 'ctrl-c'])
      expect(documented).toContain(k);
  });
});
