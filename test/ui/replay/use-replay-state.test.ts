import { describe, expect, it } from 'vitest';
import type { StoryNav } from '../../../src/replay/story.js';
import { REPLAY_KEYS, type KeyPress } from '../../../src/ui/keys.js';
import {
  initialReplayState,
  replayFrame,
  replayKeyAction,
  replayReducer,
  SPEEDS,
  type ReplayAction,
  type ReplayState,
} from '../../../src/ui/replay/use-replay-state.js';
import { smallStory } from '../../helpers/story.js';

const key = (k: string): KeyPress =>
  k.length > 1 && !/^[\x20-\x7e]+$/.test(k) ? { input: '', name: null } : { input: k, name: null };
const named = (name: KeyPress['name']): KeyPress => ({ input: '', name });

function run(nav: StoryNav, s: ReplayState, ...actions: (ReplayAction | string)[]): ReplayState {
  return actions.reduce<ReplayState>(
    (st, a) => replayReducer(st, typeof a === 'string' ? { type: 'key', press: key(a) } : a, nav),
    s,
  );
}
const id = (nav: StoryNav, s: ReplayState): string | null => (s.ref ? nav.beat(s.ref).entry_id : null);

describe('replay reducer', () => {
  it('starts at the first beat, paused, at 1 beat/s, unfiltered', () => {
    const nav = smallStory();
    const s = initialReplayState(nav);
    expect(id(nav, s)).toBe('E001');
    expect(s).toMatchObject({ playing: false, overlay: 'none', done: null, filter: { agents: [] } });
    expect(SPEEDS[s.speed]).toBe(1);
  });

  it('steps beats forwards and backwards, and says so at either end', () => {
    const nav = smallStory();
    let s = run(nav, initialReplayState(nav), { type: 'next' }, { type: 'next' });
    expect(id(nav, s)).toBe('E003');
    s = run(nav, s, { type: 'prev' });
    expect(id(nav, s)).toBe('E002');
    s = run(nav, s, { type: 'prev' }, { type: 'prev' });
    expect(id(nav, s)).toBe('E001');
    expect(s.message).toEqual({ text: 'the beginning of the story', tone: 'warn' });
    s = run(nav, s, { type: 'last' }, { type: 'next' });
    expect(id(nav, s)).toBe('E008');
    expect(s.message?.text).toBe('the end of the story');
  });

  it('jumps scene by scene, across sessions; previous scene first rewinds to the scene start', () => {
    const nav = smallStory();
    let s = initialReplayState(nav);
    const scenes: string[] = [];
    for (let i = 0; i < 4; i++) {
      scenes.push(id(nav, s) as string);
      s = run(nav, s, { type: 'nextScene' });
    }
    expect(scenes).toEqual(['E001', 'E004', 'E006', 'E008']);
    expect(s.message?.text).toBe('no later scene');
    s = run(nav, s, { type: 'prev' }); // E007, in scene s2.turn-0
    s = run(nav, s, { type: 'prevScene' });
    expect(id(nav, s)).toBe('E006');
    s = run(nav, s, { type: 'prevScene' });
    expect(id(nav, s)).toBe('E004');
  });

  it('plays on ticks until the end, then pauses; speed goes up and down within bounds', () => {
    const nav = smallStory();
    let s = run(nav, initialReplayState(nav), { type: 'togglePlay' });
    expect(s.playing).toBe(true);
    for (let i = 0; i < 10; i++) s = run(nav, s, { type: 'tick' });
    expect(id(nav, s)).toBe('E008');
    expect(s.playing).toBe(false);
    expect(run(nav, s, { type: 'togglePlay' }).playing).toBe(false); // nothing left to play
    let v = initialReplayState(nav);
    for (let i = 0; i < 9; i++) v = run(nav, v, { type: 'faster' });
    expect(SPEEDS[v.speed]).toBe(8);
    for (let i = 0; i < 9; i++) v = run(nav, v, { type: 'slower' });
    expect(SPEEDS[v.speed]).toBe(0.5);
  });

  it('cycles the agent filter through the agents present and back to everyone, staying near the current beat', () => {
    const nav = smallStory();
    let s = run(nav, initialReplayState(nav), { type: 'next' }, { type: 'next' }, { type: 'next' }); // E004 techne
    s = run(nav, s, { type: 'nextAgent' }); // hephaestus: no beat at/after E004 → the last one before
    expect(s.filter.agents).toEqual(['hephaestus']);
    expect(id(nav, s)).toBe('E001');
    s = run(nav, s, { type: 'nextAgent' }); // metis: first at/after E001
    expect(s.filter.agents).toEqual(['metis']);
    expect(s.message?.text).toBe('showing metis only (2 beats)');
    s = run(nav, s, { type: 'next' });
    expect(id(nav, s)).toBe('E006');
    s = run(nav, s, { type: 'prevAgent' }, { type: 'prevAgent' });
    expect(s.filter.agents).toEqual([]);
    expect(s.message?.text).toBe('showing every agent (8 beats)');
    s = run(nav, s, { type: 'prevAgent' });
    expect(s.filter.agents).toEqual(['puck']); // the last agent present, in forge order
  });

  it('searches with / then Enter; n and N move between matches and wrap', () => {
    const nav = smallStory();
    let s = run(nav, initialReplayState(nav), '/');
    expect(s.overlay).toBe('search');
    s = run(nav, s, 'n', 'a', 'm', 'i', 'n', 'g');
    expect(s.input).toBe('naming');
    s = run(nav, s, { type: 'submit' });
    expect(s.overlay).toBe('none');
    expect(id(nav, s)).toBe('E004');
    expect(s.message?.text).toBe('"naming": match 1 of 1');
    s = run(nav, s, 'n');
    expect(id(nav, s)).toBe('E004');
    expect(s.message?.text).toBe('"naming": match 1 of 1 (wrapped)');
    s = run(nav, s, { type: 'openSearch' }, { type: 'typeText', text: 'proposal' }, { type: 'submit' });
    expect(id(nav, s)).toBe('E006');
    s = run(nav, s, 'N');
    expect(id(nav, s)).toBe('E004');
    s = run(nav, s, { type: 'openSearch' }, { type: 'typeText', text: 'zebra' }, { type: 'submit' });
    expect(id(nav, s)).toBe('E004');
    expect(s.message).toEqual({ text: 'no match for "zebra"', tone: 'warn' });
  });

  it('n before any search says how to search', () => {
    const nav = smallStory();
    expect(run(nav, initialReplayState(nav), 'n').message?.text).toBe('no search yet: press / to search');
  });

  it('jumps to an entry id with :, clearing a filter that hides it; unknown ids are reported', () => {
    const nav = smallStory();
    let s = run(
      nav,
      initialReplayState(nav, { agents: ['metis'] }),
      ':',
      { type: 'typeText', text: 'E005' },
      { type: 'submit' },
    );
    expect(id(nav, s)).toBe('E005');
    expect(s.filter.agents).toEqual([]);
    expect(s.message?.text).toBe('jumped to E005; the agent filter was cleared to show it');
    s = run(nav, s, ':', { type: 'typeText', text: 'E999' }, { type: 'submit' });
    expect(id(nav, s)).toBe('E005');
    expect(s.message?.tone).toBe('warn');
  });

  it('in a prompt, keys are text: q does not quit, Backspace edits, Esc closes', () => {
    const nav = smallStory();
    let s = run(nav, initialReplayState(nav), '/', 'q', 'x');
    expect(s).toMatchObject({ overlay: 'search', input: 'qx', done: null });
    s = replayReducer(s, { type: 'key', press: named('backspace') }, nav);
    expect(s.input).toBe('q');
    s = replayReducer(s, { type: 'key', press: named('escape') }, nav);
    expect(s).toMatchObject({ overlay: 'none', input: '', done: null });
  });

  it('help opens with ? and closes with ? or Esc; q quits, Ctrl-C cancels', () => {
    const nav = smallStory();
    let s = run(nav, initialReplayState(nav), '?');
    expect(s.overlay).toBe('help');
    expect(run(nav, s, 'l').ref).toEqual(s.ref); // navigation keys do nothing under the help
    s = replayReducer(s, { type: 'key', press: named('escape') }, nav);
    expect(s.overlay).toBe('none');
    expect(run(nav, s, 'q').done).toBe('quit');
    expect(replayReducer(s, { type: 'key', press: named('ctrl-c') }, nav).done).toBe('cancel');
  });

  it('applies a run of keys that arrived together one by one', () => {
    const nav = smallStory();
    const s = run(nav, initialReplayState(nav), 'lll');
    expect(id(nav, s)).toBe('E004');
  });

  it('starts at --at when given, and says when the id is not in view', () => {
    const nav = smallStory();
    expect(id(nav, initialReplayState(nav, { at: 'E006' }))).toBe('E006');
    const s = initialReplayState(nav, { at: 'E002', agents: ['techne'] });
    expect(id(nav, s)).toBe('E004');
    expect(s.message?.tone).toBe('warn');
  });

  it("every key in the README's table does what the README says", () => {
    // The README's key table (section "The replay screen"), written out by hand: the oracle is the
    // documentation, not REPLAY_KEYS, so a binding that drifts from what users read fails here.
    const README: [keys: string[], action: string][] = [
      [['right', 'l', 'enter'], 'next'],
      [['left', 'h'], 'prev'],
      [['down', 'j'], 'nextScene'],
      [['up', 'k'], 'prevScene'],
      [['g', 'home'], 'first'],
      [['G', 'end'], 'last'],
      [['space', 'p'], 'togglePlay'],
      [['+', '='], 'faster'],
      [['-', '_'], 'slower'],
      [['a', 'tab'], 'nextAgent'],
      [['A'], 'prevAgent'],
      [['/'], 'openSearch'],
      [['n'], 'searchNext'],
      [['N'], 'searchPrev'],
      [[':', '#'], 'openJump'],
      [['?'], 'toggleHelp'],
      [['q', 'escape'], 'quit'],
      [['ctrl-c'], 'cancel'],
    ];
    const nav = smallStory();
    const s = initialReplayState(nav);
    const press = (k: string): KeyPress =>
      k.length === 1 ? { input: k, name: null } : { input: '', name: k as KeyPress['name'] };
    for (const [keys, action] of README) {
      for (const k of keys) expect(replayKeyAction(s, press(k)), `key ${k}`).toEqual({ type: action });
    }
    // …and the help overlay (built from REPLAY_KEYS) offers no key the README does not document.
    expect(REPLAY_KEYS.flatMap((b) => b.keys).sort()).toEqual(README.flatMap(([keys]) => keys).sort());
  });

  it('documented keys reach their action in the real state: g/Home to the first beat, G/End to the last, ? opens help', () => {
    const nav = smallStory();
    const last = run(nav, initialReplayState(nav), { type: 'last' });
    expect(id(nav, last)).toBe('E008');
    expect(id(nav, run(nav, last, 'g'))).toBe('E001');
    expect(id(nav, replayReducer(last, { type: 'key', press: named('home') }, nav))).toBe('E001');
    expect(id(nav, run(nav, initialReplayState(nav), 'G'))).toBe('E008');
    expect(id(nav, replayReducer(initialReplayState(nav), { type: 'key', press: named('end') }, nav))).toBe('E008');
    expect(run(nav, initialReplayState(nav), '?').overlay).toBe('help');
  });
});

