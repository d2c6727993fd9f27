import { test } from 'vitest';
import { BaseModel } from '../../src/train/base-model.js';
import { builtinBaseSpec } from '../../src/train/base-spec.js';
import { inputEncoder } from '../../src/train/encoder/inputs.js';
import { localDatasets } from '../../src/train/datasets/local.js';
import { examplesFromLines, evaluateSplit } from '../../src/train/datasets/held-out.js';
import { DEFAULT_SETTINGS } from '../../src/train/trainer.js';

test('exp', () => {
  const spec = builtinBaseSpec();
  const base = new BaseModel(spec);
  const enc = inputEncoder(spec);
  const limit = Number(process.env.LIMIT ?? 600);
  const epochs = Number(process.env.EPOCHS ?? 0);
  for (const f of localDatasets(process.env)) {
    if (f.status !== 'found') { console.log('MISSING', f.name, f.reason); continue; }
    if (process.env.DS && !f.dataset.name.startsWith(process.env.DS)) continue;
    const conv = f.dataset.convert({ limit });
    const { examples, cases } = examplesFromLines(conv.lines, f.dataset.agent);
    console.log(f.dataset.name, 'pairs', conv.pairs, 'skipped', conv.skipped, 'examples', examples.length, [...new Set(examples.map(e=>e.kind))]);
    for (let s = 0; s < Number(process.env.SPLITS ?? 2); s++) {
      const r = evaluateSplit(examples, cases, { base, encode: enc, agent: f.dataset.agent, settings: { ...DEFAULT_SETTINGS, epochs, heldOutFraction: 0.2 }, splits: 2, testFraction: 0.2 }, s);
      console.log(JSON.stringify(r));
    }
  }
}, 600_000);
