import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openIndex } from '../../src/memoir-index/memoir-index.js';
import { assertBuilt, BIN, cleanEnv, kourai } from '../helpers/bin.js';
import { removeDir } from '../helpers/ctx.js';
import { synthLines } from '../helpers/synth-lines.js';

/**
 * `memoir index` from scratch builds in a private file (store/index-staging.ts). Killed with
 * SIGKILL in the middle, it leaves no index.db at all (never a partial one); the next run removes
 * the dead build's file and builds the whole index.
 */
let home: string;
let memoir: string;
let entries: number;
beforeAll(() => {
  assertBuilt();
  home = mkdtempSync(join(tmpdir(), 'kourai-staging-'));
  memoir = join(home, 'memoir.jsonl');
  const lines = synthLines(3, 13_000);
  writeFileSync(memoir, `${lines.join('\n')}\n`);
  entries = lines.length;
});
afterAll(() => removeDir(home));

const cache = (): string[] => (existsSync(join(home, 'cache')) ? readdirSync(join(home, 'cache')) : []);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('memoir index killed in the middle of a from-scratch build', () => {
  it('leaves no index; the next run cleans up and builds it whole', async () => {
    const child = spawn(process.execPath, [BIN, 'memoir', 'index', '--memoir', memoir, '--json'], {
      env: cleanEnv(home),
      stdio: 'ignore',
    });
    const exited = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
    let done = false;
    void exited.then(() => (done = true));
    while (!done && !cache().some((f) => f.startsWith('index.db.build-'))) await sleep(1);
    child.kill('SIGKILL');
    const code = await exited;
    expect(code).toBeNull(); // killed before it finished (13k entries take far longer than the poll)
    expect(cache().filter((f) => f.startsWith('index.db.build-')).length).toBeGreaterThan(0);
    expect(cache()).not.toContain('index.db');

    const r = kourai(['memoir', 'index', '--memoir', memoir, '--json'], home);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { files: { new_entries: number }[] }).files[0]?.new_entries).toBe(entries);
    expect(cache()).toEqual(['index.db']);
    const index = openIndex(home);
    try {
      expect(index.count({})).toBe(entries);
      expect(index.db.pragma('integrity_check', { simple: true })).toBe('ok');
    } finally {
      index.close();
    }
  });
});
