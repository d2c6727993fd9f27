import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors.js';
import { mulberry32 } from '../../src/runtime/seeded-random.js';
import { openStateDb } from '../../src/store/state-db.js';
import { AdapterStore } from '../../src/train/adapter-store.js';
import { trainCouncil } from '../../src/train/council-training.js';
import { initLora } from '../../src/train/lora.js';
import { openTextEncoder } from '../../src/train/text-encoder.js';
import { TrainerWorker } from '../../src/train/train-in-worker.js';
import { trainBonds, type TrainEvent } from '../../src/train/train-bond.js';
import { DEFAULT_SETTINGS } from '../../src/train/trainer.js';
import { assertBuilt } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { plantedExamples, vocabularies } from './planted-fixture.js';

const v = vocabularies();
const settings = { ...DEFAULT_SETTINGS, epochs: 4 };
const cleanup: (() => void | Promise<void>)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function setup(signal = new AbortController().signal) {
  const home = tempDir('kourai-train-');
  const db = openStateDb(home);
  const encoder = await openTextEncoder({ kind: 'builtin' }, { home, env: {}, signal });
  const store = new AdapterStore(home, db, { spec: encoder.spec, fingerprint: encoder.fingerprint });
  const worker = new TrainerWorker(signal);
  cleanup.push(
    () => removeDir(home),
    () => void db.close(),
    () => worker.close(),
  );
  return { home, db, encoder, store, worker };
}

const techneData = () => ({
  examples: plantedExamples('early_returns', { seed: 3, n: 30, vocab: v.train }),
  skipped: { no_label: 2 },
  window: { memoirs: 1 },
});

