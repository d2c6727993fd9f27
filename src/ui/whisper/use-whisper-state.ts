import { bound, WHISPER_KEYS, type KeyPress } from '../keys.js';

/**
 * The Whisper Limit gauge's state: which agent is selected and whether its details are open.
 * A pure reducer (unit-tested without Ink).
 */
export interface WhisperState {
  /** Index into the report's agents. */
  cursor: number;
  details: boolean;
  /** Set when the screen should close: `quit` (q, Esc) or `cancel` (Ctrl-C, exit 130). */
  done: 'quit' | 'cancel' | null;
}

export type WhisperAction =
  | { type: 'up' }
  | { type: 'down' }
  | { type: 'toggleDetails' }
  | { type: 'quit' }
  | { type: 'cancel' }
  | { type: 'key'; press: KeyPress };

export function initialWhisperState(): WhisperState {
  return { cursor: 0, details: false, done: null };
}

export function whisperReducer(count: number) {
  const reduce = (s: WhisperState, a: WhisperAction): WhisperState => {
    if (s.done) return s;
    switch (a.type) {
      case 'key': {
        const b = WHISPER_KEYS.find((x) => bound(x.keys, a.press));
        if (!b) return s;
        // Esc closes what is open first: the details, then the screen.
        if (a.press.name === 'escape' && s.details) return { ...s, details: false };
        return reduce(s, { type: b.action });
      }
      case 'up':
        return { ...s, cursor: count === 0 ? 0 : (s.cursor - 1 + count) % count };
      case 'down':
        return { ...s, cursor: count === 0 ? 0 : (s.cursor + 1) % count };
      case 'toggleDetails':
        return { ...s, details: !s.details };
      case 'quit':
        return { ...s, done: 'quit' };
      case 'cancel':
        return { ...s, done: 'cancel' };
    }
  };
  return reduce;
}
