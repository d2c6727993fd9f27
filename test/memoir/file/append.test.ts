import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, truncateSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { appendLines, prepareBatch, prepareEntries } from '../../../src/memoir/file/append.js';
import { LineWriter } from '../../../src/memoir/format/encode-bytes.js';
import { ulidGenerator } from '../../../src/memoir/format/entry-id.js';
import { lockMemoir } from '../../../src/memoir/file/lock.js';
import { Memoir } from '../../../src/memoir/file/memoir.js';
import { quarantinePath } from '../../../src/memoir/file/quarantine.js';
import { readRecords } from '../../../src/memoir/file/reader.js';
import { ConflictError, InvalidDataError } from '../../../src/errors.js';
import { removeDir, tempDir } from '../../helpers/ctx.js';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) removeDir(dirs.pop() as string);
});
function memoirFile(): string {
  const d = tempDir();
  dirs.push(d);
  return join(d, 'forge', 'memoir.jsonl');
}

const entry = (i: number, extra: Record<string, unknown> = {}) => ({
  scene_id: `session-00000000.turn-${i}`,
  agent: 'techne' as const,
  source: 'specialist_proposed' as const,
  agent_proposed: `proposal ${i} 🔥`,
  ...extra,
});
const ids = () =>
  ulidGenerator(
    () => Date.UTC(2026, 10, 22),
    (n) => new Uint8Array(n),
  );

describe('prepareEntries', () => {
  it('fills id, time, type and the strict split; a requested shared split on a private source is narrowed and reported', () => {
    const [a, b] = prepareEntries(
      [
        { value: entry(1), where: 'a' },
        {
          value: {
            ...entry(2),
            agent: 'cupid',
            source: 'cupid_scene',
            split: { shared_eligible: true, private_only: false },
          },
          where: 'b',
        },
      ],
      ids(),
      () => new Date('2026-11-22T10:00:00Z'),
    );
    expect(a?.entry).toMatchObject({
      entry_type: 'pipeline_turn',
      recorded_at: '2026-11-22T10:00:00.000Z',
      split: { shared_eligible: true, private_only: false },
    });
    expect(a?.entry.entry_id).toMatch(/^[0-9A-Z]{26}$/);
    expect(b?.entry.split).toEqual({ shared_eligible: false, private_only: true });
    expect(b?.narrowed).toMatch(/^b: split narrowed to private: bond-only agent/);
  });

  it('rejects the whole batch on one invalid entry, naming where and which field', () => {
    expect(() =>
      prepareEntries(
        [
          { value: entry(1), where: 'stdin line 1' },
          { value: { ...entry(2), agent: 'hermes' }, where: 'stdin line 2' },
        ],
        ids(),
        () => new Date(),
      ),
    ).toThrow(
      'stdin line 2: agent: unknown agent "hermes"; expected one of: hephaestus, metis, techne, dokimasia, kallos, mneme, aidos, aletheia, cupid, puck',
    );
  });
});

describe('keys the upstream model does not declare', () => {
  const at = () => new Date('2026-11-22T10:00:00Z');
  it('takes a line pydantic accepts with extra top-level keys, leaves them out as model_dump_json does, and says so', () => {
    const batch = prepareBatch(
      [{ value: entry(1, { host: 'py-host-1', extra: { a: 1.0 } }), where: 'line 1' }],
      ids(),
      at,
    );
    expect(batch.entries).toHaveLength(1);
    const line = batch.bytes.toString('utf8');
    expect(line).not.toContain('py-host-1');
    expect(line).not.toContain('"extra"');
    expect(batch.ignored).toEqual([
      'line 1: key "host" is not a memoir field; left out, as the upstream model leaves it out',
      'line 1: key "extra" is not a memoir field; left out, as the upstream model leaves it out',
    ]);
  });
  it('refuses a near miss of a field name, naming the field meant, so a typo never loses a value', () => {
    expect(() => prepareBatch([{ value: entry(1, { narative_beat: 'x' }), where: 'line 3' }], ids(), at)).toThrow(
      /^line 3: unknown key "narative_beat" \(did you mean "narrative_beat"\?\)$/,
    );
    expect(() => prepareBatch([{ value: entry(1, { shared_elligible: true }), where: 'line 4' }], ids(), at)).toThrow(
      InvalidDataError,
    );
  });
});