describe('replayFrame', () => {
  it('derives the session, scene window, position and affinity for the screen', () => {
    const nav = smallStory();
    const s = run(nav, initialReplayState(nav), { type: 'last' }, { type: 'prev' }, { type: 'prev' });
    const f = replayFrame(nav, s, 5);
    expect(f.session?.session).toBe('session-two');
    expect(f.beat?.entry_id).toBe('E006');
    expect(f.scene?.beats.map((b) => b.entry_id)).toEqual(['E006', 'E007']);
    expect(f.position).toBe(5);
    expect(f.total).toBe(8);
    expect(f.affinity).toEqual({ metis: 0.04, techne: -0.05 });
  });
});

describe('replay reducer: a search that needs the full-text index first', () => {
  const search = (q: string): ReplayAction[] => [
    { type: 'openSearch' },
    { type: 'typeText', text: q },
    { type: 'submit' },
  ];

  it('waits on the build (progress, then the search runs where it would have)', () => {
    const nav = smallStory();
    const direct = run(nav, initialReplayState(nav), ...search('proposal'));
    let s = run(nav, initialReplayState(nav, { needsTextIndex: true }), ...search('proposal'));
    expect(s.building).toEqual({ query: 'proposal', dir: 1, done: 0, total: 0, cancelling: false });
    expect(s.ref).toEqual(initialReplayState(nav).ref); // not moved yet
    s = run(nav, s, { type: 'textIndexProgress', done: 40, total: 100 });
    expect(s.building).toMatchObject({ done: 40, total: 100 });
    // Keys other than Esc, q and Ctrl-C do nothing meanwhile.
    for (const k of ['l', 'j', ' ', '/', 'a']) expect(run(nav, s, k)).toBe(s);
    s = run(nav, s, { type: 'textIndexBuilt' });
    expect(s.building).toBeNull();
    expect(s.needsTextIndex).toBe(false);
    expect(s.ref).toEqual(direct.ref);
    expect(s.message).toEqual(direct.message);
    // n: searches at once now
    expect(run(nav, s, 'n').building).toBeNull();
  });

  it('Esc asks the build to stop; stopped, it says so (or the error) and n tries again', () => {
    const nav = smallStory();
    let s = run(nav, initialReplayState(nav, { needsTextIndex: true }), ...search('proposal'));
    expect(replayKeyAction(s, named('escape'))).toEqual({ type: 'cancelTextIndex' });
    s = run(nav, s, { type: 'key', press: named('escape') });
    expect(s.building?.cancelling).toBe(true);
    const stopped = run(nav, s, { type: 'textIndexStopped', error: null });
    expect(stopped.building).toBeNull();
    expect(stopped.needsTextIndex).toBe(true);
    expect(stopped.message).toEqual({
      text: 'search cancelled: the full-text index was not built (nothing was written); / searches again',
      tone: 'warn',
    });
    expect(run(nav, stopped, 'n').building).toMatchObject({ query: 'proposal', dir: 1, cancelling: false });
    const failed = run(nav, s, {
      type: 'textIndexStopped',
      error: 'cannot write the memoir index x: the disk is full: …',
    });
    expect(failed.message).toEqual({ text: 'cannot write the memoir index x: the disk is full: …', tone: 'warn' });
  });

  it('q and Ctrl-C end the screen during a build', () => {
    const nav = smallStory();
    const s = run(nav, initialReplayState(nav, { needsTextIndex: true }), ...search('proposal'));
    expect(run(nav, s, 'q').done).toBe('quit');
    expect(run(nav, s, { type: 'key', press: named('ctrl-c') }).done).toBe('cancel');
  });
});

describe('the full-text gauge', () => {
  it('fits the narrowest screen on its first line, with how to stop it; counts on the second', async () => {
    const { textIndexGauge } = await import('../../../src/ui/replay/replay-view.js');
    const b = { query: 'naming', dir: 1 as const, done: 4.2e6, total: 10e6, cancelling: false };
    for (const width of [60, 80, 120, 200]) {
      const [gauge, detail] = textIndexGauge(b, width);
      expect(gauge.length).toBeLessThanOrEqual(width);
      expect(gauge).toMatch(/^building the full-text index █+░+ 42% · Esc cancels$/);
      expect(detail).toBe(
        '4.2 MB of 10 MB read; the search "naming" runs once it is built (only the first search builds it)',
      );
    }
    expect(textIndexGauge({ ...b, cancelling: true }, 60)[0]).toMatch(/ 42% · stopping…$/);
    expect(textIndexGauge({ ...b, done: 0, total: 0 }, 60)).toEqual([
      'building the full-text index ░░░░░░░░░░ 0% · Esc cancels',
      'the search "naming" runs once it is built (only the first search builds it)',
    ]);
  });
});
