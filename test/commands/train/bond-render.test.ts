import { describe, expect, it } from 'vitest';
import bond, { type TrainBondResult } from '../../../src/commands/train/bond.js';
import { testCtx } from '../../helpers/ctx.js';

const result: TrainBondResult = {
  base_fingerprint: `sha256:${'ab'.repeat(32)}`,
  encoder: 'built-in hashed n-grams, 16384 features',
  settings: {} as TrainBondResult['settings'],
  memoirs: 8,
  agents: [
    {
      agent: 'techne',
      status: 'trained',
      version: 2,
      path: '/x',
      parent_version: 1,
      council_version: null,
      examples: { used: 102, train: 77, stopping: 17, validation: 8 } as never,
      scenes: {} as never,
      epochs: 9,
      best_epoch: 6,
      stopped_early: true,
      train_loss: 0.4321,
      validation_loss: 0.5432,
      direct: { lambda: 0.01, hold: 'without n-grams', chosen_by: 'cross-validation', reused: false },
      metric: {
        kind: 'pair',
        name: 'pairwise_accuracy',
        value: 0.81,
        n: 21,
        baselines: [
          { name: 'always_prefer_shorter', value: 0.52 },
          { name: 'always_prefer_revised', value: 0.5 },
        ],
      },
      metrics: [
        {
          kind: 'pair',
          name: 'pairwise_accuracy',
          value: 0.81,
          n: 21,
          baselines: [
            { name: 'always_prefer_shorter', value: 0.52 },
            { name: 'always_prefer_revised', value: 0.5 },
          ],
        },
      ],
      examples_per_sec: 900,
      unused: {},
    },
    { agent: 'cupid', status: 'skipped', reason: '6 usable examples (needs at least 8)', examples: 6, unused: {} },
  ],
};

const rendered = (columns: number | undefined): string => {
  const ctx = testCtx();
  Object.assign(ctx.stdout, { columns });
  return bond.render!(result, ctx);
};

describe('train bond: the result on terminals of any width', () => {
  it('a pipe gets the whole table', () => {
    expect(rendered(undefined)).toMatch(
      /^AGENT\s+EXAMPLES\s+TRAIN LOSS\s+VAL LOSS\s+VALIDATION\s+TRIVIAL BASELINES\s+ADAPTER/,
    );
  });

  it.for([60, 80, 100])('at %i columns no line is wider than the terminal and every word stays whole', (columns) => {
    const text = rendered(columns);
    for (const line of text.split('\n')) expect(line.length, line).toBeLessThanOrEqual(columns);
    const words = text.split(/\s+/);
    for (const w of ['techne', 'cupid', 'pairwise', '81%', 'shorter', 'usable', 'examples', 'unchanged'])
      expect(
        words.some((x) => x.replace(/[(),:·]/g, '') === w.replace(/[(),:·]/g, '')),
        w,
      ).toBe(true);
  });
});
