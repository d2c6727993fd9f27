import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { derivedId } from '../../../src/memoir/format/entry-id.js';
import {
  confirmDuplicates,
  newSeenIds,
  revisionProblems,
  verifyFile,
  verifyMemoirs,
} from '../../../src/memoir/verify/verify.js';
import { removeDir, tempDir } from '../../helpers/ctx.js';
import { mutate, mutation, pythonLines, writtenLine } from '../format/scan/lines.js';

const dir = tempDir();
afterAll(() => removeDir(dir));

/** The reference: every line through parseLine, every derived id computed as it is read. */
async function slowVerify(paths: string[]): Promise<unknown> {
  const seen = newSeenIds();
  const files = [];
  for (const p of paths) files.push(await verifyFile(p, seen, { scan: false }));
  return { files, crossFile: [...confirmDuplicates(seen), ...revisionProblems(seen)] };
}

describe('verify: the byte scanner and lazy derived ids change nothing but speed', () => {
  const python = pythonLines();
  const base = python[0] as string;
  const pyId = derivedId(python[1] as string);
  // Revision chains (a fork, a dangling target), identical Python lines, and written ids and
  // supersedes that name a Python line's derived id (which makes the lazy pass read again).
  const special = [
    `${base.slice(0, -1)},"entry_id":"A1","recorded_at":"2026-11-22T10:00:00.000Z","entry_type":"pipeline_turn"}`,
    `${base.slice(0, -1)},"entry_id":"A2","recorded_at":"2026-11-22T10:00:01.000Z","entry_type":"pipeline_turn","supersedes":"A1"}`,
    `${base.slice(0, -1)},"entry_id":"A3","recorded_at":"2026-11-22T10:00:02.000Z","entry_type":"pipeline_turn","supersedes":"A1"}`,
    `${base.slice(0, -1)},"entry_id":"A4","recorded_at":"2026-11-22T10:00:03+01:00","entry_type":"episode","supersedes":"nowhere"}`,
    `${base.slice(0, -1)},"entry_id":"A1","recorded_at":"2026-11-22T10:00:04.000Z"}`,
    `${base.slice(0, -1)},"entry_id":"P1","recorded_at":"2026-11-22T10:00:05.000Z","entry_type":"pipeline_turn","supersedes":"${pyId}"}`,
    `${base.slice(0, -1)},"entry_id":"${pyId}","recorded_at":"2026-11-22T10:00:06.000Z"}`,
    `${base.slice(0, -1)},"entry_id":"${pyId}~2","recorded_at":"2026-11-22T10:00:06.000Z"}`,
    `${base.slice(0, -1)},"recorded_at":"2026-11-22T10:00:07.000Z","supersedes":"A1"}`, // no id: a derived one that revises
    python[1] as string,
    python[1] as string,
    python[2] as string,
  ];
  const line = fc.oneof(
    writtenLine.map((l) => Buffer.from(l)),
    fc.constantFrom(...python).map((l) => Buffer.from(l)),
    fc.constantFrom(...special).map((l) => Buffer.from(l)),
    fc
      .tuple(writtenLine, fc.array(mutation, { minLength: 1, maxLength: 2 }))
      .map(([l, m]) => mutate(Buffer.from(l), m)),
  );

  it('property: same entries, problems, duplicates and revision findings across memoirs', async () => {
    let n = 0;
    let reread = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.array(line, { maxLength: 25 }), fc.boolean()), { minLength: 1, maxLength: 2 }),
        async (files) => {
          const paths = files.map(([lines, torn]) => {
            const path = join(dir, `m${n++}.jsonl`);
            const bytes = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
            writeFileSync(path, torn ? bytes.subarray(0, Math.max(0, bytes.length - 7)) : bytes);
            return path;
          });
          const lazy = newSeenIds({ lazyDerivedIds: true });
          for (const p of paths) await verifyFile(p, lazy);
          if (lazy.needsDerivedIds) reread++;
          expect(await verifyMemoirs(paths)).toEqual(await slowVerify(paths));
        },
      ),
      { numRuns: 300 },
    );
    expect(reread).toBeGreaterThan(5); // the second read is exercised too
  }, 120_000); // 300 memoirs verified twice: ~10 s alone, past the default 30 s on a loaded machine
});
