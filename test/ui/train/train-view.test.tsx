import { render } from 'ink-testing-library';
import { describe, expect, it } from 'vitest';
import type { TrainEvent } from '../../../src/train/train-bond.js';

import { initialTrainState, progressLine, trainReducer } from '../../../src/ui/train/use-train-state.js';
import { PassThrough } from 'node:stream';
import { showTrain } from '../../../src/ui/train/show-train.js';
import { MIN_TRAIN_COLUMNS, TrainView } from '../../../src/ui/train/train-view.js';
import { testCtx } from '../../helpers/ctx.js';

const progress = (agent: 'techne' | 'metis', epoch: number, batch: number): TrainEvent => ({
  type: 'progress',
  progress: {
    agent,
    epoch,
    epochs: 10,
    batch,
    batches: 4,
    trainLoss: 0.5 / epoch,
    stopLoss: 0.6,
    stopMetric: 0.7,
    examplesPerSec: 1234,
    elapsedMs: 1000 * ((epoch - 1) * 4 + batch),
  },
});

describe('training display state', () => {
  it('a row per planned agent; progress sets epoch, losses, rate and an ETA from the batch rate', () => {
    let s = trainReducer(initialTrainState, { type: 'plan', agents: ['techne', 'metis', 'cupid'] });
    s = trainReducer(s, { type: 'start', agent: 'techne', examples: 42 });
    s = trainReducer(s, progress('techne', 2, 2));
    const techne = s.rows[0]!;
    expect(techne).toMatchObject({
      agent: 'techne',
      status: 'training',
      examples: 42,
      epoch: 2,
      epochs: 10,
      batch: 2,
      trainLoss: 0.25,
      examplesPerSec: 1234,
    });
    // 6 of 40 batches in 6 s: 34 left at one a second
    expect(techne.etaSec).toBeCloseTo(34, 9);
    expect(s.rows.map((r) => r.status)).toEqual(['training', 'waiting', 'waiting']);
    s = trainReducer(s, { type: 'skipped', agent: 'cupid', reason: '3 usable examples (needs at least 8)' });
    expect(progressLine(s.rows[2]!)).toBe('cupid: skipped — 3 usable examples (needs at least 8)');
    expect(progressLine(techne)).toBe(
      'techne: epoch 2/10 batch 2/4 · train loss 0.2500 · stop loss 0.6000 · 1234 ex/s · eta ≤ 34s',
    );
    // The routing head learns by its direct fit alone: no epochs to count.
    expect(progressLine({ ...techne, agent: 'hephaestus', status: 'trained', version: 1, epoch: 0 })).toBe(
      'hephaestus: trained v1 by its direct fit alone, train loss 0.2500',
    );
  });
});

const plan: TrainEvent = { type: 'plan', agents: ['techne', 'metis', 'cupid'] };

describe('training display (Ink)', () => {
  it('renders every column at 100 columns and follows the events', () => {
    let state = trainReducer(initialTrainState, plan);
    const app = render(<TrainView state={state} color={false} width={100} />);
    expect(app.lastFrame()).toMatch(/AGENT\s+STATUS\s+EXAMPLES\s+EPOCH\s+TRAIN LOSS\s+STOP LOSS\s+EX\/S\s+ETA/);
    expect(app.lastFrame()).toMatch(/techne\s+waiting/);
    for (const e of [{ type: 'start', agent: 'techne', examples: 42 } as const, progress('techne', 3, 1)])
      state = trainReducer(state, e);
    app.rerender(<TrainView state={state} color={false} width={100} />);
    expect(app.lastFrame()).toMatch(/techne\s+training\s+42\s+3\/10\s+0\.1667\s+0\.6000\s+1234\s+≤ \d+s/);
    app.unmount();
  });

  it('below 80 columns keeps agent, status, epoch, loss and ETA whole, each word intact', () => {
    let state = trainReducer(initialTrainState, plan);
    state = trainReducer(state, { type: 'start', agent: 'dokimasia' as never, examples: 10 });
    for (const width of [MIN_TRAIN_COLUMNS, 60]) {
      const app = render(
        <TrainView state={trainReducer(state, progress('techne', 3, 1))} color={false} width={width} />,
      );
      const lines = (app.lastFrame() ?? '').split('\n');
      expect(lines[0]).toMatch(/^AGENT\s+STATUS\s+EPOCH\s+LOSS\s+ETA$/);
      for (const l of lines) expect(l.length).toBeLessThanOrEqual(width);
      expect(lines.some((l) => /^metis\s+waiting\s+—/.test(l))).toBe(true);
      app.unmount();
    }
  });
});

describe('training display on a terminal (showTrain)', () => {
  it('the frame left at close is the last state: an agent skipped just before the end shows as skipped', async () => {
    const err = new PassThrough() as PassThrough & { isTTY: boolean; columns: number; rows: number };
    Object.assign(err, { isTTY: true, columns: 100, rows: 30 });
    let written = '';
    err.on('data', (b: Buffer) => (written += b.toString()));
    const ctx = { ...testCtx(), stderr: err as never };
    const display = showTrain(ctx, 100);
    display.push(plan);
    display.push({ type: 'start', agent: 'cupid', examples: 3 });
    display.push({ type: 'skipped', agent: 'cupid', reason: '3 usable examples (needs at least 8)' });
    await display.close();
    const frames = written.split(/\u001b\[\d*[A-Z]/).filter((f) => f.includes('cupid'));
    expect(frames.at(-1)).toMatch(/cupid\s+skipped/);
  });
});
