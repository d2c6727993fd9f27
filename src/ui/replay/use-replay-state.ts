import type { Agent } from '../../memoir/format/agents.js';
import {
  nearest,
  NO_FILTER,
  type AffinityTotals,
  type Beat,
  type BeatRef,
  type SceneWindow,
  type SessionInfo,
  type StoryFilter,
  type StoryNav,
} from '../../replay/story.js';
import { bound, REPLAY_KEYS, type KeyPress, type ReplayKeyAction } from '../keys.js';
import { count } from '../../format.js';

/**
 * The replay screen's state and its reducer. Pure apart from reading the story through
 * `StoryNav` (synchronous, read-only), so it is unit-tested with an in-memory story.
 */
export const SPEEDS = [0.5, 1, 2, 4, 8] as const;
export const DEFAULT_SPEED = 1;

export type Overlay = 'none' | 'help' | 'search' | 'jump';

export interface ReplayState {
  ref: BeatRef | null;
  filter: StoryFilter;
  playing: boolean;
  /** Index into SPEEDS (beats per second). */
  speed: number;
  overlay: Overlay;
  /** What is being typed in the search or jump prompt. */
  input: string;
  lastSearch: string | null;
  message: { text: string; tone: 'info' | 'warn' } | null;
  /** Set when the screen should close: `quit` (q) or `cancel` (Ctrl-C). */
  done: 'quit' | 'cancel' | null;
  /** Text search needs the full-text index built first (a bulk load left it to the first query). */
  needsTextIndex: boolean;
  /** The full-text index being built for a search that waits on it (the input hook runs the build). */
  building: TextIndexBuild | null;
}

export interface TextIndexBuild {
  /** The search to run once it is built. */
  query: string;
  dir: 1 | -1;
  done: number;
  total: number;
  /** Esc was pressed: the build is being stopped (the hook aborts it). */
  cancelling: boolean;
}

export type ReplayAction =
  | { type: Exclude<ReplayKeyAction, 'searchNext' | 'searchPrev'> }
  | { type: 'searchNext' }
  | { type: 'searchPrev' }
  | { type: 'tick' }
  | { type: 'setAgent'; agent: Agent | null }
  | { type: 'typeText'; text: string }
  | { type: 'backspace' }
  | { type: 'submit' }
  | { type: 'closeOverlay' }
  | { type: 'cancelTextIndex' }
  | { type: 'textIndexProgress'; done: number; total: number }
  | { type: 'textIndexBuilt' }
  /** The build stopped: cancelled (Esc), or failed with this one-line message. */
  | { type: 'textIndexStopped'; error: string | null }
  /** A key press: mapped against the state at the moment it is applied, so fast typing is never misread. */
  | { type: 'key'; press: KeyPress };

export function initialReplayState(
  nav: StoryNav,
  opts: { agents?: readonly Agent[]; at?: string; needsTextIndex?: boolean } = {},
): ReplayState {
  const filter: StoryFilter = { agents: [...(opts.agents ?? [])] };
  let ref = nav.edge('first', filter);
  let message: ReplayState['message'] = null;
  if (opts.at) {
    const hit = nav.find(opts.at);
    if (hit && nav.matches(hit, filter)) ref = hit;
    else message = { text: `no entry "${opts.at}" in this view`, tone: 'warn' };
  }
  if (!ref)
    message = {
      text: filter.agents.length ? `no beats for ${filter.agents.join(', ')}` : 'the memoir has no entries',
      tone: 'warn',
    };
  return {
    ref,
    filter,
    playing: false,
    speed: SPEEDS.indexOf(DEFAULT_SPEED),
    overlay: 'none',
    input: '',
    lastSearch: null,
    message,
    done: null,
    needsTextIndex: opts.needsTextIndex ?? false,
    building: null,
  };
}

const info = (text: string): ReplayState['message'] => ({ text, tone: 'info' });
/** `1 beat/s`, `2 beats/s`. */
const speedText = (i: number): string => `${count(SPEEDS[i] ?? 1, 'beat')}/s`;
const warn = (text: string): ReplayState['message'] => ({ text, tone: 'warn' });

function moveTo(s: ReplayState, ref: BeatRef | null, edgeText: string): ReplayState {
  if (!ref) return { ...s, playing: false, message: warn(edgeText) };
  return { ...s, ref, message: null };
}

