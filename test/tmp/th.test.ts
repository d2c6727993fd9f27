import { test } from 'vitest';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { trainedHome } from '../train/trained-home.js';
test('th', () => { const t0 = performance.now(); trainedHome(mkdtempSync(join(tmpdir(), 'th-'))); console.log('TRAINED HOME ms', performance.now() - t0); }, 300_000);
