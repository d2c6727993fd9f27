import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statfsSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, kourai } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';

/**
 * A full disk tears nothing a reader can see: on a 2 MiB filesystem with 40 KiB free, a batch that
 * cannot be written whole is not left in the memoir (the file is byte-identical to before it, and
 * no journal is left pending); `memoir repair` and `memoir verify` on the full disk say so cleanly,
 * and a healthy index is never moved aside as damaged.
 */
const canMount =
  process.platform === 'linux' &&
  process.getuid?.() === 0 &&
  spawnSync('sh', [
    '-c',
    'mkdir -p /tmp/.kourai-mnt-probe && mount -t tmpfs -o size=64k tmpfs /tmp/.kourai-mnt-probe && umount /tmp/.kourai-mnt-probe',
  ]).status === 0;
const SKIP =
  'needs root on Linux to mount a 2 MiB tmpfs (CI runs as root): the full-disk path of the memoir was not checked';

let dirs: string[] = [];
let mounts: string[] = [];
beforeAll(() => assertBuilt());
afterEach(() => {
  for (const m of mounts) spawnSync('umount', [m]);
  mounts = [];
  for (const d of dirs) removeDir(d);
  dirs = [];
});

const entry = (i: number) =>
  JSON.stringify({
    scene_id: `session-1.turn-${i}`,
    agent: 'techne',
    source: 'specialist_proposed',
    agent_proposed: `proposal ${i}: ${'a careful plan with some words '.repeat(8)}`,
  });

/** A home on a fresh 2 MiB tmpfs holding an indexed memoir, filled up to `free` bytes free. */
function fullHome(free: number): { home: string; memoir: string; outside: string } {
  const outside = tempDir('kourai-full-');
  dirs.push(outside);
  const home = join(outside, 'home');
  mkdirSync(home);
  expect(spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', home]).status).toBe(0);
  mounts.push(home);
  const memoir = join(home, 'projects', 'p', 'game', '.kourai', 'forges', 's1', 'memoir.jsonl');
  const seed = join(outside, 'seed.ndjson');
  writeFileSync(seed, `${Array.from({ length: 40 }, (_, i) => entry(i)).join('\n')}\n`);
  const a = kourai(['memoir', 'append', '--memoir', memoir, '--file', seed, '--json'], home);
  expect(a.code, a.stderr).toBe(0);
  const idx = kourai(['memoir', 'index', '--json'], home);
  expect(idx.code, idx.stderr).toBe(0);
  const st = statfsSync(home);
  const avail = st.bavail * st.bsize;
  writeFileSync(join(home, 'filler'), Buffer.alloc(Math.max(0, avail - free)));
  return { home, memoir, outside };
}

describe('a full disk (a 2 MiB tmpfs with 40 KiB free)', () => {
  it('memoir append of 400 entries: exit 3, the memoir byte-identical to before the batch, no journal pending', (ctx) => {
    ctx.skip(!canMount, SKIP);
    const { home, memoir, outside } = fullHome(40 * 1024);
    const before = readFileSync(memoir);
    const batch = join(outside, 'batch.ndjson');
    writeFileSync(batch, `${Array.from({ length: 400 }, (_, i) => entry(1000 + i)).join('\n')}\n`);
    const r = kourai(['memoir', 'append', '--memoir', memoir, '--file', batch], home);
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr.split('\n')[0]).toMatch(/no space left on device/);
    // what any reader opens now: the memoir as it was
    expect(readFileSync(memoir).equals(before)).toBe(true);
    const journal = `${memoir}.journal`;
    expect(existsSync(journal) ? readFileSync(journal).length : 0).toBe(0);
    // and once space is back, the next batch lands whole after it
    spawnSync('rm', ['-f', join(home, 'filler')]);
    const again = kourai(['memoir', 'append', '--memoir', memoir, '--file', batch, '--json'], home);
    expect(again.code, again.stderr).toBe(0);
    expect(readFileSync(memoir).subarray(0, before.length).equals(before)).toBe(true);
    expect(readFileSync(memoir, 'utf8').trimEnd().split('\n')).toHaveLength(440);
  });

  it('memoir repair and memoir verify on the full disk: clean answers, the healthy index stays where it is', (ctx) => {
    ctx.skip(!canMount, SKIP);
    const { home, memoir, outside } = fullHome(40 * 1024);
    const batch = join(outside, 'batch.ndjson');
    writeFileSync(batch, `${Array.from({ length: 400 }, (_, i) => entry(1000 + i)).join('\n')}\n`);
    expect(kourai(['memoir', 'append', '--memoir', memoir, '--file', batch], home).code).toBe(3);
    // a host died mid-line long ago: repair must move that torn tail to the quarantine, which needs space
    appendFileSync(memoir, `${entry(9999).slice(0, 300)}`);
    utimesSync(memoir, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
    // the rest of the space goes too
    const st = statfsSync(home);
    writeFileSync(join(home, 'filler2'), Buffer.alloc(Math.max(0, st.bavail * st.bsize)));
    const before = readFileSync(memoir);
    const index = readFileSync(join(home, 'cache', 'index.db'));

    const repair = kourai(['memoir', 'repair', '--memoir', memoir], home);
    expect(repair.code, repair.stderr).toBe(3);
    expect(repair.stderr.split('\n')[0]).toMatch(/no space left on device/);

    // verify reports the torn tail (a finding: exit 1), and nothing about a damaged index
    const verify = kourai(['memoir', 'verify', '--memoir', memoir, '--json'], home);
    expect(verify.code, verify.stderr).toBe(1);
    expect(verify.stderr).not.toMatch(/unexpected error|damaged/);
    expect(JSON.stringify(JSON.parse(verify.stdout))).toMatch(/torn/);

    expect(readdirSync(join(home, 'cache')).filter((n) => n.includes('damaged'))).toEqual([]);
    expect(readFileSync(join(home, 'cache', 'index.db')).equals(index)).toBe(true);
    expect(readFileSync(memoir).equals(before)).toBe(true);
  });
});