function search(s: ReplayState, nav: StoryNav, query: string, dir: 1 | -1): ReplayState {
  const q = query.trim();
  if (!q) return { ...s, message: warn('type something to search for') };
  // The index first: the hook builds it (progress, Esc cancels) and the search runs when it is done.
  if (s.needsTextIndex)
    return { ...s, playing: false, message: null, building: { query: q, dir, done: 0, total: 0, cancelling: false } };
  let hit = nav.search(q, s.ref, dir, s.filter);
  let wrapped = false;
  if (!hit) {
    hit = nav.search(q, null, dir, s.filter);
    wrapped = hit !== null;
  }
  if (!hit) return { ...s, lastSearch: q, message: warn(noMatch(nav, q, s.filter)) };
  const which = `match ${nav.searchRank(hit, q, s.filter)} of ${nav.searchCount(q, s.filter)}`;
  return { ...s, ref: hit, lastSearch: q, message: info(`"${q}": ${which}${wrapped ? ' (wrapped)' : ''}`) };
}

/** No match: with an agent filter, say so, and how many matches every agent has. */
function noMatch(nav: StoryNav, q: string, filter: StoryFilter): string {
  if (filter.agents.length === 0) return `no match for "${q}"`;
  const all = nav.searchCount(q, NO_FILTER);
  const among = `among ${filter.agents.join(', ')}'s beats`;
  return all > 0
    ? `no match for "${q}" ${among}; ${count(all, 'match', 'matches')} with every agent (a changes the filter)`
    : `no match for "${q}" (the filter shows ${filter.agents.join(', ')} only)`;
}

function setFilter(s: ReplayState, nav: StoryNav, agent: Agent | null): ReplayState {
  const filter: StoryFilter = agent ? { agents: [agent] } : NO_FILTER;
  const ref = nearest(nav, s.ref, filter);
  if (!ref) return { ...s, message: warn(`no beats for ${agent}`) };
  const n = nav.count(filter);
  return {
    ...s,
    filter,
    ref,
    message: info(agent ? `showing ${agent} only (${count(n, 'beat')})` : `showing every agent (${count(n, 'beat')})`),
  };
}

function cycleAgent(s: ReplayState, nav: StoryNav, dir: 1 | -1): ReplayState {
  const order: (Agent | null)[] = [null, ...nav.agents()];
  const current = s.filter.agents.length === 1 ? (s.filter.agents[0] as Agent) : null;
  const i = s.filter.agents.length > 1 ? 0 : Math.max(0, order.indexOf(current));
  const next = order[(i + dir + order.length) % order.length] ?? null;
  return setFilter(s, nav, next);
}

