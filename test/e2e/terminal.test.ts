import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { assertBuilt, copyHome, kourai, sampleHome } from '../helpers/bin.js';
import { removeDir } from '../helpers/ctx.js';
import { lineCount, readEntries } from '../helpers/forge.js';
import { hasTmux, TmuxSession } from '../helpers/tmux.js';

/**
 * The two screens, driven in a real pseudo-terminal (tmux) through the built binary: what a new
 * user does with the sample forge. `.ci/run` installs tmux when it is missing.
 */
let home: string;
let memoirs: string[];
let tmux: TmuxSession;

let template: { home: string; memoirs: string[] };
beforeAll(() => {
  assertBuilt();
  if (!hasTmux())
    throw new Error('tmux is needed for the terminal end-to-end tests (apt-get install tmux; .ci/run installs it)');
  template = sampleHome();
});
afterAll(() => removeDir(template.home));

beforeEach(() => {
  ({ home, memoirs } = copyHome(template));
  tmux = new TmuxSession();
});

afterEach(() => {
  tmux.kill();
  removeDir(home);
});

const digest = (paths: string[]): string =>
  createHash('sha256')
    .update(paths.map((p) => readFileSync(p)).join('\n'))
    .digest('hex');

// Each test starts the real binary several times; give a loaded machine room (no timing is asserted).
vi.setConfig({ testTimeout: 90_000 });

describe('kourai memoir replay in a terminal', () => {
  it('plays the sample forge: step, scene, search, filter, help, quit; the memoirs are untouched', async () => {
    const before = digest(memoirs);
    const total = memoirs.reduce((n, m) => n + lineCount(m), 0);
    tmux.start(['memoir', 'replay'], home);
    // The key hints appear once the screen listens for keys.
    let screen = await tmux.waitFor(new RegExp(`beat 1/${total} · \\? help · q quit`));
    expect(screen).toContain('kourai replay · session ');
    expect(screen).toContain('ariadne/sample-forge');
    expect(screen).toContain('▸ hephaestus');
    tmux.keys('l');
    await tmux.waitFor(`2/${total}`);
    tmux.keys('Right');
    screen = await tmux.waitFor(`3/${total}`);
    expect(screen).toContain('routes to');
    tmux.keys('j');
    screen = await tmux.waitFor(/scene session-\w+\.turn-2/);
    tmux.keys('/');
    await tmux.waitFor('search: ');
    tmux.text('naming');
    tmux.keys('Enter');
    screen = await tmux.waitFor(/"naming": match \d+ of \d+/);
    expect(screen).toMatch(/naming/);
    tmux.keys('?');
    screen = await tmux.waitFor('jump to an entry id');
    expect(screen).toContain('Ctrl-C');
    tmux.keys('Escape');
    await tmux.waitFor('? help · q quit');
    tmux.keys('a');
    await tmux.waitFor(/showing hephaestus only \(\d+ beats\)/);
    tmux.keys('q');
    await tmux.waitFor('[exit 0]');
    expect(digest(memoirs)).toBe(before);
  });

  it('--no-input on a terminal prints the text story instead', async () => {
    tmux.start(['memoir', 'replay', '--no-input', '--agent', 'cupid'], home);
    const screen = await tmux.waitFor('[exit 0]');
    expect(screen).toMatch(/cupid · /);
    expect(screen).toMatch(/\d+ beats in \d+ sessions/);
    expect(screen).not.toContain('kourai replay');
  });

  it('a terminal too small: a clear message and exit 3', async () => {
    tmux.start(['memoir', 'replay'], home, { columns: 50, rows: 12 });
    const screen = await tmux.waitFor('[exit 3]');
    expect(screen).toContain('the terminal is 50×12; the replay screen needs');
  });
});

