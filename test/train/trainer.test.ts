import { describe, expect, it } from 'vitest';
import { BaseModel } from '../../src/train/base-model.js';
import type { Example } from '../../src/train/examples/types.js';
import { sceneRoles } from '../../src/train/scene-split.js';
import { DEFAULT_SETTINGS, train, type TrainOutcome } from '../../src/train/trainer.js';
import { smallBase } from './helpers.js';
import { plantedExamples, vocabularies } from './planted-fixture.js';

const v = vocabularies();
const quick = { ...DEFAULT_SETTINGS, epochs: 6 };

function trained(o: TrainOutcome): Extract<TrainOutcome, { status: 'trained' }> {
  if (o.status !== 'trained') throw new Error(`skipped: ${o.reason}`);
  return o;
}

describe('trainer', () => {
  const { base, encode } = smallBase(256, 16);

  it('same data and seed: identical adapters; another seed: different', () => {
    const examples = plantedExamples('early_returns', { seed: 3, n: 24, vocab: v.train });
    const job = { agent: 'techne' as const, kind: 'bond' as const, examples, frozen: [], settings: quick };
    const a = trained(train(base, encode, job));
    const b = trained(train(new BaseModel(base.spec), encode, job));
    expect(Buffer.from(b.lora.all.buffer).equals(Buffer.from(a.lora.all.buffer))).toBe(true);
    const c = trained(train(base, encode, { ...job, settings: { ...quick, seed: 8 } }));
    expect(Buffer.from(c.lora.all.buffer).equals(Buffer.from(a.lora.all.buffer))).toBe(false);
  });

  it('the order examples come in does not change the validation split', () => {
    const examples = plantedExamples('early_returns', { seed: 3, n: 24, vocab: v.train });
    const a = trained(train(base, encode, { agent: 'techne', kind: 'bond', examples, frozen: [], settings: quick }));
    const b = trained(
      train(base, encode, {
        agent: 'techne',
        kind: 'bond',
        examples: [...examples].reverse(),
        frozen: [],
        settings: quick,
      }),
    );
    expect(b.report.examples.validation).toBe(a.report.examples.validation);
    expect(b.report.scenes).toEqual(a.report.scenes);
  });

  it('skips an agent with too few examples, or too few scenes to hold some out, saying why', () => {
    const few = plantedExamples('early_returns', { seed: 3, n: 5, vocab: v.train });
    const out = train(base, encode, { agent: 'techne', kind: 'bond', examples: few, frozen: [], settings: quick });
    expect(out).toMatchObject({ status: 'skipped', reason: '5 usable examples (needs at least 8)' });
    const oneScene = plantedExamples('early_returns', { seed: 3, n: 10, vocab: v.train }).map((e) => ({
      ...e,
      scene: 'only',
    }));
    expect(
      train(base, encode, { agent: 'techne', kind: 'bond', examples: oneScene, frozen: [], settings: quick }),
    ).toMatchObject({
      status: 'skipped',
      reason: '10 examples in 1 scene (needs three: to train, to stop early, to validate)',
    });
  });

  it('counts examples its head cannot use, by reason', () => {
    const examples: Example[] = [
      ...plantedExamples('early_returns', { seed: 3, n: 12, vocab: v.train }),
      {
        agent: 'techne',
        entryId: 'r',
        scene: 's',
        weight: 1,
        taskType: null,
        kind: 'route',
        text: 'x',
        label: 'techne',
      },
      { agent: 'techne', entryId: 'w', scene: 's', weight: 0, taskType: null, kind: 'binary', text: 'x', label: 1 },
    ];
    const o = trained(train(base, encode, { agent: 'techne', kind: 'bond', examples, frozen: [], settings: quick }));
    expect(o.report.examples.skipped).toEqual({ 'route label for a scoring head': 1, 'non-positive weight': 1 });
    expect(o.report.examples.used).toBe(12);
  });

  it('stops early when validation stops improving, and keeps the best epoch', () => {
    const examples = plantedExamples('early_returns', { seed: 3, n: 30, shuffle: true, vocab: v.train });
    const o = trained(
      train(base, encode, {
        agent: 'techne',
        kind: 'bond',
        examples,
        frozen: [],
        settings: { ...DEFAULT_SETTINGS, epochs: 200, patience: 3 },
      }),
    );
    expect(o.report.stoppedEarly).toBe(true);
    expect(o.report.epochs).toBe(o.report.bestEpoch + 3);
  });

  it('reports progress after every batch, and stops when asked', () => {
    const examples = plantedExamples('early_returns', { seed: 3, n: 100, vocab: v.train });
    const seen: number[] = [];
    const out = train(
      base,
      encode,
      { agent: 'techne', kind: 'bond', examples, frozen: [], settings: quick },
      { onProgress: (p) => seen.push(p.epoch * 100 + p.batch), shouldStop: () => seen.length >= 3 },
    );
    expect(out).toMatchObject({ status: 'skipped', reason: 'stopped' });
    expect(seen).toEqual([101, 102, 103]);
  });

  it('routing: Hephaestus learns which specialist takes which task, beating the majority class', () => {
    const tasks: [string, Extract<Example, { kind: 'route' }>['label']][] = [
      ['write tests for the', 'dokimasia'],
      ['add a property test covering', 'dokimasia'],
      ['plan the migration of', 'metis'],
      ['outline the steps to split', 'metis'],
      ['implement the', 'techne'],
      ['refactor the function in', 'techne'],
      ['review the naming style of', 'kallos'],
    ];
    const examples: Example[] = [];
    for (let i = 0; i < 140; i++) {
      const [t, label] = tasks[i % tasks.length]!;
      examples.push({
        agent: 'hephaestus',
        entryId: `r${i}`,
        scene: `s${i}`,
        weight: 1,
        taskType: null,
        kind: 'route',
        text: `${t} ${v.train[i]} ${v.train[i + 1]}`,
        label,
      });
    }
    const o = trained(
      train(base, encode, {
        agent: 'hephaestus',
        kind: 'bond',
        examples,
        frozen: [],
        settings: { ...DEFAULT_SETTINGS },
      }),
    );
    const m = o.report.metrics[0]!;
    expect(m).toMatchObject({ kind: 'route', name: 'accuracy' });
    expect(m.value).toBeGreaterThan(0.9);
    expect(m.baselines[0]!.value).toBeLessThan(0.5);
  });
});

