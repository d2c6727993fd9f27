import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import indexCmd from '../../../src/commands/memoir/index-cmd.js';
import { resolveOptions } from '../../../src/run-command.js';
import { openIndex } from '../../../src/memoir-index/memoir-index.js';
import { removeDir, testCtx, type TestCtx } from '../../helpers/ctx.js';
import { synthLines } from '../../helpers/synth-lines.js';

/** `memoir index --full-text`: the full-text index a bulk load leaves to the first search, built at once. */
let ctx: TestCtx;
let file: string;
beforeEach(() => {
  ctx = testCtx();
  file = join(ctx.home, 'memoir.jsonl');
  const lines = synthLines(5, 13_000); // over 8 MiB: a bulk load
  writeFileSync(file, `${lines.join('\n')}\n`);
});
afterEach(() => removeDir(ctx.home));

const state = () => {
  const index = openIndex(ctx.home);
  try {
    return {
      unbuilt: index.withoutFullText().length,
      ftsRows: index.db.prepare('SELECT count(*) FROM entries_fts').pluck().get(),
      entries: index.db.prepare('SELECT count(*) FROM entries').pluck().get(),
    };
  } finally {
    index.close();
  }
};

describe('memoir index --full-text', () => {
  it('without it a bulk load leaves the full-text index unbuilt; with it (also on a later run) it is built', async () => {
    await indexCmd.run(await resolveOptions(indexCmd, { memoir: [file], json: true }), ctx);
    expect(state()).toMatchObject({ unbuilt: 1, ftsRows: 0 });
    await indexCmd.run(await resolveOptions(indexCmd, { memoir: [file], fullText: true, json: true }), ctx);
    const s = state();
    expect(s.unbuilt).toBe(0);
    expect(s.ftsRows).toBe(s.entries);
    await indexCmd.run(await resolveOptions(indexCmd, { memoir: [file], rebuild: true, fullText: true }), ctx);
    expect(state()).toMatchObject({ unbuilt: 0, ftsRows: s.entries });
  });
});
