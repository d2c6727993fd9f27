import { beforeAll, describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors.js';
import { DEFAULT_SETTINGS, train } from '../../src/train/trainer.js';
import { TrainerWorker } from '../../src/train/train-in-worker.js';
import type { EpochProgress } from '../../src/train/trainer.js';
import { assertBuilt } from '../helpers/bin.js';
import { smallBase } from './helpers.js';
import { plantedExamples, vocabularies } from './planted-fixture.js';

const v = vocabularies();

describe('training off the main thread', () => {
  beforeAll(() => assertBuilt());

  it('gives byte for byte the adapter in-process training gives, with progress on the way', async () => {
    const { base, encode } = smallBase(256, 16);
    const examples = plantedExamples('early_returns', { seed: 3, n: 40, vocab: v.train });
    const settings = { ...DEFAULT_SETTINGS, epochs: 5 };
    const local = train(base, encode, { agent: 'techne', kind: 'bond', examples, frozen: [], settings });
    const worker = new TrainerWorker(new AbortController().signal);
    const seen: EpochProgress[] = [];
    try {
      const remote = await worker.train(
        base.spec,
        { agent: 'techne', kind: 'bond', examples, settings, start: null, frozen: [] },
        { onProgress: (p) => seen.push(p) },
      );
      if (local.status !== 'trained' || remote.status !== 'trained') throw new Error('expected both to train');
      expect(Buffer.from(remote.lora.buffer).equals(Buffer.from(local.lora.all.buffer))).toBe(true);
      expect(remote.report.metrics).toEqual(local.report.metrics);
      // the end of every epoch is always reported
      expect(seen.filter((p) => p.batch === p.batches).map((p) => p.epoch)).toEqual(
        Array.from({ length: local.report.epochs }, (_, i) => i + 1),
      );
    } finally {
      await worker.close();
    }
  });

  it('stops at once when the signal aborts, rejecting with CancelledError', async () => {
    const { base } = smallBase(256, 16);
    const examples = plantedExamples('early_returns', { seed: 3, n: 400, vocab: v.train });
    const ac = new AbortController();
    const worker = new TrainerWorker(ac.signal);
    const job = worker.train(
      base.spec,
      {
        agent: 'techne',
        kind: 'bond',
        examples,
        settings: { ...DEFAULT_SETTINGS, epochs: 10_000, patience: 10_000 },
        start: null,
        frozen: [],
      },
      { onProgress: () => ac.abort() },
    );
    await expect(job).rejects.toBeInstanceOf(CancelledError);
    await expect(
      worker.train(base.spec, {
        agent: 'techne',
        kind: 'bond',
        examples,
        settings: DEFAULT_SETTINGS,
        start: null,
        frozen: [],
      }),
    ).rejects.toBeInstanceOf(CancelledError);
    await worker.close();
  });
});
