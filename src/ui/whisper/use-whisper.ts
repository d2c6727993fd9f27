import { useInput } from 'ink';
import { useReducer } from 'react';
import { expandPress, keyPress } from '../keys.js';
import { initialWhisperState, whisperReducer, type WhisperState } from './use-whisper-state.js';

/** The gauge's input: keys (WHISPER_KEYS) go to the reducer. */
export function useWhisper(count: number, opts: { isActive?: boolean } = {}): WhisperState {
  const [state, dispatch] = useReducer(whisperReducer(count), undefined, initialWhisperState);
  useInput(
    (input, key) => {
      for (const press of expandPress(keyPress(input, key))) dispatch({ type: 'key', press });
    },
    { isActive: opts.isActive ?? true },
  );
  return state;
}
