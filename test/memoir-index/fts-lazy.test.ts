import { appendFileSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CancelledError } from '../../src/errors.js';
import { openIndex, type MemoirIndex } from '../../src/memoir-index/memoir-index.js';
import { searchEntries } from '../../src/memoir-index/search.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { synthLines } from '../helpers/synth-lines.js';

/**
 * The full-text index is built lazily: a bulk load writes no FTS
 * rows, the first text query builds them from the memoir. A text query must answer exactly what
 * it answers over an eagerly built FTS — the oracle here is the same memoir indexed while it grew,
 * in slices small enough that every run is incremental (rows and FTS rows written together).
 */
const python = readFileSync(new URL('../fixtures/memoir/python-written.jsonl', import.meta.url), 'utf8')
  .trim()
  .split('\n');

function generatedLines(seed: number, n: number): string[] {
  const lines = synthLines(seed, n);
  lines.length = n;
  // Python-written lines (derived ids, non-canonical spellings, emoji, escapes), text outside ASCII, a line that is not an entry.
  lines.splice(Math.floor(n / 3), 0, ...python);
  const first = JSON.parse(lines[7] as string) as Record<string, unknown>;
  lines.splice(
    9000,
    0,
    JSON.stringify({
      ...first,
      entry_id: '01M3VCAZ7Y3T5Q9B6HQP9WD1P1',
      agent_proposed: 'Renommer la café-fonction: naïve naming, 命名 naming',
    }),
    '{"not": "an entry"}',
  );
  return lines;
}

/** Seeded words of the memoir's text, and a few fixed queries (prefixes, several words, accents). */
function queries(lines: readonly string[], seed: number): string[] {
  let x = seed >>> 0;
  const next = () => (x = (Math.imul(x, 1664525) + 1013904223) >>> 0);
  const words = lines
    .join(' ')
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length >= 3);
  const picked = Array.from({ length: 16 }, () => words[next() % words.length] as string);
  return [...picked, 'naming', 'nam', 'plan tests', 'cafe', 'naive', '命名', 'dry run', 'aidos'];
}

let dir: string;
let lazyFile: string;
let lines: string[];
const opened: MemoirIndex[] = [];
const open = (home: string): MemoirIndex => {
  const i = openIndex(join(dir, home));
  opened.push(i);
  return i;
};

beforeEach(() => {
  dir = tempDir();
  lazyFile = join(dir, 'lazy', 'memoir.jsonl');
  lines = generatedLines(11, 14_000); // over 8 MiB: a bulk load
  mkdirSync(join(dir, 'lazy'));
  writeFileSync(lazyFile, `${lines.join('\n')}\n`, { flag: 'w' });
});
afterEach(() => {
  for (const i of opened.splice(0)) i.close();
  removeDir(dir);
});

/** The oracle: the memoir indexed while it grew, 1,500 lines at a time (every run incremental: FTS rows written with the rows). */
function eagerIndex(upTo: readonly string[], name = 'eager'): { index: MemoirIndex; fileId: number } {
  const index = open(`home-${name}`);
  const eagerFile = join(dir, name, 'memoir.jsonl');
  mkdirSync(join(dir, name), { recursive: true });
  writeFileSync(eagerFile, '');
  let fileId = 0;
  for (let i = 0; i < upTo.length; i += 1500) {
    appendFileSync(eagerFile, `${upTo.slice(i, i + 1500).join('\n')}\n`);
    const [u] = index.update([eagerFile]);
    fileId = u?.fileId as number;
  }
  expect(index.withoutFullText()).toEqual([]);
  return { index, fileId };
}

/** What each query answers: matching lines (every revision), and the ranked search (lines, total). */
function answers(index: MemoirIndex, fileId: number, qs: readonly string[]) {
  return qs.map((q) => ({
    q,
    lines: index.query({ files: [fileId], text: q }).map((r) => r.line),
    search: ((r) => ({ total: r.total, lines: r.hits.map((h) => h.row.line), scores: r.hits.map((h) => h.score) }))(
      searchEntries(index, q, { files: [fileId], latestOnly: true }, 50),
    ),
  }));
}

