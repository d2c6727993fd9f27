import { useEffect, useReducer, useRef, useState } from 'react';
import { useInput } from 'ink';
import type { StoryNav } from '../../replay/story.js';
import type { TextIndexBuilder } from '../../memoir-index/indexed.js';
import { CancelledError } from '../../errors.js';
import { expandPress, keyPress } from '../keys.js';
import { replayReducer, SPEEDS, type ReplayState } from './use-replay-state.js';

/**
 * The replay screen's input and clock: keys go to the reducer (which maps them against the
 * current state), a timer ticks while playing, and `onDone` fires once on quit or Ctrl-C. A search
 * that needs the full-text index runs `textIndex.build` here, with its progress going to the
 * reducer; Esc (cancelling), quitting or unmounting aborts it (the build then writes nothing).
 */
export function useReplay(
  nav: StoryNav,
  initial: ReplayState,
  onDone: (how: 'quit' | 'cancel', last: ReplayState) => void,
  isActive = true,
  textIndex?: TextIndexBuilder,
): { state: ReplayState; ready: boolean } {
  const [state, dispatch] = useReducer(
    (s: ReplayState, a: Parameters<typeof replayReducer>[1]) => replayReducer(s, a, nav),
    initial,
  );

  useInput(
    (input, key) => {
      for (const press of expandPress(keyPress(input, key))) dispatch({ type: 'key', press });
    },
    { isActive },
  );

  // Effects run in order: once this one has run, useInput has put the terminal in raw mode, so
  // the screen may say which keys work (a key typed earlier could be echoed or lost).
  const [ready, setReady] = useState(false);
  useEffect(() => setReady(isActive), [isActive]);

  useEffect(() => {
    if (!state.playing) return undefined;
    const every = Math.round(1000 / (SPEEDS[state.speed] ?? 1));
    const timer = setInterval(() => dispatch({ type: 'tick' }), every);
    return () => clearInterval(timer);
  }, [state.playing, state.speed]);

  // One build at a time: started when a search waits on it, aborted on Esc, quit or unmount.
  const building = state.building !== null;
  const build = useRef<AbortController | null>(null);
  useEffect(() => {
    if (!building || state.done) return undefined;
    const controller = new AbortController();
    build.current = controller;
    if (!textIndex)
      dispatch({ type: 'textIndexBuilt' }); // nothing to build (a story in memory)
    else {
      textIndex
        .build((done, total) => dispatch({ type: 'textIndexProgress', done, total }), controller.signal)
        .then(
          () => dispatch({ type: 'textIndexBuilt' }),
          (err: unknown) =>
            dispatch({
              type: 'textIndexStopped',
              error: err instanceof CancelledError ? null : err instanceof Error ? err.message : String(err),
            }),
        );
    }
    return () => {
      controller.abort();
      build.current = null;
    };
  }, [building, state.done]);
  useEffect(() => {
    if (state.building?.cancelling) build.current?.abort();
  }, [state.building?.cancelling]);

  useEffect(() => {
    if (state.done) onDone(state.done, state);
    // Fires once when the screen is done; onDone is not a dependency (a new closure must not re-fire it).
  }, [state.done]);

  return { state, ready };
}
