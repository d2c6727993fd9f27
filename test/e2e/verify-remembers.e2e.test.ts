import { appendFileSync, openSync, readFileSync, closeSync, writeSync, truncateSync, statSync } from 'node:fs';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, kourai, sampleHome } from '../helpers/bin.js';
import { removeDir } from '../helpers/ctx.js';

/**
 * `memoir verify` remembers what it checked (block CRCs in the cache beside the index), so a later
 * verify reports any change that is not an append, whether the memoir was ever indexed or not, and
 * keeps reporting it until `memoir index --rebuild` acknowledges it.
 */
let homes: string[] = [];
beforeAll(() => assertBuilt());
afterEach(() => {
  for (const h of homes) removeDir(h);
  homes = [];
});

interface Report {
  ok: boolean;
  problems: { path: string; kind: string; offset: number | null; message: string }[];
}
const verify = (home: string, memoir: string): { code: number; report: Report } => {
  const r = kourai(['memoir', 'verify', '--memoir', memoir, '--json'], home);
  return { code: r.code, report: JSON.parse(r.stdout) as Report };
};

/** Changes one letter in the middle of the file, inside a JSON string: the same length, still valid JSON and a valid entry. */
function editInPlace(memoir: string): number {
  const text = readFileSync(memoir, 'utf8');
  const at = text.indexOf('"agent_proposed":"', Math.floor(text.length / 2)) + '"agent_proposed":"'.length;
  const old = text[at] as string;
  const fd = openSync(memoir, 'r+');
  writeSync(fd, Buffer.from(old === 'x' ? 'y' : 'x'), 0, 1, Buffer.byteLength(text.slice(0, at)));
  closeSync(fd);
  return Buffer.byteLength(text.slice(0, at));
}

describe('memoir verify remembers what it checked', () => {
  it('a never-indexed memoir: verify, a same-length edit in the middle, verify again: the edit is reported, until acknowledged', () => {
    const { home, memoirs } = sampleHome();
    homes.push(home);
    const memoir = memoirs[0] as string;
    expect(verify(home, memoir)).toMatchObject({ code: 0, report: { ok: true } });
    // an append is not a change
    const first = readFileSync(memoir, 'utf8').split('\n')[0] as string;
    appendFileSync(memoir, `${first.replace(/"entry_id":"[^"]+"/, '"entry_id":"01M3VCAZ7Y3T5Q9B6HQP9WD1P1"')}\n`);
    expect(verify(home, memoir)).toMatchObject({ code: 0, report: { ok: true } });

    const size = statSync(memoir).size;
    const at = editInPlace(memoir);
    expect(statSync(memoir).size).toBe(size);
    const after = verify(home, memoir);
    expect(after.code).toBe(1);
    const changed = after.report.problems.filter((p) => p.kind === 'not_append');
    expect(changed).toHaveLength(1);
    expect(changed[0]?.offset).toBe(Math.floor(at / (1 << 20)) * (1 << 20));
    expect(changed[0]?.message).toMatch(/changed since `memoir verify` last checked it .*: not an append/);
    // still reported by the next verify: nothing forgot it
    expect(verify(home, memoir).code).toBe(1);
    // acknowledged as the index's are
    expect(kourai(['memoir', 'index', '--rebuild', '--memoir', memoir, '--json'], home).code).toBe(0);
    expect(verify(home, memoir)).toMatchObject({ code: 0, report: { ok: true } });
  });

  it('a truncation is reported; an indexed memoir reports an edit once', () => {
    const { home, memoirs } = sampleHome();
    homes.push(home);
    const [a, b] = memoirs as [string, string];
    expect(verify(home, a).code).toBe(0);
    const lines = readFileSync(a, 'utf8').split('\n');
    truncateSync(a, Buffer.byteLength(lines.slice(0, Math.floor(lines.length / 2)).join('\n')) + 1);
    const cut = verify(home, a);
    expect(cut.code).toBe(1);
    expect(cut.report.problems.find((p) => p.kind === 'not_append')?.message).toMatch(/bytes shorter since/);

    expect(kourai(['memoir', 'index', '--memoir', b], home).code).toBe(0);
    expect(verify(home, b).code).toBe(0);
    editInPlace(b);
    const edited = verify(home, b);
    expect(edited.code).toBe(1);
    expect(edited.report.problems.filter((p) => p.kind === 'not_append')).toHaveLength(1);
  });
});