describe('train bond (service)', () => {
  beforeAll(() => assertBuilt());

  it('trains agents with data over their current council adapter, skips the rest with a reason, and registers versions', async () => {
    const { encoder, store, worker } = await setup();
    const council = store.save({
      agent: 'techne',
      kind: 'council',
      lora: initLora({ inDim: encoder.base.inDim, hidden: encoder.base.hidden, out: 1, rank: 4 }, mulberry32(1)),
      alpha: 8,
      origin: 'federation',
      metrics: {},
      dataWindow: {},
      createdAt: '2026-11-22T09:00:00.000Z',
    });
    const events: TrainEvent['type'][] = [];
    const results = await trainBonds({
      agents: ['techne', 'cupid'],
      settings,
      data: (agent) => (agent === 'techne' ? techneData() : { examples: [], skipped: {}, window: {} }),
      encoder,
      store,
      worker,
      now: () => new Date('2026-11-22T10:00:00.000Z'),
      onEvent: (e) => events.push(e.type),
    });
    expect(results.map((r) => [r.agent, r.status])).toEqual([
      ['techne', 'trained'],
      ['cupid', 'skipped'],
    ]);
    const techne = results[0]!;
    if (techne.status !== 'trained') throw new Error('unreachable');
    expect(techne).toMatchObject({ version: 1, parent_version: null, council_version: council.version });
    expect(techne.metric?.name).toBe('pairwise_accuracy');
    expect(results[1]).toMatchObject({ reason: '0 usable examples (needs at least 8)' });
    expect(events[0]).toBe('plan');
    expect(events).toContain('progress');
    const row = store.registry.current('techne', 'bond')!;
    expect(row.version).toBe(1);
    expect(row.dataWindow).toEqual({ view: 'bond', memoirs: 1, skipped: { no_label: 2 } });
    expect(row.metrics).toMatchObject({ council_version: 1, settings: { epochs: 4 } });
  });

  it("a council adapter that did not help on the player's held-out scenes is left out of the bond's training", async () => {
    const { encoder, store, worker } = await setup();
    const validation = {
      bond_version: null,
      scenes: 3,
      examples: 12,
      before: null,
      passed: false,
      choice: { overall: { lean: 0, examples: 12, baseline: 0, reason: 'not_better', scores: [] }, byTaskType: {} },
    };
    store.save({
      agent: 'techne',
      kind: 'council',
      lora: initLora({ inDim: encoder.base.inDim, hidden: encoder.base.hidden, out: 1, rank: 4 }, mulberry32(1)),
      alpha: 8,
      origin: 'federation',
      metrics: { validation },
      dataWindow: {},
      createdAt: '2026-11-22T09:00:00.000Z',
    });
    const [techne] = await trainBonds({
      agents: ['techne'],
      settings,
      data: () => techneData(),
      encoder,
      store,
      worker,
      now: () => new Date('2026-11-22T10:00:00.000Z'),
    });
    expect(techne).toMatchObject({ status: 'trained', council_version: null });
    expect(store.registry.current('techne', 'bond')!.metrics).toMatchObject({ council_version: null });
  });

  it('a second run on the same data reuses the λ the first chose (recorded with the version) and trains the same adapter', async () => {
    const { encoder, store, worker } = await setup();
    const run = () =>
      trainBonds({
        agents: ['techne'],
        settings,
        data: techneData,
        encoder,
        store,
        worker,
        now: () => new Date('2026-11-22T10:00:00.000Z'),
      });
    await run();
    const v1 = store.loadCurrent('techne', 'bond')!;
    expect(v1.row.metrics).toMatchObject({ direct: { chosen_by: 'cross-validation', reused: false } });
    await run();
    const v2 = store.loadCurrent('techne', 'bond')!;
    expect(v2.row.version).toBe(2);
    const d1 = (v1.row.metrics as { direct: { digest: string; lambda: number } }).direct;
    expect(v2.row.metrics).toMatchObject({ direct: { digest: d1.digest, lambda: d1.lambda, reused: true } });
    expect(Buffer.from(v2.lora.all.buffer).equals(Buffer.from(v1.lora.all.buffer))).toBe(true);
  });

  it('Ctrl-C mid-training: CancelledError; the agent in training keeps its previous version', async () => {
    const ac = new AbortController();
    const { encoder, store, worker } = await setup(ac.signal);
    const first = await trainBonds({
      agents: ['techne'],
      settings,
      data: techneData,
      encoder,
      store,
      worker: await freshWorker(),
      now: () => new Date(),
      onEvent: () => undefined,
    });
    expect(first[0]!.status).toBe('trained');
    const run = trainBonds({
      agents: ['techne'],
      settings: { ...settings, epochs: 10_000, patience: 10_000 },
      data: techneData,
      encoder,
      store,
      worker,
      now: () => new Date(),
      onEvent: (e) => {
        if (e.type === 'progress') ac.abort();
      },
    });
    await expect(run).rejects.toBeInstanceOf(CancelledError);
    expect(store.registry.current('techne', 'bond')!.version).toBe(1);
    expect(store.registry.list({ agent: ['techne'] })).toHaveLength(1);
    expect(store.loadCurrent('techne', 'bond')!.row.version).toBe(1);
  });
});

async function freshWorker(): Promise<TrainerWorker> {
  const w = new TrainerWorker(new AbortController().signal);
  cleanup.push(() => w.close());
  return w;
}

describe('council training (the federation round calls it)', () => {
  beforeAll(() => assertBuilt());

  it('starts from the given council adapter, applies no bond, and refuses Cupid and Puck', async () => {
    const { encoder, worker } = await setup();
    const start = initLora(
      { inDim: encoder.base.inDim, hidden: encoder.base.hidden, out: 1, rank: settings.rank },
      mulberry32(5),
    );
    for (let i = 0; i < start.headB.length; i++) start.headB[i] = 0.1;
    const examples = plantedExamples('type_annotations', { seed: 4, n: 30, vocab: v.train });
    const a = await trainCouncil({ base: encoder.base, agent: 'techne', examples, start, settings, worker });
    const b = await trainCouncil({ base: encoder.base, agent: 'techne', examples, start, settings, worker });
    if (a.status !== 'trained' || b.status !== 'trained') throw new Error('expected training');
    expect(Buffer.from(a.lora.all.buffer).equals(Buffer.from(b.lora.all.buffer))).toBe(true);
    expect(a.report.kind).toBe('council');
    // it moved away from the start, and the start is not modified
    expect(a.lora.headB.some((x, i) => x !== start.headB[i])).toBe(true);
    expect(Array.from(start.headB).every((x) => x === 0.1)).toBe(true);
    await expect(
      trainCouncil({ base: encoder.base, agent: 'cupid', examples, start: null, settings, worker }),
    ).rejects.toThrow(/bond-only/);
  });
});
