import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import type { TrainEvent } from '../../../src/train/train-bond.js';
import { TrainView } from '../../../src/ui/train/train-view.js';
import { initialTrainState, progressLine, trainReducer } from '../../../src/ui/train/use-train-state.js';
import { useTrain, type TrainEvents } from '../../../src/ui/train/use-train.js';
import { waitFor } from '../../helpers/ink-wait.js';

const progress = (agent: 'techne' | 'metis', epoch: number, batch: number): TrainEvent => ({
  type: 'progress',
  progress: { agent, epoch, epochs: 10, batch, batches: 4, trainLoss: 0.5 / epoch, stopLoss: 0.6, stopMetric: 0.7, examplesPerSec: 1234, elapsedMs: 1000 * ((epoch - 1) * 4 + batch) },
});

describe('training display state', () => {
  it('a row per planned agent; progress sets epoch, losses, rate and an ETA from the batch rate', () => {
    let s = trainReducer(initialTrainState, { type: 'plan', agents: ['techne', 'metis', 'cupid'] });
    s = trainReducer(s, { type: 'start', agent: 'techne', examples: 42 });
    s = trainReducer(s, progress('techne', 2, 2));
    const techne = s.rows[0]!;
    expect(techne).toMatchObject({ agent: 'techne', status: 'training', examples: 42, epoch: 2, epochs: 10, batch: 2, trainLoss: 0.25, examplesPerSec: 1234 });
    // 6 of 40 batches in 6 s: 34 left at one a second
    expect(techne.etaSec).toBeCloseTo(34, 9);
    expect(s.rows.map((r) => r.status)).toEqual(['training', 'waiting', 'waiting']);
    s = trainReducer(s, { type: 'skipped', agent: 'cupid', reason: '3 usable examples (needs at least 8)' });
    expect(progressLine(s.rows[2]!)).toBe('cupid: skipped — 3 usable examples (needs at least 8)');
    expect(progressLine(techne)).toBe('techne: epoch 2/10 batch 2/4 · train loss 0.2500 · stop loss 0.6000 · 1234 ex/s · eta ≤ 34s');
  });
});

describe('training display (Ink)', () => {
  it('renders the live table and follows events as they arrive', async () => {
    const listeners = new Set<(e: TrainEvent) => void>();
    const seen: TrainEvent[] = [{ type: 'plan', agents: ['techne', 'metis'] }];
    const events: TrainEvents = { subscribe: (l) => (listeners.add(l), () => listeners.delete(l)), replay: () => seen };
    function App(): React.JSX.Element {
      return <TrainView state={useTrain(events)} color={false} />;
    }
    const app = render(<App />);
    await waitFor(() => (app.lastFrame() ?? '').includes('metis'), app.lastFrame);
    expect(app.lastFrame()).toMatch(/AGENT\s+STATUS\s+EXAMPLES\s+EPOCH\s+TRAIN LOSS\s+STOP LOSS\s+EX\/S\s+ETA/);
    expect(app.lastFrame()).toMatch(/techne\s+waiting/);
    const push = (e: TrainEvent): void => listeners.forEach((l) => l(e));
    push({ type: 'start', agent: 'techne', examples: 42 });
    push(progress('techne', 3, 1));
    await waitFor(() => /techne\s+training\s+42\s+3\/10\s+0\.1667\s+0\.6000\s+1234\s+≤ \d+s/.test(app.lastFrame() ?? ''), app.lastFrame);
    app.unmount();
  });
});
