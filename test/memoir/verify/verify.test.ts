import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { hash52, hash52Ascii, IdSet } from '../../../src/memoir/verify/id-set.js';
import { Memoir } from '../../../src/memoir/file/memoir.js';
import { confirmDuplicates, newSeenIds, verifyFile } from '../../../src/memoir/verify/verify.js';
import { removeDir, tempDir } from '../../helpers/ctx.js';

const dirs: string[] = [];
afterEach(() => {
  while (dirs.length) removeDir(dirs.pop() as string);
});

describe('IdSet', () => {
  it('behaves as a set of strings (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ maxLength: 30 }), { maxLength: 400 }), (ids) => {
        const set = new IdSet(4);
        const seen = new Map<string, number>();
        ids.forEach((id, i) => {
          const first = set.addOrGet(id, i);
          if (seen.has(id)) expect(first).toBe(seen.get(id));
          else {
            // a different string may collide on the hash only with vanishing probability
            expect(first).toBeUndefined();
            seen.set(id, i);
          }
        });
      }),
    );
  });
});

describe('hash52Ascii', () => {
  it('hashes ASCII bytes as hash52 hashes the same string (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.integer({ min: 0, max: 127 }).map((c) => String.fromCharCode(c)), maxLength: 70 }),
        fc.nat(5),
        (s, pad) => {
          const b = Buffer.from(`${'x'.repeat(pad)}${s}`, 'latin1');
          expect(hash52Ascii(b, pad, b.length)).toBe(hash52(s));
        },
      ),
    );
  });
});

describe('duplicate ids', () => {
  it('are found within and across memoirs, with both locations', async () => {
    const d = tempDir();
    dirs.push(d);
    const a = join(d, 'a.jsonl');
    const b = join(d, 'b.jsonl');
    const e = (id: string) => ({
      entry_id: id,
      scene_id: 's.turn-1',
      agent: 'metis' as const,
      source: 'specialist_proposed' as const,
    });
    new Memoir(a).append(
      [e('01AAAAAAAAAAAAAAAAAAAAAAAA'), e('01BBBBBBBBBBBBBBBBBBBBBBBB'), e('01AAAAAAAAAAAAAAAAAAAAAAAA')],
      { fsync: false },
    );
    new Memoir(b).append([e('01BBBBBBBBBBBBBBBBBBBBBBBB')], { fsync: false });
    const seen = newSeenIds();
    await verifyFile(a, seen);
    await verifyFile(b, seen);
    expect(confirmDuplicates(seen).map((p) => [p.path, p.line, p.message])).toEqual([
      [a, 3, `entry id 01AAAAAAAAAAAAAAAAAAAAAAAA was already used at ${a}:1`],
      [b, 1, `entry id 01BBBBBBBBBBBBBBBBBBBBBBBB was already used at ${a}:2`],
    ]);
  });

  it('a hash collision between different ids is not reported', async () => {
    const d = tempDir();
    dirs.push(d);
    const a = join(d, 'a.jsonl');
    writeFileSync(a, '');
    new Memoir(a).append(
      [
        { scene_id: 'x', agent: 'metis', source: 'specialist_proposed' },
        { scene_id: 'y', agent: 'metis', source: 'specialist_proposed' },
      ],
      { fsync: false },
    );
    const seen = newSeenIds();
    await verifyFile(a, seen);
    seen.candidates.push({ at: 1, first: 0 }); // pretend the two entries hashed alike
    expect(confirmDuplicates(seen)).toEqual([]);
  });
});
