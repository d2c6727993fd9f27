import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { confirmDuplicates, newSeenIds, revisionProblems, verifyFile } from '../../../src/memoir/verify.js';
import { removeDir, tempDir } from '../../helpers/ctx.js';
import { mutate, mutation, pythonLines, writtenLine } from './lines.js';

const dir = tempDir();
afterAll(() => removeDir(dir));

async function verifyBoth(path: string): Promise<[unknown, unknown]> {
  const run = async (scan: boolean): Promise<unknown> => {
    const seen = newSeenIds();
    const v = await verifyFile(path, seen, { scan });
    return { ...v, duplicates: confirmDuplicates(seen), revisions: revisionProblems(seen) };
  };
  return [await run(true), await run(false)];
}

describe('verify: the byte scanner changes nothing but speed', () => {
  const python = pythonLines();
  // A revision chain, a fork and a dangling revision, so the revision pass has work either way.
  const base = python[0] as string;
  const chain = [
    `${base.slice(0, -1)},"entry_id":"A1","recorded_at":"2026-11-22T10:00:00.000Z","entry_type":"pipeline_turn"}`,
    `${base.slice(0, -1)},"entry_id":"A2","recorded_at":"2026-11-22T10:00:01.000Z","entry_type":"pipeline_turn","supersedes":"A1"}`,
    `${base.slice(0, -1)},"entry_id":"A3","recorded_at":"2026-11-22T10:00:02.000Z","entry_type":"pipeline_turn","supersedes":"A1"}`,
    `${base.slice(0, -1)},"entry_id":"A4","recorded_at":"2026-11-22T10:00:03+01:00","entry_type":"episode","supersedes":"nowhere"}`,
    `${base.slice(0, -1)},"entry_id":"A1","recorded_at":"2026-11-22T10:00:04.000Z"}`,
    python[1] as string, // identical Python lines: derived ids py_…, py_…~2
    python[1] as string,
  ];

  it('property: same entries, problems, duplicates and revision findings, slow path or scanner', async () => {
    let n = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            writtenLine.map((l) => Buffer.from(l)),
            fc.constantFrom(...python).map((l) => Buffer.from(l)),
            fc.constantFrom(...chain).map((l) => Buffer.from(l)),
            fc.tuple(writtenLine, fc.array(mutation, { minLength: 1, maxLength: 2 })).map(([l, m]) => mutate(Buffer.from(l), m)),
          ),
          { maxLength: 30 },
        ),
        fc.boolean(),
        async (lines, torn) => {
          const path = join(dir, `m${n++}.jsonl`);
          const bytes = Buffer.concat(lines.flatMap((l) => [l, Buffer.from('\n')]));
          writeFileSync(path, torn ? bytes.subarray(0, Math.max(0, bytes.length - 7)) : bytes);
          const [fast, slow] = await verifyBoth(path);
          expect(fast).toEqual(slow);
        },
      ),
      { numRuns: 150 },
    );
  });
});