describe('prepareBatch', () => {
  it('holds the same entries, notes and lines as prepareEntries, also when lines outgrow its first buffer', () => {
    const at = () => new Date('2026-11-22T10:00:00Z');
    // 100 entries of ~3 KiB: more than the 64 KiB the batch buffer starts with.
    const items = Array.from({ length: 100 }, (_, i) => ({
      value:
        i % 7 === 3
          ? {
              ...entry(i),
              agent: 'puck',
              source: 'puck_engagement',
              split: { shared_eligible: true, private_only: false },
            }
          : entry(i, { agent_proposed: `${'ž'.repeat(1500)} ${i}` }),
      where: `item ${i}`,
    }));
    const one = prepareEntries(items, ids(), at);
    const batch = prepareBatch(items, ids(), at);
    expect(batch.entries).toEqual(one.map((p) => p.entry));
    expect(batch.narrowed).toEqual(one.flatMap((p) => (p.narrowed ? [p.narrowed] : [])));
    expect(batch.narrowed).toHaveLength(14); // i = 3, 10, …, 94
    expect(batch.bytes.toString('utf8')).toBe(one.map((p) => `${p.line}\n`).join(''));
    expect(one.every((p) => p.bytes === Buffer.byteLength(p.line))).toBe(true);
  });

  it('a reused writer (as Memoir reuses it) holds only the new batch: a smaller one after a bigger one, and after a refused one', () => {
    const at = () => new Date('2026-11-22T10:00:00Z');
    const items = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({
        value: entry(from + i, { agent_proposed: `${'x'.repeat(200)} ${from + i}` }),
        where: `item ${i}`,
      }));
    const w = new LineWriter(16);
    const big = prepareBatch(items(0, 300), ids(), at, w);
    expect(big.bytes.toString('utf8')).toBe(prepareBatch(items(0, 300), ids(), at).bytes.toString('utf8'));
    expect(() => prepareBatch([...items(500, 3), { value: { scene_id: 'x' }, where: 'bad' }], ids(), at, w)).toThrow(
      /bad/,
    );
    const small = prepareBatch(items(1000, 2), ids(), at, w);
    expect(small.bytes.toString('utf8')).toBe(prepareBatch(items(1000, 2), ids(), at).bytes.toString('utf8'));
  });

  it('stamps entries with the clock of each entry (a new millisecond gets its own time)', () => {
    let ms = Date.UTC(2026, 10, 22, 10);
    const batch = prepareBatch(
      [0, 1, 2].map((i) => ({ value: entry(i), where: `e${i}` })),
      ids(),
      () => new Date((ms += 500)),
    );
    expect(batch.entries.map((e) => e.recorded_at)).toEqual([
      '2026-11-22T10:00:00.500Z',
      '2026-11-22T10:00:01.000Z',
      '2026-11-22T10:00:01.500Z',
    ]);
  });
});