const ftsRows = (index: MemoirIndex): number =>
  index.db.prepare('SELECT count(*) AS n FROM entries_fts').pluck().get() as number;

describe('the full-text index, built lazily', () => {
  it('a bulk load writes no FTS rows; the first text query answers exactly what an eager FTS answers', async () => {
    const lazy = open('home-lazy');
    const [u] = await lazy.build([lazyFile]);
    expect(u?.parallel).toBe(true);
    expect(ftsRows(lazy)).toBe(0);
    expect(lazy.withoutFullText()).toEqual([{ fileId: u?.fileId, path: lazyFile, bytes: statSync(lazyFile).size }]);
    const eager = eagerIndex(lines);
    const qs = queries(lines, 7);
    const want = answers(eager.index, eager.fileId, qs);
    expect(want.filter((a) => a.lines.length > 0).length).toBeGreaterThan(15); // the queries find things
    expect(answers(lazy, u?.fileId as number, qs)).toEqual(want);
    expect(lazy.withoutFullText()).toEqual([]);
    expect(ftsRows(lazy)).toBe(u?.newEntries);
  });

  it('the async build (worker thread) gives the same rows as the synchronous one', async () => {
    const a = open('home-a');
    const b = open('home-b');
    const [ua] = await a.build([lazyFile]);
    const [ub] = await b.build([lazyFile]);
    await a.buildFullText([ua?.fileId as number]);
    b.requireFullText([ub?.fileId as number]);
    const rows = (i: MemoirIndex) =>
      i.db
        .prepare("SELECT rowid FROM entries_fts WHERE entries_fts MATCH 'naming OR plan* OR 命名' ORDER BY rowid")
        .pluck()
        .all();
    expect(rows(a)).toEqual(rows(b));
    expect(rows(a).length).toBeGreaterThan(100);
    expect(a.withoutFullText()).toEqual([]);
  });

  it('after an incremental append: before and after the FTS was built', async () => {
    const more = generatedLines(99, 1200).slice(0, 1200);
    const qs = queries([...lines, ...more], 3);
    // (a) built, then the memoir grows: the incremental run writes the new FTS rows with the rows
    const built = open('home-built');
    const [u1] = await built.build([lazyFile]);
    built.requireFullText();
    // (b) not built yet when the memoir grows: the append writes none, the first query builds all
    const unbuilt = open('home-unbuilt');
    const [u2] = await unbuilt.build([lazyFile]);
    appendFileSync(lazyFile, `${more.join('\n')}\n`);
    const [a1] = await built.build([lazyFile]);
    const [a2] = await unbuilt.build([lazyFile]);
    expect(a1?.newEntries).toBe(more.length);
    expect(a2?.newEntries).toBe(more.length);
    expect(built.withoutFullText()).toEqual([]);
    expect(unbuilt.withoutFullText().map((f) => f.fileId)).toEqual([u2?.fileId]);
    expect(ftsRows(unbuilt)).toBe(0);
    const eager = eagerIndex([...lines, ...more]);
    const want = answers(eager.index, eager.fileId, qs);
    expect(answers(built, u1?.fileId as number, qs)).toEqual(want);
    expect(answers(unbuilt, u2?.fileId as number, qs)).toEqual(want);
  });

  it('two memoirs, one appended to after the bulk load (its rows no longer consecutive): each answers as eagerly indexed', async () => {
    const other = join(dir, 'lazy', 'other.jsonl');
    const otherLines = generatedLines(5, 2000).slice(0, 2000);
    writeFileSync(other, `${otherLines.join('\n')}\n`);
    const index = open('home');
    const [a, b] = await index.build([lazyFile, other]);
    expect(
      index
        .withoutFullText()
        .map((f) => f.fileId)
        .sort(),
    ).toEqual([a?.fileId, b?.fileId].sort());
    const more = generatedLines(99, 1200).slice(0, 1200);
    appendFileSync(lazyFile, `${more.join('\n')}\n`);
    appendFileSync(other, `${more.slice(0, 300).join('\n')}\n`);
    await index.build([other, lazyFile]); // the other memoir's new rows come first: the first memoir's seqs now have a gap
    const qs = queries([...lines, ...more], 4);
    const linesOf = (i: MemoirIndex, fileId: number) =>
      qs.map((q) => i.query({ files: [fileId], text: q }).map((r) => r.line));
    const eagerA = eagerIndex([...lines, ...more], 'eager-a');
    const eagerB = eagerIndex([...otherLines, ...more.slice(0, 300)], 'eager-b');
    expect(linesOf(index, a?.fileId as number)).toEqual(linesOf(eagerA.index, eagerA.fileId));
    expect(linesOf(index, b?.fileId as number)).toEqual(linesOf(eagerB.index, eagerB.fileId));
    expect(index.withoutFullText()).toEqual([]);
  });

  it('after --rebuild, and after a change that was not an append', async () => {
    const index = open('home');
    const [u] = await index.build([lazyFile]);
    index.requireFullText();
    await index.build([lazyFile], { rebuild: true });
    expect(index.withoutFullText().map((f) => f.fileId)).toEqual([u?.fileId]);
    expect(ftsRows(index)).toBe(0);
    // a line in the middle edited (not an append): the file is indexed again from byte 0
    const edited = [...lines];
    edited[4000] = (edited[4000] as string).replace(/"scene_id":"([^"]+)"/, '"scene_id":"$1-edited"');
    writeFileSync(lazyFile, `${edited.join('\n')}\n`);
    const [again] = await index.build([lazyFile]);
    expect(again?.integrity).toBeDefined();
    const qs = [...queries(edited, 5), 'edited'];
    const eager = eagerIndex(edited);
    expect(answers(index, u?.fileId as number, qs)).toEqual(answers(eager.index, eager.fileId, qs));
  });

  it('cancelled half way: the file is left without FTS rows and marked unbuilt; the next query builds it', async () => {
    const index = open('home');
    const [u] = await index.build([lazyFile]);
    let checkpoints = 0;
    await expect(
      index.buildFullText(undefined, {
        checkpoint: async () => {
          if (++checkpoints === 1) throw new CancelledError('cancelled');
        },
      }),
    ).rejects.toBeInstanceOf(CancelledError);
    expect(checkpoints).toBe(1); // after the first batch: rows were inserted, then rolled back
    expect(ftsRows(index)).toBe(0);
    expect(index.withoutFullText().map((f) => f.fileId)).toEqual([u?.fileId]);
    // the same after reopening (nothing half-written reached the file)
    const reopened = open('home');
    expect(ftsRows(reopened)).toBe(0);
    expect(reopened.withoutFullText().map((f) => f.fileId)).toEqual([u?.fileId]);
    const qs = queries(lines, 9);
    const eager = eagerIndex(lines);
    expect(answers(reopened, u?.fileId as number, qs)).toEqual(answers(eager.index, eager.fileId, qs));
  });

  it('a memoir changed after it was indexed is not read into the FTS: exit 8, nothing built', async () => {
    const index = open('home');
    await index.build([lazyFile]);
    const edited = [...lines];
    edited[2] = (edited[2] as string).replace(/"scene_id":"([^"]+)"/, '"scene_id":"$1-x"');
    writeFileSync(lazyFile, `${edited.join('\n')}\n`);
    expect(() => index.requireFullText()).toThrow(/changed since it was indexed/);
    expect(ftsRows(index)).toBe(0);
    expect(index.withoutFullText()).toHaveLength(1);
  });

  it('a small first index (not a bulk load) writes its FTS rows at once, as before', () => {
    const index = open('home');
    const small = join(dir, 'small.jsonl');
    writeFileSync(small, `${lines.slice(0, 500).join('\n')}\n`);
    const [u] = index.update([small]);
    expect(index.withoutFullText()).toEqual([]);
    expect(ftsRows(index)).toBe(u?.newEntries);
  });
});
