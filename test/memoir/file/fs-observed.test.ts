import { appendFileSync, existsSync, mkdirSync, readFileSync, utimesSync } from 'node:fs';
import * as realFs from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { removeDir, tempDir } from '../../helpers/ctx.js';

/**
 * The memoir writer observed at the filesystem boundary: every open, write, fsync and truncate
 * it makes goes through this recording wrapper of `node:fs` (the real calls still happen, on real
 * files in a temporary directory). Hooks let a test act *between* two of the writer's calls,
 * as a concurrent lock-free host or a crash would.
 */
type Call = { op: 'open' | 'write' | 'fsync' | 'ftruncate'; path: string };
const calls: Call[] = [];
const fdPath = new Map<number, string>();
const hooks: { before?: (c: Call, args: unknown[]) => void; after?: (c: Call) => void } = {};

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof realFs>();
  const record = (op: Call['op'], fd: number, args: unknown[]): Call => {
    const c = { op, path: fdPath.get(fd) ?? `fd ${fd}` };
    hooks.before?.(c, [fd, ...args]);
    return c;
  };
  const wrapped = {
    ...fs,
    openSync: (path: realFs.PathLike, ...rest: unknown[]) => {
      const fd = (fs.openSync as (...a: unknown[]) => number)(path, ...rest);
      fdPath.set(fd, String(path));
      calls.push({ op: 'open', path: String(path) });
      return fd;
    },
    writeSync: (fd: number, ...rest: unknown[]) => {
      const c = record('write', fd, rest);
      const n = (fs.writeSync as (...a: unknown[]) => number)(fd, ...rest);
      calls.push(c);
      hooks.after?.(c);
      return n;
    },
    fsyncSync: (fd: number) => {
      const c = record('fsync', fd, []);
      fs.fsyncSync(fd);
      calls.push(c);
      hooks.after?.(c);
    },
    ftruncateSync: (fd: number, len?: number) => {
      const c = record('ftruncate', fd, [len]);
      fs.ftruncateSync(fd, len);
      calls.push(c);
      hooks.after?.(c);
    },
  };
  return { ...wrapped, default: wrapped };
});

const { Memoir } = await import('../../../src/memoir/file/memoir.js');
const { readRecords } = await import('../../../src/memoir/file/reader.js');
const { quarantinePath } = await import('../../../src/memoir/file/quarantine.js');
const { Journal, journalPath } = await import('../../../src/memoir/file/journal.js');

let dir: string;
beforeEach(() => {
  dir = tempDir();
  calls.length = 0;
  delete hooks.before;
  delete hooks.after;
});
afterEach(() => removeDir(dir));

const entry = (i: number, extra: Record<string, unknown> = {}) => ({
  scene_id: `session-00000000.turn-${i}`,
  agent: 'techne' as const,
  source: 'specialist_proposed' as const,
  agent_proposed: `proposal ${i}`,
  ...extra,
});
/** A whole line as a Python host writes it (one O_APPEND write). */
const pythonLine = (i: number) =>
  `{"scene_id":"session-0000beef.turn-${i}","agent":"metis","source":"specialist_proposed","context":null,"narrative_beat":"python","agent_proposed":"host line ${i}","player_response":null,"affinity_delta":0.0,"training_label":null,"split":{"shared_eligible":true,"private_only":false}}\n`;
const age = (path: string) => utimesSync(path, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));

