import { openStateDb } from '../../src/store/state-db.js';
import { AdapterStore } from '../../src/train/adapter-store.js';
import { BaseModel } from '../../src/train/base-model.js';
import { builtinBaseSpec } from '../../src/train/base-spec.js';
import { inputEncoder } from '../../src/train/encoder/inputs.js';
import type { Example } from '../../src/train/examples/types.js';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import { DEFAULT_SETTINGS, train } from '../../src/train/trainer.js';
import { plantedExamples, vocabularies } from './planted-fixture.js';

/**
 * A home with trained adapters over the built-in base (trained in-process, registered the way
 * `train bond` registers them): techne bond v1 (type annotations), v2 (early returns) and
 * hephaestus bond v1 (routing by task words).
 */
export const ROUTE_TASKS: [string, Extract<Example, { kind: 'route' }>['label']][] = [
  ['write tests for the', 'dokimasia'],
  ['add a property test covering', 'dokimasia'],
  ['plan the migration of', 'metis'],
  ['outline the steps to split', 'metis'],
  ['implement the', 'techne'],
  ['refactor the function in', 'techne'],
  ['review the naming style of', 'kallos'],
];

export function trainedHome(home: string): void {
  const base = new BaseModel(builtinBaseSpec());
  const enc = inputEncoder(base.spec);
  const encode = (t: string) => enc(t, null);
  const v = vocabularies();
  const db = openStateDb(home);
  const store = new AdapterStore(home, db, { spec: base.spec, fingerprint: BUILTIN_FINGERPRINT });
  const save = (agent: 'techne' | 'hephaestus', examples: Example[], at: string): void => {
    const out = train(base, encode, { agent, kind: 'bond', examples, frozen: [], settings: DEFAULT_SETTINGS });
    if (out.status !== 'trained') throw new Error(out.reason);
    store.save({
      agent,
      kind: 'bond',
      lora: out.lora,
      alpha: DEFAULT_SETTINGS.alpha,
      origin: 'trained',
      metrics: { examples: out.report.examples, metric: out.report.metrics[0] ?? null },
      dataWindow: {},
      createdAt: at,
    });
  };
  save('techne', plantedExamples('type_annotations', { seed: 3, n: 30, vocab: v.train }), '2026-11-22T09:00:00.000Z');
  save('techne', plantedExamples('early_returns', { seed: 3, n: 30, vocab: v.train }), '2026-11-22T10:00:00.000Z');
  const routes: Example[] = Array.from({ length: 140 }, (_, i) => {
    const [t, label] = ROUTE_TASKS[i % ROUTE_TASKS.length]!;
    return {
      agent: 'hephaestus',
      entryId: `r${i}`,
      scene: `s${i}`,
      weight: 1,
      taskType: null,
      kind: 'route',
      text: `${t} ${v.train[i]} ${v.train[i + 1]}`,
      label,
    };
  });
  save('hephaestus', routes, '2026-11-22T10:00:00.000Z');
  db.close();
}
