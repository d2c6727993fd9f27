import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt } from '../helpers/bin.js';
import { protocolRelay } from '../council/helpers.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { BIN, kourai, kouraiAsync } from './run-bin.js';

/**
 * Two-sided protocol refusal with the real binaries: `kourai council serve` on 127.0.0.1 refuses a
 * request without (or with another) Kourai-Protocol header; `kourai federate join` says v2 on every
 * request and is served; the same binary, its header rewritten in flight to another version (a
 * relay standing for a forge of that version), gets the council's refusal as exit 9 naming both.
 */
let home: string;
let council: ChildProcess | undefined;
let url: string;
let token: string;
beforeAll(async () => {
  assertBuilt();
  home = tempDir('kourai-e2e-protocol-');
  const dataDir = join(home, 'council');
  const added = kourai(['council', 'forge', 'add', 'athens', '--data-dir', dataDir, '--json'], { home });
  expect(added.code, added.stderr).toBe(0);
  token = (JSON.parse(added.stdout) as { token: string }).token;
  // Layouts derived from the built-in base: its fingerprint is the accepted one, as a forge's is.
  council = spawn(
    process.execPath,
    [
      BIN,
      'council',
      'serve',
      '--port',
      '0',
      '--data-dir',
      dataDir,
      '--layouts',
      JSON.stringify({ derive: { base: 'builtin', rank: 8 } }),
      '--json',
    ],
    {
      env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home, CI: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let err = '';
  council.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  url = await new Promise<string>((resolve, reject) => {
    createInterface({ input: council!.stdout! }).once('line', (line) =>
      resolve((JSON.parse(line) as { url: string }).url),
    );
    council!.once('exit', (code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
}, 60_000);
afterAll(async () => {
  if (council && council.exitCode === null) {
    const gone = new Promise((r) => council!.once('exit', r));
    council.kill('SIGTERM');
    await gone;
  }
  removeDir(home);
});

describe('the council binary refuses another protocol version', () => {
  it('no header, or another version: 400, one line of JSON naming both versions', async () => {
    for (const [headers, says] of [
      [{}, /no Kourai-Protocol header.*protocol v1/],
      [{ 'kourai-protocol': '3' }, /the request speaks v3/],
    ] as const) {
      const res = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${token}`, ...headers } });
      const text = await res.text();
      expect(res.status).toBe(400);
      expect(text.split('\n')).toHaveLength(1);
      const e = (JSON.parse(text) as { error: { code: string; message: string } }).error;
      expect(e.code).toBe('protocol_mismatch');
      expect(e.message).toMatch(/this council speaks protocol v2/);
      expect(e.message).toMatch(says);
    }
    const ok = await fetch(`${url}/v1/me`, { headers: { authorization: `Bearer ${token}`, 'kourai-protocol': '2' } });
    expect(ok.status).toBe(200);
  });
});

describe('the forge binary', () => {
  it('says Kourai-Protocol: 2 on every request and is served (join succeeds)', async () => {
    const relay = await protocolRelay(url, null);
    try {
      const forge = join(home, 'forge-ok');
      mkdirSync(forge);
      const r = await kouraiAsync(['federate', 'join', '--server', relay.url, '--token', token, '--json'], {
        home: forge,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ protocol: 2, forge: 'athens' });
      expect(relay.seen.length).toBeGreaterThanOrEqual(3);
      expect(relay.seen.every((v) => v === '2')).toBe(true);
    } finally {
      await relay.close();
    }
  });

  it('refused by the council for its version: exit 9, both versions named, the side to upgrade, nothing stored', async () => {
    const relay = await protocolRelay(url, '3');
    try {
      const forge = join(home, 'forge-v3');
      mkdirSync(forge);
      const r = await kouraiAsync(['federate', 'join', '--server', relay.url, '--token', token, '--json'], {
        home: forge,
      });
      expect(r.code, r.stderr).toBe(9);
      expect(r.stderr.split('\n').find((l) => l.startsWith('kourai: '))).toMatch(
        /^kourai: council: the council at .* speaks protocol v2 and refused this request's v3/,
      );
      expect(r.stderr).toMatch(/ask its operator to upgrade/);
      expect(JSON.parse(r.stdout)).toMatchObject({ error: { exit_code: 9 } });
      expect(`${r.stdout}${r.stderr}`).not.toContain(token);
      const st = kourai(['federate', 'status', '--offline', '--json'], { home: forge });
      expect(JSON.parse(st.stdout)).toMatchObject({ joined: false });
    } finally {
      await relay.close();
    }
  });
});
