import { useInput } from 'ink';
import { useReducer } from 'react';
import { initialWhisperState, whisperReducer, type WhisperState } from './use-whisper-state.js';

/** Keys: ↑/k and ↓/j select an agent, enter/space toggles its details, q/esc/ctrl-c closes. */
export function useWhisper(count: number, opts: { isActive?: boolean } = {}): WhisperState {
  const [state, dispatch] = useReducer(whisperReducer(count), undefined, initialWhisperState);
  useInput(
    (input, key) => {
      if (key.upArrow || input === 'k') dispatch({ type: 'up' });
      else if (key.downArrow || input === 'j') dispatch({ type: 'down' });
      else if (key.return || input === ' ') dispatch({ type: 'toggleDetails' });
      else if (input === 'q' || key.escape || (key.ctrl && input === 'c')) dispatch({ type: 'quit' });
    },
    { isActive: opts.isActive ?? true },
  );
  return state;
}
