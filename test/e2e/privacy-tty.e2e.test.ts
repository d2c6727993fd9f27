import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { ConsentStore } from '../../src/store/consent-store.js';
import { openStateDb } from '../../src/store/state-db.js';
import { assertBuilt, kourai } from '../helpers/bin.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { hasTmux, TmuxSession } from '../helpers/tmux.js';

/**
 * The interactive privacy screens through a real terminal: the built binary runs inside tmux (a
 * private server per test), keys are sent with send-keys and the screen is read with capture-pane.
 * Every key is sent only once the screen shows the effect of the one before (no pauses).
 */
let home: string;
let tmux: TmuxSession;

beforeAll(() => {
  assertBuilt();
  if (!hasTmux())
    throw new Error('tmux is needed for the terminal end-to-end tests (apt-get install tmux; .ci/run installs it)');
});
beforeEach(() => {
  home = tempDir('kourai-tty-');
  tmux = new TmuxSession();
});
afterEach(() => {
  tmux.kill();
  removeDir(home);
});

// The real binary starts for each test; give a loaded machine room (no timing is asserted).
vi.setConfig({ testTimeout: 90_000 });

function storedConsent(): Record<string, boolean> {
  const db = openStateDb(home);
  try {
    return Object.fromEntries(new ConsentStore(db).current().map((c) => [c.agent, c.allowed]));
  } finally {
    db.close();
  }
}

describe('interactive privacy screens (tmux)', () => {
  it('kourai federate consent: the Sovereignty Moment, played with keys, stores the choice', async () => {
    tmux.start(['federate', 'consent'], home);
    const first = await tmux.waitFor('q/Esc leave');
    expect(first).toMatch(
      /Hephaestus opens[\s\S]*Aidos advocates[\s\S]*Cupid withdraws · bond-only, locked[\s\S]*Techne defers[\s\S]*Puck stays/,
    );
    tmux.keys('Down');
    await tmux.waitFor(/› \[ \] Aidos/);
    tmux.keys('Space');
    await tmux.waitFor(/› \[x\] Aidos/);
    tmux.keys('Down');
    await tmux.waitFor(/› \[–\] Cupid/);
    tmux.keys('Space');
    await tmux.waitFor('Cupid is bond-only: locked out');
    tmux.keys('Down');
    await tmux.waitFor(/› \[ \] Metis/);
    tmux.keys('Space');
    await tmux.waitFor(/› \[x\] Metis/);
    tmux.keys('Enter');
    await tmux.waitFor('May speak for the forge: Aidos, Metis');
    tmux.keys('y');
    expect(await tmux.waitFor(/\[exit \d+\]/)).toContain('[exit 0]');
    expect(storedConsent()).toMatchObject({ aidos: true, metis: true, hephaestus: false, techne: false });
  });

  it('kourai federate consent: Esc leaves with exit 0, Ctrl-C cancels with 130; neither stores anything', async () => {
    tmux.start(['federate', 'consent'], home);
    await tmux.waitFor('q/Esc leave');
    tmux.keys('Space');
    await tmux.waitFor(/› \[x\] Hephaestus/);
    tmux.keys('Escape');
    expect(await tmux.waitFor(/\[exit \d+\]/)).toContain('[exit 0]');
    tmux.kill();
    tmux = new TmuxSession();
    tmux.start(['federate', 'consent'], home);
    await tmux.waitFor('q/Esc leave');
    tmux.keys('Space');
    await tmux.waitFor(/› \[x\] Hephaestus/);
    tmux.keys('C-c');
    const s = await tmux.waitFor(/\[exit \d+\]/);
    expect(s).toContain('[exit 130]');
    expect(s).toMatch(/cancelled: nothing was changed/);
    const db = openStateDb(home);
    expect(new ConsentStore(db).history()).toEqual([]);
    db.close();
  });

  it('kourai whisper: the gauge, details on enter, q quits with exit 0', async () => {
    writeFileSync(join(home, 'config.json'), JSON.stringify({ privacy: { noise_multiplier: 4 } }));
    const setUp = kourai(['federate', 'consent', '--allow', 'metis'], home);
    expect(setUp.stderr).toBe('');
    expect(setUp.code).toBe(0);
    expect(storedConsent()).toMatchObject({ metis: true });
    tmux.start(['whisper'], home);
    const s = await tmux.waitFor('q/Esc quit');
    expect(s).toMatch(/Whisper Limit/);
    expect(s).toMatch(/forge\s+█{24} 100% left/);
    expect(s).toMatch(/cupid\s+bond-only: never leaves the forge/);
    tmux.keys('Down');
    await tmux.waitFor(/› metis/);
    tmux.keys('Enter');
    const d = await tmux.waitFor('past contributions');
    expect(d).toMatch(/› metis/);
    expect(d).toMatch(/noise σ = 4/);
    tmux.keys('q');
    expect(await tmux.waitFor(/\[exit \d+\]/)).toContain('[exit 0]');
  });

  it('kourai whisper: Ctrl-C is exit 130', async () => {
    tmux.start(['whisper'], home);
    await tmux.waitFor('q/Esc quit');
    tmux.keys('C-c');
    expect(await tmux.waitFor(/\[exit \d+\]/)).toContain('[exit 130]');
  });
});