describe('held-out scenes', () => {
  it('never split a scene; stopping and validation each get about half the held-out share; order does not matter', () => {
    const scenes = Array.from({ length: 1000 }, (_, i) => `session-${i % 7}.turn-${i}`);
    const roles = sceneRoles(scenes, 0.3, 7)!;
    const count = (r: string) => [...roles.values()].filter((x) => x === r).length;
    expect(count('stop') / 1000).toBeGreaterThan(0.11);
    expect(count('stop') / 1000).toBeLessThan(0.19);
    expect(count('validate') / 1000).toBeGreaterThan(0.11);
    expect(count('validate') / 1000).toBeLessThan(0.19);
    expect(sceneRoles([...scenes].reverse(), 0.3, 7)).toEqual(roles);
    expect(sceneRoles(scenes, 0.3, 8)).not.toEqual(roles);
  });

  it('three scenes: one of each role; fewer: none', () => {
    expect([...sceneRoles(['a', 'b', 'c'], 0.3, 7)!.values()].sort()).toEqual(['stop', 'train', 'validate']);
    expect([...sceneRoles(['a', 'b', 'c'], 0.99, 7)!.values()].sort()).toEqual(['stop', 'train', 'validate']);
    expect(sceneRoles(['a', 'b'], 0.3, 7)).toBeNull();
  });
});
