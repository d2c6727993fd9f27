import { MAX_COMMENT, suggestedKind, type FeedbackAnswer, type Rating } from '../../feedback/entry.js';
import { RESPONSE_KINDS, type ResponseKind } from '../../memoir/format/sources.js';
import type { KeyPress } from '../keys.js';

/**
 * The Likert prompt's state: rating (1–5), then the response kind, then an optional comment.
 * Nothing is chosen for the player: Enter on the rating does nothing until a rating is picked;
 * the kind is pre-selected from the rating (and the revision) but must be confirmed.
 * Esc skips the whole prompt (nothing is written); Ctrl-C or Ctrl-D cancels.
 */
export type FeedbackStep = 'rating' | 'kind' | 'comment';

export type FeedbackOutcome =
  { type: 'answered'; answer: FeedbackAnswer } | { type: 'skipped' } | { type: 'cancelled'; why?: string };

export interface FeedbackState {
  step: FeedbackStep;
  rating: Rating | null;
  kind: ResponseKind | null;
  comment: string;
  revised: boolean;
  hint: string | null;
  outcome: FeedbackOutcome | null;
}

export function initialFeedbackState(opts: {
  rating?: Rating | undefined;
  kind?: ResponseKind | undefined;
  comment?: string | undefined;
  revised: boolean;
}): FeedbackState {
  const rating = opts.rating ?? null;
  return {
    step: rating === null ? 'rating' : opts.kind === undefined ? 'kind' : 'comment',
    rating,
    kind: opts.kind ?? (rating !== null ? suggestedKind(rating, opts.revised) : null),
    comment: (opts.comment ?? '').slice(0, MAX_COMMENT),
    revised: opts.revised,
    hint: null,
    outcome: null,
  };
}

export type FeedbackAction = { type: 'key'; press: KeyPress };

const clampRating = (n: number): Rating => Math.max(1, Math.min(5, n)) as Rating;

function onRating(s: FeedbackState, k: KeyPress): FeedbackState {
  if (k.name === null && /^[1-5]$/.test(k.input)) return { ...s, rating: Number(k.input) as Rating, hint: null };
  if (k.name === 'left' || k.name === 'down')
    return { ...s, rating: s.rating === null ? 3 : clampRating(s.rating - 1), hint: null };
  if (k.name === 'right' || k.name === 'up')
    return { ...s, rating: s.rating === null ? 3 : clampRating(s.rating + 1), hint: null };
  if (k.name === 'enter') {
    if (s.rating === null) return { ...s, hint: 'choose a rating first: press 1–5 (or the arrows), then Enter' };
    return { ...s, step: 'kind', kind: s.kind ?? suggestedKind(s.rating, s.revised), hint: null };
  }
  if (k.name === null && k.input !== '') return { ...s, hint: 'press 1–5 to rate, Enter to confirm, Esc to skip' };
  return s;
}

function onKind(s: FeedbackState, k: KeyPress): FeedbackState {
  const i = s.kind ? RESPONSE_KINDS.indexOf(s.kind) : -1;
  if (k.name === null && /^[1-4]$/.test(k.input))
    return { ...s, kind: RESPONSE_KINDS[Number(k.input) - 1] as ResponseKind, hint: null };
  if (k.name === 'up' || k.name === 'left')
    return { ...s, kind: RESPONSE_KINDS[Math.max(0, i - 1)] as ResponseKind, hint: null };
  if (k.name === 'down' || k.name === 'right')
    return { ...s, kind: RESPONSE_KINDS[Math.min(RESPONSE_KINDS.length - 1, i + 1)] as ResponseKind, hint: null };
  if (k.name === 'enter')
    return s.kind ? { ...s, step: 'comment', hint: null } : { ...s, hint: 'choose a response: 1–4 or the arrows' };
  if (k.name === 'backspace') return { ...s, step: 'rating', hint: null };
  if (k.name === null && k.input !== '')
    return { ...s, hint: 'press 1–4 to choose, Enter to confirm, Backspace to go back' };
  return s;
}

function onComment(s: FeedbackState, k: KeyPress): FeedbackState {
  if (k.name === 'enter') {
    if (s.rating === null || s.kind === null) return s;
    const comment = s.comment.trim() === '' ? null : s.comment.trim();
    return { ...s, outcome: { type: 'answered', answer: { rating: s.rating, kind: s.kind, comment } } };
  }
  if (k.name === 'backspace')
    return s.comment === ''
      ? { ...s, step: 'kind', hint: null }
      : { ...s, comment: [...s.comment].slice(0, -1).join('') };
  const text = k.name === 'space' ? ' ' : k.name === null ? k.input : '';
  if (text === '') return s;
  // Control characters never reach the memoir from here; newlines in a paste become spaces.
  const clean = text.replace(/[\r\n\t]+/g, ' ').replace(/[\u0000-\u001f\u007f]/g, '');
  const comment = (s.comment + clean).slice(0, MAX_COMMENT);
  return {
    ...s,
    comment,
    hint: comment.length >= MAX_COMMENT ? `comments are at most ${MAX_COMMENT} characters` : null,
  };
}

export function feedbackReducer(s: FeedbackState, a: FeedbackAction): FeedbackState {
  if (s.outcome) return s;
  const k = a.press;
  if (k.name === 'ctrl-c' || k.name === 'ctrl-d') return { ...s, outcome: { type: 'cancelled' } };
  if (k.name === 'escape') return { ...s, outcome: { type: 'skipped' } };
  // A pasted run of keys outside the comment is applied one key at a time.
  if (s.step !== 'comment' && k.name === null && [...k.input].length > 1) {
    let out = s;
    for (const ch of k.input)
      out = feedbackReducer(out, { type: 'key', press: { input: ch, name: ch === ' ' ? 'space' : null } });
    return out;
  }
  switch (s.step) {
    case 'rating':
      return onRating(s, k);
    case 'kind':
      return onKind(s, k);
    case 'comment':
      return onComment(s, k);
  }
}