describe('durable appends', () => {
  it('Memoir.append writes nothing when any entry is invalid', () => {
    const path = memoirFile();
    const m = new Memoir(path);
    m.append([entry(0)]);
    const before = readFileSync(path);
    expect(() =>
      m.append([entry(1), { ...entry(2), split: { shared_eligible: true, private_only: true } }] as never),
    ).toThrow(InvalidDataError);
    expect(readFileSync(path)).toEqual(before);
  });

  it('quarantines a torn tail before appending, never gluing it to the next entry', () => {
    const path = memoirFile();
    const m = new Memoir(path);
    m.append([entry(0), entry(1)]);
    appendFileSync(path, '{"scene_id":"session-00000000.turn-2","agent":"tec');
    m.append([entry(3)], { staleMs: 0 });
    const recs = [...readRecords(path)];
    expect(recs.map((r) => r.kind)).toEqual(['entry', 'entry', 'entry']);
    const q = readFileSync(quarantinePath(path), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(q).toHaveLength(1);
    expect(q[0].text).toBe('{"scene_id":"session-00000000.turn-2","agent":"tec');
    expect(Buffer.from(q[0].base64, 'base64').toString()).toBe(q[0].text);
  });

  it('refuses to write while another writer holds the lock', () => {
    const path = memoirFile();
    new Memoir(path).append([entry(0)]);
    const lock = lockMemoir(path);
    try {
      expect(() => appendLines(path, ['{}'], { lockWaitMs: 50 })).toThrow(ConflictError);
      expect(() => appendLines(path, ['{}'], { lockWaitMs: 50 })).toThrow(/memoir is being written by/);
    } finally {
      lock.release();
    }
  });

  it('several processes appending at once never interleave partial lines', async () => {
    const path = memoirFile();
    new Memoir(path).append([entry(0)]);
    const writer = fileURLToPath(new URL('../fixtures/concurrent-writer.mjs', import.meta.url));
    const dist = fileURLToPath(new URL('../../../dist/memoir/file/memoir.js', import.meta.url));
    const procs = [0, 1, 2, 3].map(
      (w) =>
        new Promise<number>((resolve) => {
          const p = spawn(process.execPath, [writer, dist, path, String(w), '40', '25'], { stdio: 'inherit' });
          p.on('exit', (code) => resolve(code ?? -1));
        }),
    );
    expect(await Promise.all(procs)).toEqual([0, 0, 0, 0]);
    const recs = [...readRecords(path)];
    expect(recs.every((r) => r.kind === 'entry')).toBe(true);
    expect(recs).toHaveLength(1 + 4 * 40 * 25);
    const perWriter = new Map<string, number>();
    for (const r of recs)
      if (r.kind === 'entry' && r.entry.narrative_beat)
        perWriter.set(r.entry.narrative_beat, (perWriter.get(r.entry.narrative_beat) ?? 0) + 1);
    expect([...perWriter.values()]).toEqual([1000, 1000, 1000, 1000]);
  });
});

describe('crash at any byte (property)', () => {
  it('every acknowledged append survives; the torn remainder is detected and quarantined on the next append', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.nat(),
        (batches, crashSize, cut) => {
          const path = memoirFile();
          const m = new Memoir(path);
          let n = 0;
          for (const size of batches)
            m.append(
              Array.from({ length: size }, () => entry(n++)),
              { fsync: false },
            );
          const acknowledged = readFileSync(path);
          // the crashed batch: fully prepared, but only a prefix of its bytes reached the disk
          const lines = prepareEntries(
            Array.from({ length: crashSize }, () => ({ value: entry(n++), where: 'x' })),
            ids(),
            () => new Date(),
          ).map((p) => p.line);
          const bytes = Buffer.from(`${lines.join('\n')}\n`);
          const keep = cut % bytes.length; // strictly less than the whole batch
          appendFileSync(path, bytes.subarray(0, keep));
          const recs = [...readRecords(path)];
          const complete = recs.filter((r) => r.kind === 'entry');
          expect(complete.length).toBeGreaterThanOrEqual(n - crashSize);
          expect(recs.filter((r) => r.kind === 'invalid')).toEqual([]);
          expect(readFileSync(path).subarray(0, acknowledged.length)).toEqual(acknowledged);
          const torn = recs.filter((r) => r.kind === 'torn').length;
          m.append([entry(n++)], { fsync: false, staleMs: 0 });
          const after = [...readRecords(path)];
          expect(after.every((r) => r.kind === 'entry')).toBe(true);
          expect(after.length).toBe(complete.length + 1);
          expect(existsSync(quarantinePath(path))).toBe(torn === 1);
          truncateSync(path, 0);
        },
      ),
      { numRuns: 40 },
    );
  });
});