export function replayReducer(s: ReplayState, a: ReplayAction, nav: StoryNav): ReplayState {
  switch (a.type) {
    case 'key': {
      // A pasted run of keys outside a prompt is applied one key at a time.
      if (a.press.name === null && [...a.press.input].length > 1 && s.overlay !== 'search' && s.overlay !== 'jump') {
        let out = s;
        for (const ch of a.press.input)
          out = replayReducer(out, { type: 'key', press: { input: ch, name: ch === ' ' ? 'space' : null } }, nav);
        return out;
      }
      const action = replayKeyAction(s, a.press);
      return action ? replayReducer(s, action, nav) : s;
    }
    case 'next':
    case 'tick': {
      if (!s.ref) return s;
      const r = nav.step(s.ref, 1, s.filter);
      if (!r) return { ...s, playing: false, message: info('the end of the story') };
      return { ...s, ref: r, message: a.type === 'tick' ? s.message : null };
    }
    case 'prev':
      return s.ref ? moveTo(s, nav.step(s.ref, -1, s.filter), 'the beginning of the story') : s;
    case 'nextScene':
      return s.ref ? moveTo(s, nav.sceneStart(s.ref, 1, s.filter), 'no later scene') : s;
    case 'prevScene':
      return s.ref ? moveTo(s, nav.sceneStart(s.ref, -1, s.filter), 'no earlier scene') : s;
    case 'first':
      return moveTo(s, nav.edge('first', s.filter), 'nothing to show');
    case 'last':
      return moveTo(s, nav.edge('last', s.filter), 'nothing to show');
    case 'togglePlay':
      if (!s.ref) return s;
      if (!s.playing && !nav.step(s.ref, 1, s.filter))
        return { ...s, message: info('the end of the story: press g to start again') };
      return { ...s, playing: !s.playing, message: null };
    case 'faster':
      return {
        ...s,
        speed: Math.min(SPEEDS.length - 1, s.speed + 1),
        message: info(`speed ${speedText(Math.min(SPEEDS.length - 1, s.speed + 1))}`),
      };
    case 'slower':
      return { ...s, speed: Math.max(0, s.speed - 1), message: info(`speed ${speedText(Math.max(0, s.speed - 1))}`) };
    case 'nextAgent':
      return cycleAgent(s, nav, 1);
    case 'prevAgent':
      return cycleAgent(s, nav, -1);
    case 'setAgent':
      return setFilter(s, nav, a.agent);
    case 'openSearch':
      return { ...s, overlay: 'search', input: '', playing: false, message: null };
    case 'openJump':
      return { ...s, overlay: 'jump', input: '', playing: false, message: null };
    case 'searchNext':
    case 'searchPrev':
      if (!s.lastSearch) return { ...s, message: warn('no search yet: press / to search') };
      return search(s, nav, s.lastSearch, a.type === 'searchNext' ? 1 : -1);
    case 'typeText':
      return s.overlay === 'search' || s.overlay === 'jump'
        ? { ...s, input: s.input + a.text.replace(/[\r\n\t]/g, ' ') }
        : s;
    case 'backspace':
      return { ...s, input: [...s.input].slice(0, -1).join('') };
    case 'closeOverlay':
      return { ...s, overlay: 'none', input: '' };
    case 'submit': {
      const text = s.input;
      const closed = { ...s, overlay: 'none' as Overlay, input: '' };
      if (s.overlay === 'search') return search(closed, nav, text, 1);
      if (s.overlay === 'jump') {
        const id = text.trim();
        if (!id) return closed;
        const hit = nav.find(id);
        if (!hit) return { ...closed, message: warn(`no entry "${id}" (or the prefix is ambiguous)`) };
        if (!nav.matches(hit, closed.filter))
          return {
            ...closed,
            filter: NO_FILTER,
            ref: hit,
            message: info(`jumped to ${nav.beat(hit).entry_id}; the agent filter was cleared to show it`),
          };
        return { ...closed, ref: hit, message: info(`jumped to ${nav.beat(hit).entry_id}`) };
      }
      return closed;
    }
    case 'cancelTextIndex':
      return s.building ? { ...s, building: { ...s.building, cancelling: true } } : s;
    case 'textIndexProgress':
      return s.building ? { ...s, building: { ...s.building, done: a.done, total: a.total } } : s;
    case 'textIndexBuilt': {
      if (!s.building) return s;
      const { query, dir } = s.building;
      return search({ ...s, building: null, needsTextIndex: false }, nav, query, dir);
    }
    case 'textIndexStopped':
      if (!s.building) return s;
      return {
        ...s,
        building: null,
        lastSearch: s.building.query,
        message: warn(
          a.error ?? 'search cancelled: the full-text index was not built (nothing was written); / searches again',
        ),
      };
    case 'toggleHelp':
      return { ...s, overlay: s.overlay === 'help' ? 'none' : 'help', playing: false };
    case 'quit':
      return { ...s, playing: false, done: 'quit' };
    case 'cancel':
      return { ...s, playing: false, done: 'cancel' };
  }
}

/** What a key does in the current state (null: nothing). */
export function replayKeyAction(s: ReplayState, k: KeyPress): ReplayAction | null {
  if (k.name === 'ctrl-c') return { type: 'cancel' };
  // While the full-text index is built for a search: Esc stops the build, q quits (stopping it too).
  if (s.building) {
    if (k.name === 'escape') return { type: 'cancelTextIndex' };
    if (k.input === 'q') return { type: 'quit' };
    return null;
  }
  if (s.overlay === 'search' || s.overlay === 'jump') {
    if (k.name === 'enter') return { type: 'submit' };
    if (k.name === 'escape') return { type: 'closeOverlay' };
    if (k.name === 'backspace') return { type: 'backspace' };
    if (k.name === 'space') return { type: 'typeText', text: ' ' };
    if (k.name === null && k.input) return { type: 'typeText', text: k.input };
    return null;
  }
  if (s.overlay === 'help') {
    if (k.name === 'escape' || k.input === '?') return { type: 'toggleHelp' };
    if (k.input === 'q') return { type: 'quit' };
    return null;
  }
  for (const b of REPLAY_KEYS) if (bound(b.keys, k)) return { type: b.action } as ReplayAction;
  return null;
}

/** Everything the screen shows, derived from the state (the component only draws it). */
export interface ReplayFrame {
  session: SessionInfo | null;
  sessions: number;
  beat: Beat | null;
  scene: SceneWindow | null;
  position: number;
  total: number;
  affinity: AffinityTotals;
}

export function replayFrame(nav: StoryNav, s: ReplayState, sceneRows: number): ReplayFrame {
  const total = nav.count(s.filter);
  if (!s.ref)
    return { session: null, sessions: nav.sessions.length, beat: null, scene: null, position: 0, total, affinity: {} };
  return {
    session: nav.sessions[s.ref.session] ?? null,
    sessions: nav.sessions.length,
    beat: nav.beat(s.ref),
    scene: nav.scene(s.ref, s.filter, Math.max(1, sceneRows)),
    position: nav.position(s.ref, s.filter),
    total,
    affinity: nav.affinityAt(s.ref),
  };
}
