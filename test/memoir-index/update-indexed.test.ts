import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { updateIndexed, type IndexFeedback } from '../../src/memoir-index/indexed.js';
import { openIndex } from '../../src/memoir-index/memoir-index.js';
import { MemoirQueries } from '../../src/memoir-index/memoir-queries.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { synthLines } from '../helpers/synth-lines.js';

/** The synchronous update a lazily built view uses reports as openIndexed does, file ids in path order. */
describe('updateIndexed', () => {
  let home: string;
  beforeEach(() => {
    home = tempDir();
  });
  afterEach(() => removeDir(home));

  it('indexes the paths, returns their file ids in order and reports skipped lines and a torn tail', () => {
    mkdirSync(join(home, 'm'), { recursive: true });
    const a = join(home, 'm', 'a.jsonl');
    const b = join(home, 'm', 'b.jsonl');
    writeFileSync(a, synthLines(1, 20).join('\n') + '\n');
    writeFileSync(b, [...synthLines(2, 10), '{"not": "an entry"}'].join('\n') + '\n');
    appendFileSync(b, '{"torn');
    const heard: string[] = [];
    const feedback: IndexFeedback = {
      skipped: (n, memoirs) => heard.push(`skipped ${n} in ${memoirs}`),
      torn: (path, bytes) => heard.push(`torn ${path === b ? 'b' : path} ${bytes}`),
    };
    const index = openIndex(home);
    try {
      const first = updateIndexed(index, [b, a], feedback);
      expect(first.updates.map((u) => u.path)).toEqual([b, a]);
      expect(first.fileIds).toEqual(first.updates.map((u) => u.fileId));
      expect(first.invalidLines).toBe(1);
      expect(heard).toEqual(['skipped 1 in 2', 'torn b 6']);
      expect(new MemoirQueries(index).invalidLines([first.fileIds[1] as number])).toBe(0);
      const again = updateIndexed(index, [a]);
      expect(again.fileIds).toEqual([first.fileIds[1]]);
      expect(again.updates[0]?.newEntries).toBe(0);
    } finally {
      index.close();
    }
  });
});
