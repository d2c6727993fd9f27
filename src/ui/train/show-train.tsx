import { render } from 'ink';
import type { Ctx } from '../../context.js';
import type { TrainEvent } from '../../train/train-bond.js';
import { TrainView } from './train-view.js';
import { initialTrainState, trainReducer, type TrainState } from './use-train-state.js';

/**
 * The live display on stderr (stdout keeps the result table). It reads no input, so Ctrl-C stays
 * an ordinary SIGINT the command handles. The table is a pure function of the reduced events,
 * rendered again on each one, so the frame left on screen at `close` is the last state, never one
 * React had not committed yet.
 */
export function showTrain(ctx: Ctx, columns: number): { push: (e: TrainEvent) => void; close: () => Promise<void> } {
  let state: TrainState = initialTrainState;
  const color = ctx.colorLevel > 0;
  const app = render(<TrainView state={state} color={color} width={columns} />, {
    stdout: ctx.stderr as unknown as NodeJS.WriteStream,
    stderr: ctx.stderr as unknown as NodeJS.WriteStream,
    stdin: ctx.stdin as NodeJS.ReadStream,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  return {
    push: (e) => {
      state = trainReducer(state, e);
      app.rerender(<TrainView state={state} color={color} width={columns} />);
    },
    close: async () => {
      app.rerender(<TrainView state={state} color={color} width={columns} />);
      app.unmount();
      await app.waitUntilExit();
    },
  };
}
