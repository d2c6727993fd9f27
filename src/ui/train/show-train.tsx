import { render } from 'ink';
import type { Ctx } from '../../context.js';
import type { TrainEvent } from '../../train/train-bond.js';
import { TrainView } from './train-view.js';
import { useTrain, type TrainEvents } from './use-train.js';

function TrainApp({ events, color }: { events: TrainEvents; color: boolean }): React.JSX.Element {
  return <TrainView state={useTrain(events)} color={color} />;
}

/**
 * The live display on stderr (stdout keeps the result table). It reads no input, so Ctrl-C stays
 * an ordinary SIGINT the command handles. Returns `push` for events and `close` to leave the last
 * frame on screen.
 */
export function showTrain(ctx: Ctx): { push: (e: TrainEvent) => void; close: () => Promise<void> } {
  const seen: TrainEvent[] = [];
  const listeners = new Set<(e: TrainEvent) => void>();
  const events: TrainEvents = {
    subscribe: (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    replay: () => seen,
  };
  const app = render(<TrainApp events={events} color={ctx.colorLevel > 0} />, {
    stdout: ctx.stderr as unknown as NodeJS.WriteStream,
    stderr: ctx.stderr as unknown as NodeJS.WriteStream,
    stdin: ctx.stdin as NodeJS.ReadStream,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  return {
    push: (e) => {
      seen.push(e);
      for (const l of listeners) l(e);
    },
    close: async () => {
      app.unmount();
      await app.waitUntilExit();
    },
  };
}
