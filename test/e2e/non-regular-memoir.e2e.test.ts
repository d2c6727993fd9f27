import { spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, kourai } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';

/**
 * A FIFO, a device or a socket named memoir.jsonl is not a memoir: every command refuses it with
 * exit 3 naming what it is, before anything (a journal, a quarantine) is created beside it, and
 * none blocks on it.
 */
const ENTRY = '{"agent":"techne","source":"specialist_proposed","scene_id":"s1","agent_proposed":"x"}';
let dirs: string[] = [];
let servers: Server[] = [];
beforeAll(() => assertBuilt());
afterEach(() => {
  for (const s of servers) s.close();
  servers = [];
  for (const d of dirs) removeDir(d);
  dirs = [];
});

function forge(): { home: string; dir: string; file: string } {
  const home = tempDir('kourai-nonreg-');
  dirs.push(home);
  const dir = join(home, 'projects', 'p', 'forge', 's1');
  mkdirSync(dir, { recursive: true });
  return { home, dir, file: join(dir, 'memoir.jsonl') };
}

const KINDS: { kind: string; word: RegExp; make: (file: string) => Promise<boolean> }[] = [
  { kind: 'FIFO', word: /a FIFO/, make: async (f) => spawnSync('mkfifo', [f]).status === 0 },
  {
    kind: 'socket',
    word: /a socket/,
    make: (f) =>
      new Promise((resolve) => {
        const s = createServer();
        servers.push(s);
        s.on('error', () => resolve(false));
        s.listen(f, () => resolve(true));
      }),
  },
  {
    kind: 'character device',
    word: /a character device/,
    make: async (f) => process.getuid?.() === 0 && spawnSync('mknod', [f, 'c', '1', '3']).status === 0,
  },
];

describe('a non-regular file named memoir.jsonl', () => {
  for (const k of KINDS) {
    it(`a ${k.kind}: append, verify, repair and inspect refuse it (exit 3), nothing is created beside it`, async (ctx) => {
      const { home, dir, file } = forge();
      const made = await k.make(file);
      ctx.skip(!made, `cannot create a ${k.kind} here (mknod needs root): the ${k.kind} case was not checked`);
      const a = kourai(['memoir', 'append', '--memoir', file, ENTRY], home);
      expect(a.code, a.stderr).toBe(3);
      expect(a.stderr.split('\n')[0]).toMatch(k.word);
      expect(a.stderr.split('\n')[0]).toContain(file);
      expect(readdirSync(dir)).toEqual(['memoir.jsonl']);
      for (const cmd of ['verify', 'repair', 'inspect']) {
        const r = kourai(['memoir', cmd, '--memoir', file, '--json'], home);
        expect(r.code, `${cmd}: ${r.stderr}`).toBe(3);
        expect(r.stderr.split('\n')[0]).toMatch(/not a regular file/);
      }
      expect(readdirSync(dir)).toEqual(['memoir.jsonl']);
    });
  }
});