describe('fsync is observed', () => {
  it('a new memoir: the journal is fsynced before the memoir is written, then the memoir, then its directory', () => {
    const path = join(dir, 'new-forge', 'memoir.jsonl');
    new Memoir(path).append([entry(1), entry(2)]);
    const seq = calls.filter(
      (c) => c.op !== 'open' && (c.path === path || c.path === journalPath(path) || c.path === join(dir, 'new-forge')),
    );
    const at = (op: Call['op'], p: string) => seq.findIndex((c) => c.op === op && c.path === p);
    const memoirWrite = at('write', path);
    expect(memoirWrite).toBeGreaterThanOrEqual(0);
    expect(at('fsync', journalPath(path))).toBeGreaterThanOrEqual(0);
    expect(at('fsync', journalPath(path))).toBeLessThan(memoirWrite);
    const memoirFsync = seq.findIndex((c, i) => i > memoirWrite && c.op === 'fsync' && c.path === path);
    expect(memoirFsync).toBeGreaterThan(memoirWrite);
    const dirFsync = seq.findIndex((c, i) => i > memoirWrite && c.op === 'fsync' && c.path === join(dir, 'new-forge'));
    expect(dirFsync).toBeGreaterThan(memoirWrite);
  });

  it('an existing memoir is fsynced after every append; its directory is not (nothing was created)', () => {
    const path = join(dir, 'memoir.jsonl');
    const m = new Memoir(path);
    m.append([entry(1)]);
    calls.length = 0;
    m.append([entry(2)]);
    const w = calls.findIndex((c) => c.op === 'write' && c.path === path);
    expect(calls.findIndex((c, i) => i > w && c.op === 'fsync' && c.path === path)).toBeGreaterThan(w);
    expect(calls.some((c) => c.op === 'fsync' && c.path === dir)).toBe(false);
  });

  it('the quarantine is fsynced before the memoir is cut', () => {
    const path = join(dir, 'memoir.jsonl');
    new Memoir(path).append([entry(1)]);
    appendFileSync(path, '{"scene_id":"torn');
    age(path);
    calls.length = 0;
    new Memoir(path).append([entry(2)]);
    const qSync = calls.findIndex((c) => c.op === 'fsync' && c.path === quarantinePath(path));
    const cut = calls.findIndex((c) => c.op === 'ftruncate' && c.path === path);
    expect(qSync).toBeGreaterThanOrEqual(0);
    expect(cut).toBeGreaterThan(qSync);
  });

  it('--no-fsync (fsync: false) skips them, as documented', () => {
    const path = join(dir, 'memoir.jsonl');
    new Memoir(path).append([entry(1)], { fsync: false });
    expect(calls.filter((c) => c.op === 'fsync')).toEqual([]);
  });
});

describe('repair never drops bytes another writer appended', () => {
  it('a host line appended while the torn fragment is being moved to the quarantine is kept', () => {
    const path = join(dir, 'memoir.jsonl');
    new Memoir(path).append([entry(1)]);
    appendFileSync(path, '{"scene_id":"session-00000000.turn-2","agent":"tec'); // a dead writer's fragment
    age(path);
    let fired = false;
    hooks.after = (c) => {
      // The host appends its whole line in the window between the quarantine copy and the cut.
      if (!fired && c.op === 'fsync' && c.path === quarantinePath(path)) {
        fired = true;
        realFs.appendFileSync(path, pythonLine(7));
      }
    };
    new Memoir(path).append([entry(3)]);
    expect(fired).toBe(true);
    const recs = [...readRecords(path)];
    expect(recs.map((r) => r.kind)).toEqual(['entry', 'entry', 'entry']);
    expect(recs.map((r) => (r.kind === 'entry' ? r.entry.agent_proposed : null))).toEqual([
      'proposal 1',
      'host line 7',
      'proposal 3',
    ]);
    const q = readFileSync(quarantinePath(path), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { text: string; reason: string });
    expect(q).toEqual([
      expect.objectContaining({ reason: 'torn_tail', text: '{"scene_id":"session-00000000.turn-2","agent":"tec' }),
    ]);
  });

  it('host lines appended after the fragment before the cut, and more while they are set aside, are all kept in order', () => {
    const path = join(dir, 'memoir.jsonl');
    new Memoir(path).append([entry(1)]);
    appendFileSync(path, '{"scene_id":"torn-fragment"');
    age(path);
    let n = 0;
    hooks.after = (c) => {
      if (c.op === 'fsync' && c.path === quarantinePath(path) && n === 0)
        realFs.appendFileSync(path, pythonLine(++n) + pythonLine(++n));
      else if (c.op === 'fsync' && c.path.startsWith(journalPath(path)) && n === 2)
        realFs.appendFileSync(path, pythonLine(++n));
    };
    new Memoir(path).append([entry(9)]);
    const texts = [...readRecords(path)].map((r) => (r.kind === 'entry' ? r.entry.agent_proposed : r.kind));
    expect(n).toBe(3);
    expect(texts).toEqual(['proposal 1', 'host line 1', 'host line 2', 'host line 3', 'proposal 9']);
  });
});

/**
 * The writer dies here (kill -9 inside write(2)): from now on none of its calls reach the memoir or
 * its journal, as none would; the append throws 'simulated crash' where the process would be gone.
 */
function dies(path: string): never {
  hooks.before = (c) => {
    if (c.path.startsWith(path)) throw new Error('the process is gone');
  };
  throw new Error('simulated crash');
}

