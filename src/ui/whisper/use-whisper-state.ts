/**
 * The Whisper Limit gauge's state: which agent is selected and whether its details are open.
 * A pure reducer (unit-tested without Ink).
 */
export interface WhisperState {
  /** Index into the report's agents. */
  cursor: number;
  details: boolean;
  done: boolean;
}

export type WhisperAction = { type: 'up' } | { type: 'down' } | { type: 'toggleDetails' } | { type: 'quit' };

export function initialWhisperState(): WhisperState {
  return { cursor: 0, details: false, done: false };
}

export function whisperReducer(count: number) {
  return (s: WhisperState, a: WhisperAction): WhisperState => {
    if (s.done) return s;
    switch (a.type) {
      case 'up':
        return { ...s, cursor: count === 0 ? 0 : (s.cursor - 1 + count) % count };
      case 'down':
        return { ...s, cursor: count === 0 ? 0 : (s.cursor + 1) % count };
      case 'toggleDetails':
        return { ...s, details: !s.details };
      case 'quit':
        return { ...s, done: true };
    }
  };
}
