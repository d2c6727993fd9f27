import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { assertBuilt, BIN, cleanEnv } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { kourai, kouraiAsync } from './run-bin.js';

/**
 * Exit 9 (network) as the process exit a script sees: the real binary joining a council that is
 * not there, and a server on 127.0.0.1 that is not a kourai council. Nothing is stored, the token
 * is never printed.
 */
const TOKEN = `kourai_1_${'s'.repeat(43)}`;
let home: string;
let servers: Server[];
beforeAll(() => assertBuilt());
beforeEach(() => {
  home = tempDir('kourai-e2e-federate-');
  servers = [];
});
afterEach(async () => {
  await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  removeDir(home);
});

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A port on 127.0.0.1 that nothing listens on: one the system just handed out and took back. */
async function closedPort(): Promise<string> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return `http://127.0.0.1:${port}`;
}

function expectNotJoined(): void {
  const st = kourai(['federate', 'status', '--offline', '--json'], { home });
  expect(st.code, st.stderr).toBe(0);
  expect(JSON.parse(st.stdout)).toMatchObject({ joined: false });
}

describe('kourai federate join: exit 9 from the real binary', () => {
  it('an unreachable council: exit 9, one line naming the URL, the JSON error document, nothing stored', async () => {
    const url = await closedPort();
    const r = kourai(['federate', 'join', '--server', url, '--token', TOKEN, '--json'], { home });
    expect(r.code, r.stderr).toBe(9);
    // --token on the command line: a warning first (the token is in the process list), then the error.
    expect(r.stderr.split('\n')[0]).toMatch(
      /^warning: --token puts the token in the process list.*--token-file FILE .*--token -/,
    );
    expect(r.stderr.split('\n').find((l) => l.startsWith('kourai: '))).toMatch(
      new RegExp(`^kourai: .*${url.replace(/[.:/]/g, '\\$&')}`),
    );
    expect(JSON.parse(r.stdout)).toMatchObject({ error: { code: 'network', exit_code: 9 } });
    expect(`${r.stdout}${r.stderr}`).not.toContain(TOKEN);
    expectNotJoined();
  });

  it('a server that is not a kourai council: exit 9, nothing stored', async () => {
    const url = await listen((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/html' });
      res.end('<h1>Not Found</h1>');
    });
    const r = await kouraiAsync(['federate', 'join', '--server', url, '--token', TOKEN], { home });
    expect(r.code, r.stderr).toBe(9);
    expect(r.stderr.split('\n').find((l) => l.startsWith('kourai: '))).toMatch(
      /^kourai: .* does not answer like a kourai council/,
    );
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toContain(TOKEN);
    expectNotJoined();
  });

  it('Ctrl-C while join waits for a council that accepts the connection and never answers: exit 130, one line, no TypeError', async () => {
    const url = await listen(() => undefined); // never answers
    const child = spawn(process.execPath, [BIN, 'federate', 'join', '--server', url, '--token-file', tokenFile()], {
      cwd: home,
      env: cleanEnv(home),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const done = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await new Promise((r) => setTimeout(r, 1500));
    child.kill('SIGINT');
    expect(await done, stderr).toBe(130);
    expect(stderr).not.toMatch(/TypeError|unexpected error|this is a bug/);
    expect(stderr).toMatch(/^kourai: cancel/m);
    expectNotJoined();
  });
});

function tokenFile(): string {
  const file = join(home, 'token');
  writeFileSync(file, TOKEN, { mode: 0o600 });
  return file;
}