describe('a batch whose write fails while the writer lives (a full disk, an I/O error) is cut off at once (property)', () => {
  it('the memoir is byte-identical to before the batch, nothing is quarantined or left pending, and the next batch lands whole', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.constantFrom('ENOSPC', 'EIO', 'EDQUOT'),
        fc.boolean(),
        (size, where, code, inFsync) => {
          const sub = join(dir, `f${Math.random().toString(36).slice(2)}`);
          mkdirSync(sub);
          const path = join(sub, 'memoir.jsonl');
          const m = new Memoir(path);
          m.append([entry(0)]);
          const before = readFileSync(path);
          const fail = (): never => {
            delete hooks.before;
            throw Object.assign(new Error(`${code}: simulated`), { code });
          };
          hooks.before = (c, args) => {
            if (c.path !== path) return;
            if (inFsync) {
              if (c.op === 'fsync') fail(); // the whole batch was written; making it durable failed
              return;
            }
            if (c.op !== 'write') return;
            const [fd, buf, off, len] = args as [number, Buffer, number, number];
            delete hooks.before;
            realFs.writeSync(fd, buf, off, Math.floor(where * len)); // part of it got through
            fail();
          };
          expect(() => m.append(Array.from({ length: size }, (_, i) => entry(100 + i)))).toThrow();
          delete hooks.before;
          expect(readFileSync(path)).toEqual(before);
          expect(existsSync(quarantinePath(path))).toBe(false);
          expect(readFileSync(journalPath(path))).toHaveLength(0);
          m.append([entry(999)]);
          const texts = [...readRecords(path)].map((r) => (r.kind === 'entry' ? r.entry.agent_proposed : r.kind));
          expect(texts).toEqual(['proposal 0', 'proposal 999']);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('a batch interrupted at any byte is all or nothing', () => {
  it('the next writer rolls the written part back into the quarantine and keeps host lines written since', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 6 }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 2 }),
        (size, where, hostLines) => {
          const sub = join(dir, `p${Math.random().toString(36).slice(2)}`);
          mkdirSync(sub);
          const path = join(sub, 'memoir.jsonl');
          const m = new Memoir(path);
          m.append([entry(0)]);
          const before = readFileSync(path);
          const batch = Array.from({ length: size }, (_, i) => entry(100 + i));
          const lines = batch.length;
          let written = -1;
          let total = 0;
          // The writer dies inside its memoir write after `cut` bytes (as kill -9 in write(2) does).
          hooks.before = (c, args) => {
            if (c.op !== 'write' || c.path !== path) return;
            const [fd, buf, off, len] = args as [number, Buffer, number, number];
            const cut = Math.floor(where * len);
            written = cut;
            total = len;
            delete hooks.before;
            realFs.writeSync(fd, buf, off, cut);
            dies(path);
          };
          expect(() => m.append(batch)).toThrow('simulated crash');
          delete hooks.before;
          for (let h = 0; h < hostLines; h++) realFs.appendFileSync(path, pythonLine(h)); // hosts keep writing
          m.append([entry(999)]);
          const texts = [...readRecords(path)].map((r) => (r.kind === 'entry' ? r.entry.agent_proposed : r.kind));
          const fromBatch = texts.filter((t) => typeof t === 'string' && /^proposal 1\d\d$/.test(t)).length;
          expect(fromBatch === 0 || fromBatch === lines).toBe(true);
          expect(texts.filter((t) => typeof t === 'string' && t.startsWith('host line'))).toHaveLength(hostLines);
          expect(texts[0]).toBe('proposal 0');
          expect(texts[texts.length - 1]).toBe('proposal 999');
          expect(texts.every((t) => t !== 'torn' && t !== 'invalid')).toBe(true);
          expect(readFileSync(path).subarray(0, before.length)).toEqual(before);
          expect(written).toBeGreaterThanOrEqual(0);
          // Whatever part of the batch reached the memoir is in the quarantine, not lost.
          expect(existsSync(quarantinePath(path))).toBe(written > 0 && written < total);
          expect(fromBatch).toBe(written === total ? lines : 0);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('the batch journal holds line lengths and CRC-32s, not the batch', () => {
  /** Appends `size` entries and dies inside the memoir write after `keep(buf)` bytes; `then` runs before the next append. */
  function crashedBatch(path: string, size: number, keep: (batch: Buffer) => number): Buffer {
    const m = new Memoir(path);
    let batch = Buffer.alloc(0);
    hooks.before = (c, args) => {
      if (c.op !== 'write' || c.path !== path) return;
      const [fd, buf, off, len] = args as [number, Buffer, number, number];
      batch = Buffer.from(buf.subarray(off, off + len));
      delete hooks.before;
      realFs.writeSync(fd, buf, off, keep(batch));
      dies(path);
    };
    expect(() => m.append(Array.from({ length: size }, (_, i) => entry(100 + i)))).toThrow('simulated crash');
    delete hooks.before;
    return batch;
  }
  const quarantined = (path: string) =>
    readFileSync(quarantinePath(path), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { reason: string; text: string; offset: number; length: number });
  const texts = (path: string) =>
    [...readRecords(path)].map((r) => (r.kind === 'entry' ? r.entry.agent_proposed : r.kind));

  it('the journal of a 10k-line batch is a small fraction of the batch', () => {
    const path = join(dir, 'memoir.jsonl');
    let journalBytes = 0;
    hooks.before = (c, args) => {
      if (c.op === 'fsync' && c.path === journalPath(path)) journalBytes = realFs.fstatSync(args[0] as number).size;
    };
    new Memoir(path).append(Array.from({ length: 10_000 }, (_, i) => entry(i)));
    const memoirBytes = readFileSync(path).length;
    expect(journalBytes).toBeGreaterThan(0);
    expect(journalBytes).toBeLessThan(memoirBytes / 10); // 8 bytes a line + the first line + the header
  });

  it('a host line of the same length where the batch’s next line belongs is told apart by its CRC', () => {
    const path = join(dir, 'memoir.jsonl');
    new Memoir(path).append([entry(0)]);
    const before = readFileSync(path);
    // The writer dies exactly after the batch's first line; a host then appends a line exactly as
    // long as the batch's second one (length alone would take the batch for whole).
    const batch = crashedBatch(path, 2, (b) => b.indexOf(10) + 1);
    const second = batch.subarray(batch.indexOf(10) + 1).toString('utf8');
    const host = second.replace('"proposal 101"', '"host-line 01"');
    expect(Buffer.byteLength(host)).toBe(Buffer.byteLength(second));
    expect(host).not.toBe(second);
    realFs.appendFileSync(path, host);
    new Memoir(path).append([entry(999)]);
    expect(texts(path)).toEqual(['proposal 0', 'host-line 01', 'proposal 999']);
    expect(readFileSync(path).subarray(0, before.length)).toEqual(before);
    expect(quarantined(path)).toEqual([
      expect.objectContaining({
        reason: 'uncommitted_batch',
        offset: before.length,
        text: batch.subarray(0, batch.indexOf(10) + 1).toString('utf8'),
      }),
    ]);
  });

  it('a later line cut short, then a dead host’s fragment: both go to the quarantine, nothing else', () => {
    const path = join(dir, 'memoir.jsonl');
    new Memoir(path).append([entry(0)]);
    const before = readFileSync(path);
    const batch = crashedBatch(path, 3, (b) => b.indexOf(10, b.indexOf(10) + 1) + 1 + 25); // 25 bytes into the third line
    const written = batch.indexOf(10, batch.indexOf(10) + 1) + 1 + 25;
    const fragment = '{"scene_id":"session-0000beef.tu';
    realFs.appendFileSync(path, fragment);
    age(path);
    new Memoir(path).append([entry(999)], { staleMs: 0 });
    expect(texts(path)).toEqual(['proposal 0', 'proposal 999']);
    expect(readFileSync(path).subarray(0, before.length)).toEqual(before);
    const q = quarantined(path);
    expect(q.map((r) => r.text).join('')).toBe(batch.subarray(0, written).toString('utf8') + fragment);
    expect(q[0]).toEqual(expect.objectContaining({ reason: 'uncommitted_batch', offset: before.length }));
  });

  it('a later line cut short, then host lines: the cut ends where the first host line starts', () => {
    const path = join(dir, 'memoir.jsonl');
    new Memoir(path).append([entry(0)]);
    const batch = crashedBatch(path, 4, (b) => b.indexOf(10) + 1 + 40); // 40 bytes into the second line
    realFs.appendFileSync(path, pythonLine(1) + pythonLine(2));
    new Memoir(path).append([entry(999)]);
    expect(texts(path)).toEqual(['proposal 0', 'host line 1', 'host line 2', 'proposal 999']);
    expect(quarantined(path)).toEqual([
      expect.objectContaining({
        reason: 'uncommitted_batch',
        text: batch.subarray(0, batch.indexOf(10) + 1 + 40).toString('utf8'),
      }),
    ]);
  });

  it('a journal an older kourai wrote (the whole batch) is still rolled back', () => {
    const path = join(dir, 'memoir.jsonl');
    new Memoir(path).append([entry(0)]);
    const before = readFileSync(path);
    const batch = crashedBatch(path, 3, (b) => b.length - 30);
    // Replace the journal with the format older writers left: the batch's bytes.
    const j = new Journal(path, false);
    j.start();
    j.add(batch);
    j.seal({ op: 'batch', offset: before.length });
    j.close();
    realFs.appendFileSync(path, pythonLine(5));
    new Memoir(path).append([entry(999)]);
    expect(texts(path)).toEqual(['proposal 0', 'host line 5', 'proposal 999']);
    expect(
      quarantined(path)
        .map((r) => r.text)
        .join(''),
    ).toBe(batch.subarray(0, batch.length - 30).toString('utf8'));
  });
});
