import { appendFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { derivedId } from '../../src/memoir/format/entry-id.js';
import { openIndex } from '../../src/memoir-index/memoir-index.js';
import { workerAvailable } from '../../src/memoir-index/index-pipeline.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { synthLines } from '../helpers/synth-lines.js';

/**
 * A bulk build parses in a worker thread while the main thread inserts. It must index exactly
 * what the single-threaded build indexes: same rows (derived ids of identical Python lines
 * numbered across batches), same invalid lines, same hashes, same full-text matches.
 */
let dir: string;
let file: string;
let lines: string[];
beforeEach(() => {
  dir = tempDir();
  file = join(dir, 'memoir.jsonl');
  lines = synthLines(11, 14_000); // over 8 MiB: a bulk load, several 10k batches
  const python = lines.find((l) => !l.includes('"entry_id"')) as string;
  // The same Python line three times more, across batch boundaries; lines that are not entries; blank lines.
  lines.splice(12_500, 0, python);
  lines.splice(10_001, 0, python, '{"not": "an entry"}');
  lines.splice(5_000, 0, python, '{broken json', '');
  writeFileSync(file, `${lines.join('\n')}\n\n`);
  appendFileSync(file, '{"scene_id": "torn'); // a torn tail is never indexed
});
afterEach(() => removeDir(dir));

function snapshot(home: string) {
  const index = openIndex(home);
  try {
    const db = index.db;
    const deferred = index.withoutFullText().length; // a bulk load leaves the full-text rows to the first text query
    index.requireFullText();
    return {
      entries: db.prepare('SELECT * FROM entries ORDER BY seq').all(),
      problems: db.prepare('SELECT * FROM problems ORDER BY line').all(),
      chunks: db.prepare('SELECT chunk, hash FROM chunks ORDER BY chunk').all(),
      file: db.prepare('SELECT indexed_bytes, indexed_lines, head_hash, tail_start, tail_hash FROM files').all(),
      text: db
        .prepare("SELECT rowid FROM entries_fts WHERE entries_fts MATCH 'naming OR plan*' ORDER BY rowid")
        .pluck()
        .all(),
      indexes: db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'entries' ORDER BY name")
        .pluck()
        .all(),
      deferred,
    };
  } finally {
    index.close();
  }
}

describe('bulk index build in two threads', () => {
  it('indexes exactly what the single-threaded build indexes', async () => {
    expect(workerAvailable()).toBe(true); // the compiled worker (npm test builds first)
    const one = join(dir, 'home-one');
    const two = join(dir, 'home-two');
    const a = openIndex(one);
    const [sequential] = a.update([file]); // synchronous: never a worker
    a.close();
    const b = openIndex(two);
    const [parallel] = await b.build([file]);
    b.close();
    expect(sequential?.parallel).toBeUndefined();
    expect(parallel?.parallel).toBe(true);
    expect(parallel?.newEntries).toBe(lines.length - 3); // all but the blank, the broken and the not-an-entry line
    expect(parallel?.newProblems).toBe(2);
    expect(parallel?.tornTailBytes).toBe('{"scene_id": "torn'.length);
    const s1 = snapshot(one);
    const s2 = snapshot(two);
    expect(s2).toEqual(s1);
    expect(s2.entries.length).toBe(parallel?.newEntries);
    expect(s2.text.length).toBeGreaterThan(0);
    expect(s2.deferred).toBe(1);
    expect(s2.indexes).toContain('entries_base_id');
    // Identical Python lines: the first keeps the derived id, the next get ~2, ~3, ~4 (independent oracle: derivedId).
    const python = lines[5_000] as string;
    const ids = (s2.entries as { entry_id: string; line: number }[])
      .filter((r) => r.entry_id.startsWith(derivedId(python)))
      .map((r) => r.entry_id);
    expect(ids).toEqual([derivedId(python, 1), derivedId(python, 2), derivedId(python, 3), derivedId(python, 4)]);
  });
});

describe('cancelling a bulk build', () => {
  it('can stop between the index builds at the end; everything is rolled back, the secondary indexes included', async () => {
    const home = join(dir, 'home');
    const index = openIndex(home);
    const before = index.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name").pluck().all();
    const size = statSync(file).size - '{"scene_id": "torn'.length;
    let atEnd = 0;
    const stop = new Error('cancelled');
    // Every entry is read by the time the indexes are built: count the checkpoints after that.
    await expect(
      index.build([file], {
        checkpoint: async (done) => {
          if (done >= size - 1 && ++atEnd === 4) throw stop;
        },
      }),
    ).rejects.toBe(stop);
    expect(index.db.prepare('SELECT count(*) FROM entries').pluck().get()).toBe(0);
    expect(index.file(file)?.indexed_bytes ?? 0).toBe(0);
    expect(index.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' ORDER BY name").pluck().all()).toEqual(
      before,
    );
    const [again] = await index.build([file]);
    expect(again?.newEntries).toBe(lines.length - 3);
    index.close();
  });
});
