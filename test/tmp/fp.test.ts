import { test } from 'vitest';
import { BaseModel } from '../../src/train/base-model.js';
import { builtinBaseSpec } from '../../src/train/base-spec.js';
test('fp', () => { console.log('FP', new BaseModel(builtinBaseSpec()).computeFingerprint()); });