describe('kourai feedback in a terminal', () => {
  function subject(): { memoir: string; scene: string; proposal: string } {
    const memoir = memoirs[3] as string; // the newest session
    const scene = readEntries(memoir).find((e) => e.agent === 'techne' && e.source === 'specialist_proposed')
      ?.scene_id as string;
    const proposal = join(home, 'proposal.py');
    writeFileSync(proposal, 'def load(path):\n    with open(path) as f:\n        return [json.loads(l) for l in f]\n');
    return { memoir, scene, proposal };
  }

  it('rates a proposal with keys, writes one entry, and memoir show finds it', async () => {
    const { memoir, scene, proposal } = subject();
    const before = lineCount(memoir);
    tmux.start(
      ['feedback', '--memoir', memoir, '--agent', 'techne', '--scene', scene, '--proposed-file', proposal],
      home,
    );
    let screen = await tmux.waitFor('Enter confirm · Esc skip');
    expect(screen).toContain('How right did it feel?');
    expect(screen).toContain('Feedback for techne');
    expect(screen).toContain('with open(path) as f:');
    expect(screen).toContain('affinity 0.34 familiar');
    tmux.keys('4');
    await tmux.waitFor('[4 right]');
    tmux.keys('Enter');
    screen = await tmux.waitFor('What did you do with it?');
    expect(screen).toContain('▸ 1 accepted');
    tmux.keys('Down');
    await tmux.waitFor('▸ 2 modified');
    tmux.keys('Up', 'Enter');
    await tmux.waitFor('Comment (optional)');
    tmux.text('clear and small');
    await tmux.waitFor('> clear and small');
    tmux.keys('Enter');
    screen = await tmux.waitFor('[exit 0]');
    expect(screen).toMatch(/✓ recorded: techne rated 4\/5 \(right\), accepted/);
    const id = /see it: kourai memoir show ([0-9A-Z]{26})/.exec(screen)?.[1];
    expect(id).toBeDefined();
    expect(lineCount(memoir)).toBe(before + 1);
    const e = readEntries(memoir).at(-1);
    expect(e).toMatchObject({
      entry_id: id,
      agent: 'techne',
      scene_id: scene,
      likert: 4,
      comment: 'clear and small',
      player_response: { kind: 'accepted', felt: 'right', delta: null },
    });
    const shown = kourai(['memoir', 'show', id as string, '--json'], home);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ entry: { entry_id: id, likert: 4 } });
  });

  it('Ctrl-C mid-prompt: exit 130 and nothing written', async () => {
    const { memoir, scene, proposal } = subject();
    const before = readFileSync(memoir);
    tmux.start(
      ['feedback', '--memoir', memoir, '--agent', 'techne', '--scene', scene, '--proposed-file', proposal],
      home,
    );
    await tmux.waitFor('Enter confirm · Esc skip');
    tmux.keys('5', 'Enter');
    await tmux.waitFor('What did you do with it?');
    tmux.keys('C-c');
    const screen = await tmux.waitFor('[exit 130]');
    expect(screen).toContain('feedback cancelled; nothing was written');
    expect(readFileSync(memoir).equals(before)).toBe(true);
  });

  it('Escape skips: exit 0, nothing written, and the next prompt backs off', async () => {
    const { memoir, scene, proposal } = subject();
    const before = readFileSync(memoir);
    tmux.start(
      ['feedback', '--memoir', memoir, '--agent', 'techne', '--scene', scene, '--proposed-file', proposal],
      home,
    );
    await tmux.waitFor('Enter confirm · Esc skip');
    tmux.keys('Escape');
    const screen = await tmux.waitFor('[exit 0]');
    expect(screen).toContain('skipped: nothing was written');
    expect(readFileSync(memoir).equals(before)).toBe(true);
    // Asked again (no answer by flags): the gate backs off.
    const again = kourai(
      ['feedback', '--memoir', memoir, '--agent', 'techne', '--scene', scene, '--proposed-file', proposal, '--json'],
      home,
    );
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({
      asked: false,
      reason: 'cooldown',
      gate: { skips: 1, cooldown: 10 },
    });
  });
});
