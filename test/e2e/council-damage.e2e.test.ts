import { spawnSync } from 'node:child_process';
import { mkdirSync, openSync, readFileSync, statSync, writeSync, closeSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FINGERPRINT, SPECS } from '../council/helpers.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { BIN, kourai } from './run-bin.js';

/**
 * A damaged council.db is never served. `kourai council serve` (the real binary)
 * must refuse to start, with exit 8 and a hint that fits state that cannot be rebuilt.
 */
let home: string;
beforeAll(() => {
  home = tempDir('kourai-council-damage-');
});
afterAll(() => removeDir(home));

/** Runs serve; it must exit by itself (refusal) within the timeout, never start listening. */
function serve(dataDir: string): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(
    process.execPath,
    [
      BIN,
      'council',
      'serve',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--base-fingerprint',
      FINGERPRINT,
      '--layouts',
      JSON.stringify({ '*': SPECS }),
      '--json',
    ],
    {
      env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home, CI: '1' },
      encoding: 'utf8',
      timeout: 30_000,
      killSignal: 'SIGKILL',
    },
  );
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('a damaged council.db', () => {
  it('an empty council.db is not taken for a new council: serve and forge add refuse (exit 8), the file stays as it was', () => {
    const dir = join(home, 'empty');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'council.db'), '');
    const r = serve(dir);
    expect(r.stdout).not.toMatch(/listening/);
    expect(r.code).toBe(8);
    expect(r.stderr).toMatch(/^kourai: council database .*council\.db is an empty file: it is not a council/);
    expect(r.stderr).toMatch(/hint: restore council\.db from a backup/);
    expect(r.stderr).not.toMatch(/memoir/);
    expect(kourai(['council', 'forge', 'add', 'athens', '--data-dir', dir], { home }).code).toBe(8);
    expect(statSync(join(dir, 'council.db')).size).toBe(0);
  });

  it('random bytes in page 2: refused at start (integrity check), never a server whose requests fail with 500', () => {
    const dir = join(home, 'page2');
    for (const n of ['athens', 'sparta', 'thebes'])
      expect(kourai(['council', 'forge', 'add', n, '--data-dir', dir], { home }).code).toBe(0);
    const path = join(dir, 'council.db');
    const size = statSync(path).size;
    expect(size).toBeGreaterThan(8192);
    const fd = openSync(path, 'r+');
    const junk = Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256));
    writeSync(fd, junk, 0, junk.length, 4096);
    closeSync(fd);
    const r = serve(dir);
    expect(r.stdout).not.toMatch(/listening/);
    expect(r.code).toBe(8);
    expect(r.stderr).toMatch(/^kourai: council database .*council\.db is damaged/);
    expect(r.stderr).toMatch(
      /hint: the council state cannot be rebuilt from anything else: stop the council and restore council\.db from a backup/,
    );
    expect(readFileSync(path).subarray(4096, 8192).equals(junk)).toBe(true);
  });

  it('a file that is not a council database is refused, not migrated into one', () => {
    const dir = join(home, 'foreign');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'council.db'), 'this is not sqlite at all, just some text that happens to be here');
    const r = serve(dir);
    expect(r.code).toBe(8);
    expect(r.stderr).toMatch(/council\.db is damaged/);
  });
});
