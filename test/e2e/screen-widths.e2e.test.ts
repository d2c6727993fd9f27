import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { councilEventEntry } from '../../src/memoir/derive/council-event.js';
import { Memoir } from '../../src/memoir/file/memoir.js';
import { details } from '../federation/council-event-fixture.js';
import { assertBuilt, copyHome, sampleHome } from '../helpers/bin.js';
import { removeDir } from '../helpers/ctx.js';
import { readEntries } from '../helpers/forge.js';
import { hasTmux, TmuxSession } from '../helpers/tmux.js';

/**
 * Every screen at medium widths, in a real terminal (tmux) through the built binary: it lays out
 * with its words whole, or refuses naming the size it needs. A word cut without an ellipsis, or glued
 * to its neighbour, fails the phrase checks below.
 */
let template: { home: string; memoirs: string[] };
let home: string;
let tmux: TmuxSession;

beforeAll(() => {
  assertBuilt();
  if (!hasTmux())
    throw new Error('tmux is needed for the terminal end-to-end tests (apt-get install tmux; .ci/run installs it)');
  template = sampleHome();
});
afterAll(() => removeDir(template.home));
afterEach(() => {
  tmux?.kill();
  if (home) removeDir(home);
});

vi.setConfig({ testTimeout: 90_000 });

function open(args: string[], columns: number, rows = 24): void {
  ({ home } = copyHome(template));
  tmux = new TmuxSession();
  tmux.start(args, home, { columns, rows });
}

const widest = (screen: string): number => Math.max(...screen.split('\n').map((l) => [...l].length));

describe.for([60, 100])('at %i columns', (columns) => {
  it('feedback: the header keeps "Feedback for techne" and the affinity; each rating label stays with its number', async () => {
    ({ home } = copyHome(template));
    const memoir = template.memoirs[0] as string;
    const scene = readEntries(memoir).find((e) => e.agent === 'techne')!.scene_id;
    removeDir(home);
    open(
      [
        'feedback',
        '--memoir',
        memoir.replace(template.home, '.'),
        '--agent',
        'techne',
        '--scene',
        scene,
        '--proposed',
        'x = compute()',
        '--force',
      ],
      columns,
    );
    const screen = await tmux.waitFor('Enter confirm · Esc skip');
    expect(screen).toMatch(/^Feedback for techne · .* affinity \d\.\d\d (stranger|familiar|trusted|bonded)$/m);
    for (const label of ['1 way off', '2 a bit off', '3 unsure', '4 right', '5 exactly right'])
      expect(screen).toContain(label);
    expect(widest(screen)).toBeLessThanOrEqual(columns);
  });

  it('replay: the header keeps the position apart from the player; the help overlay shows every key at 30 rows', async () => {
    open(['memoir', 'replay'], columns, 30);
    let screen = await tmux.waitFor(/\? help/);
    expect(screen.split('\n')[0]).toMatch(/^kourai replay · session \w{8} \(1\/\d+\) · ariadne\/\S+ +1\/\d+$/);
    tmux.keys('?');
    screen = await tmux.waitFor('? or Esc closes this help');
    for (const words of ['next beat', 'jump to an entry id', 'cancel (exit code 130)']) expect(screen).toContain(words);
    expect(widest(screen)).toBeLessThanOrEqual(columns);
  });

  it('council scene: the title stays in view to the last line, and what follows starts a line of its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'kourai-scene-'));
    const memoir = join(dir, 'memoir.jsonl');
    new Memoir(memoir).append([councilEventEntry(details())]);
    try {
      open(['federate', 'scene', '--memoir', memoir], columns, 24);
      let screen = await tmux.waitFor(/s skip/);
      const total = Number(/line \d+\/(\d+)/.exec(screen)?.[1]);
      expect(total).toBeGreaterThan(5);
      for (let i = 1; i < total; i++) tmux.keys('Right');
      screen = await tmux.waitFor(`line ${total}/${total}`);
      expect(screen.split('\n')[0]).toBe('The Council of Sisters — round 3');
      expect(widest(screen)).toBeLessThanOrEqual(columns);
      tmux.keys('s');
      screen = await tmux.waitFor('[exit 0]');
      expect(screen).toMatch(/^skipped: the scene stays in the memoir \(kourai federate scene\)$/m);
    } finally {
      removeDir(dir);
    }
  });

  it('train bond: the live table and the result keep to the width, every agent named at the start of a line', async () => {
    open(['train', 'bond', '--epochs', '2'], columns, 40);
    const screen = await tmux.waitFor(/\[exit \d+\]/, 80_000);
    expect(screen).toContain('[exit 0]');
    expect(widest(screen)).toBeLessThanOrEqual(columns);
    for (const agent of ['techne', 'metis', 'cupid']) expect(screen).toMatch(new RegExp(`^${agent}\\b`, 'm'));
  });

  it('whisper and consent: lay out at their minimum, or refuse naming it', async () => {
    for (const [args, min] of [
      [['whisper'], 80],
      [['federate', 'consent'], 70],
    ] as const) {
      open([...args], columns);
      const screen = await tmux.waitFor(columns >= min ? /q quit|Esc|Enter/ : /\[exit \d+\]/);
      if (columns < min) expect(screen).toMatch(new RegExp(`needs at least ${min}×\\d+`));
      else expect(widest(screen)).toBeLessThanOrEqual(columns);
      tmux.kill();
      removeDir(home);
    }
  });
});
