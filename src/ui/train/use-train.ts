import { useEffect, useReducer } from 'react';
import type { TrainEvent } from '../../train/train-bond.js';
import { initialTrainState, trainReducer, type TrainState } from './use-train-state.js';

/** A source of trainer events the screen subscribes to. */
export interface TrainEvents {
  subscribe(listener: (e: TrainEvent) => void): () => void;
  /** Events that arrived before the screen subscribed. */
  replay(): readonly TrainEvent[];
}

export function useTrain(events: TrainEvents): TrainState {
  const [state, dispatch] = useReducer(trainReducer, undefined, () => events.replay().reduce(trainReducer, initialTrainState));
  useEffect(() => events.subscribe(dispatch), [events]);
  return state;
}
