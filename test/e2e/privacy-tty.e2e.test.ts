import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConsentStore } from '../../src/store/consent-store.js';
import { openStateDb } from '../../src/store/state-db.js';

/**
 * The interactive screens through a real terminal: the built binary runs inside tmux (a private
 * server per test), keys are sent with send-keys and the screen is read with capture-pane.
 */
const root = fileURLToPath(new URL('../..', import.meta.url));
const bin = join(root, 'bin/kourai.js');
const hasTmux = spawnSync('tmux', ['-V']).status === 0;
let home: string;
let socket: string;

const tmux = (...args: string[]): string => spawnSync('tmux', ['-L', socket, ...args], { encoding: 'utf8' }).stdout;
const screen = (): string => tmux('capture-pane', '-p', '-t', 't');
async function waitForScreen(re: RegExp, timeoutMs = 15_000): Promise<string> {
  const start = Date.now();
  for (;;) {
    const s = screen();
    if (re.test(s)) return s;
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${re}; screen:\n${s}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}
async function keys(...ks: string[]): Promise<void> {
  for (const k of ks) {
    tmux('send-keys', '-t', 't', k);
    await new Promise((r) => setTimeout(r, 150));
  }
}
function start(args: string): void {
  const env = `env -i PATH=${process.env.PATH ?? ''} HOME=${home} KOURAI_HOME=${home} TERM=xterm-256color`;
  tmux('new-session', '-d', '-s', 't', '-x', '120', '-y', '50', `${env} node ${bin} ${args} 2>${join(home, 'stderr')}; echo EXIT=$? > ${join(home, 'exit')}; sleep 60`);
}
async function exitCode(): Promise<number> {
  const file = join(home, 'exit');
  const t0 = Date.now();
  while (!existsSync(file) || readFileSync(file, 'utf8').trim() === '') {
    if (Date.now() - t0 > 10_000) throw new Error(`the command did not exit; screen:\n${screen()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return Number(readFileSync(file, 'utf8').trim().replace('EXIT=', ''));
}

beforeEach(() => {
  home = mkdtempSync(join(tmpdir(), 'kourai-tty-'));
  socket = `kourai-e2e-${process.pid}-${Date.now()}`;
});
afterEach(() => {
  if (hasTmux) spawnSync('tmux', ['-L', socket, 'kill-server']);
  rmSync(home, { recursive: true, force: true });
});

describe.skipIf(!hasTmux || !existsSync(join(root, 'dist/main.js')))('interactive privacy screens (tmux)', () => {
  it('kourai federate consent: the Sovereignty Moment, played with keys, stores the choice', async () => {
    start('federate consent');
    const first = await waitForScreen(/esc cancel/);
    expect(first).toMatch(/Hephaestus opens[\s\S]*Aidos advocates[\s\S]*Cupid withdraws · bond-only, locked[\s\S]*Techne defers[\s\S]*Puck stays/);
    await keys('Down', 'Space', 'Down', 'Space');
    await waitForScreen(/Cupid is bond-only: locked out/);
    await keys('Down', 'Space', 'Enter');
    await waitForScreen(/May speak for the forge: Aidos, Metis/);
    await keys('y');
    expect(await exitCode()).toBe(0);
    const db = openStateDb(home);
    const now = Object.fromEntries(new ConsentStore(db).current().map((c) => [c.agent, c.allowed]));
    db.close();
    expect(now).toMatchObject({ aidos: true, metis: true, hephaestus: false, techne: false });
  });

  it('kourai federate consent: escape cancels with exit 130 and stores nothing', async () => {
    start('federate consent');
    await waitForScreen(/esc cancel/);
    await keys('Space', 'Escape');
    expect(await exitCode()).toBe(130);
    expect(readFileSync(join(home, 'stderr'), 'utf8')).toMatch(/cancelled: nothing was changed/);
    const db = openStateDb(home);
    expect(new ConsentStore(db).history()).toEqual([]);
    db.close();
  });

  it('kourai whisper: the gauge, details on enter, q quits with exit 0', async () => {
    writeFileSync(join(home, 'config.json'), JSON.stringify({ privacy: { noise_multiplier: 4 } }));
    spawnSync(process.execPath, [bin, 'federate', 'consent', '--allow', 'metis'], { env: { PATH: process.env.PATH ?? '', HOME: home, KOURAI_HOME: home } });
    start('whisper');
    const s = await waitForScreen(/q quit/);
    expect(s).toMatch(/Whisper Limit/);
    expect(s).toMatch(/forge\s+█{24} 100% left/);
    expect(s).toMatch(/cupid\s+bond-only: never leaves the forge/);
    await keys('Down', 'Enter');
    const d = await waitForScreen(/past contributions/);
    expect(d).toMatch(/› metis/);
    expect(d).toMatch(/noise σ = 4/);
    await keys('q');
    expect(await exitCode()).toBe(0);
  });
});
