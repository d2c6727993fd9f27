/**
 * Key bindings of the screens: one table per screen, read by the key mappers, the help overlay
 * and the README (a test checks every binding listed here does what it says).
 * Key names: single characters as typed, or one of the KEY_NAMES below.
 */
export const KEY_NAMES = [
  'left',
  'right',
  'up',
  'down',
  'enter',
  'escape',
  'space',
  'backspace',
  'home',
  'end',
  'pageup',
  'pagedown',
  'tab',
  'ctrl-c',
  'ctrl-d',
] as const;
export type KeyName = (typeof KEY_NAMES)[number];

export interface Binding<A extends string> {
  keys: readonly string[];
  action: A;
  help: string;
}

/** A key event as the mappers see it: the typed text, or a named key. */
export interface KeyPress {
  input: string;
  name: KeyName | null;
}

/** Converts Ink's (input, key) pair into a KeyPress. */
export function keyPress(
  input: string,
  key: {
    leftArrow: boolean;
    rightArrow: boolean;
    upArrow: boolean;
    downArrow: boolean;
    return: boolean;
    escape: boolean;
    backspace: boolean;
    delete: boolean;
    home: boolean;
    end: boolean;
    pageUp: boolean;
    pageDown: boolean;
    tab: boolean;
    ctrl: boolean;
  },
): KeyPress {
  let name: KeyName | null = null;
  if (key.ctrl && input === 'c') name = 'ctrl-c';
  else if (key.ctrl && input === 'd') name = 'ctrl-d';
  else if (key.leftArrow) name = 'left';
  else if (key.rightArrow) name = 'right';
  else if (key.upArrow) name = 'up';
  else if (key.downArrow) name = 'down';
  else if (key.return) name = 'enter';
  else if (key.escape) name = 'escape';
  // Terminals send DEL (0x7f) for the Backspace key; Ink reports it as `delete`.
  else if (key.backspace || key.delete) name = 'backspace';
  else if (key.home) name = 'home';
  else if (key.end) name = 'end';
  else if (key.pageUp) name = 'pageup';
  else if (key.pageDown) name = 'pagedown';
  else if (key.tab) name = 'tab';
  else if (input === ' ') name = 'space';
  return { input: name ? '' : input, name };
}

/** Whether a binding's key list matches a key press. */
export function bound(keys: readonly string[], k: KeyPress): boolean {
  return keys.some((x) => (k.name !== null ? x === k.name : x === k.input));
}

/** Display form of a key for help screens: `→`, `Enter`, `Ctrl-C`. */
export function keyLabel(k: string): string {
  const labels: Record<string, string> = {
    left: '←',
    right: '→',
    up: '↑',
    down: '↓',
    enter: 'Enter',
    escape: 'Esc',
    space: 'Space',
    backspace: 'Backspace',
    home: 'Home',
    end: 'End',
    pageup: 'PgUp',
    pagedown: 'PgDn',
    tab: 'Tab',
    'ctrl-c': 'Ctrl-C',
    'ctrl-d': 'Ctrl-D',
  };
  return labels[k] ?? k;
}

export type ReplayKeyAction =
  | 'next'
  | 'prev'
  | 'nextScene'
  | 'prevScene'
  | 'first'
  | 'last'
  | 'togglePlay'
  | 'faster'
  | 'slower'
  | 'nextAgent'
  | 'prevAgent'
  | 'openSearch'
  | 'searchNext'
  | 'searchPrev'
  | 'openJump'
  | 'toggleHelp'
  | 'quit'
  | 'cancel';

export const REPLAY_KEYS: readonly Binding<ReplayKeyAction>[] = [
  { keys: ['right', 'l', 'enter'], action: 'next', help: 'next beat' },
  { keys: ['left', 'h'], action: 'prev', help: 'previous beat' },
  { keys: ['down', 'j'], action: 'nextScene', help: 'next scene' },
  { keys: ['up', 'k'], action: 'prevScene', help: 'previous scene (or start of this one)' },
  { keys: ['g', 'home'], action: 'first', help: 'first beat' },
  { keys: ['G', 'end'], action: 'last', help: 'last beat' },
  { keys: ['space', 'p'], action: 'togglePlay', help: 'play / pause' },
  { keys: ['+', '='], action: 'faster', help: 'play faster' },
  { keys: ['-', '_'], action: 'slower', help: 'play slower' },
  { keys: ['a', 'tab'], action: 'nextAgent', help: 'filter: next agent (all → each agent → all)' },
  { keys: ['A'], action: 'prevAgent', help: 'filter: previous agent' },
  { keys: ['/'], action: 'openSearch', help: 'search (every word must match)' },
  { keys: ['n'], action: 'searchNext', help: 'next match' },
  { keys: ['N'], action: 'searchPrev', help: 'previous match' },
  { keys: [':', '#'], action: 'openJump', help: 'jump to an entry id (or a unique prefix)' },
  { keys: ['?'], action: 'toggleHelp', help: 'help' },
  { keys: ['q', 'escape'], action: 'quit', help: 'quit (Esc first closes help, search or jump)' },
  { keys: ['ctrl-c'], action: 'cancel', help: 'cancel (exit code 130)' },
];

export type FeedbackKeyAction = 'select' | 'left' | 'right' | 'up' | 'down' | 'confirm' | 'back' | 'skip' | 'cancel';

export const FEEDBACK_KEYS: readonly Binding<FeedbackKeyAction>[] = [
  { keys: ['1', '2', '3', '4', '5'], action: 'select', help: 'choose a rating (1–5) or a response kind (1–4)' },
  { keys: ['left', 'right', 'up', 'down'], action: 'select', help: 'move the choice' },
  { keys: ['enter'], action: 'confirm', help: 'confirm and go on (the comment may be empty)' },
  { keys: ['backspace'], action: 'back', help: 'back to the previous question (on an empty comment)' },
  { keys: ['escape'], action: 'skip', help: 'leave: skip, write nothing (the next prompt waits longer)' },
  { keys: ['ctrl-c', 'ctrl-d'], action: 'cancel', help: 'cancel: write nothing (exit code 130)' },
];

export type WhisperKeyAction = 'up' | 'down' | 'toggleDetails' | 'quit' | 'cancel';

export const WHISPER_KEYS: readonly Binding<WhisperKeyAction>[] = [
  { keys: ['up', 'k'], action: 'up', help: 'previous agent' },
  { keys: ['down', 'j'], action: 'down', help: 'next agent' },
  { keys: ['enter', 'space'], action: 'toggleDetails', help: "open or close the agent's details" },
  { keys: ['q', 'escape'], action: 'quit', help: 'quit (Esc first closes the details)' },
  { keys: ['ctrl-c'], action: 'cancel', help: 'cancel (exit code 130)' },
];

export type ConsentKeyAction =
  'up' | 'down' | 'toggle' | 'allowAll' | 'allowNone' | 'enter' | 'confirm' | 'back' | 'leave' | 'cancel';

export const CONSENT_KEYS: readonly Binding<ConsentKeyAction>[] = [
  { keys: ['up', 'k'], action: 'up', help: 'previous agent' },
  { keys: ['down', 'j'], action: 'down', help: 'next agent' },
  { keys: ['space', 'x'], action: 'toggle', help: 'allow or silence the agent (Cupid and Puck are locked)' },
  { keys: ['a'], action: 'allowAll', help: 'allow every federating agent' },
  { keys: ['n'], action: 'allowNone', help: 'allow nobody' },
  { keys: ['enter'], action: 'enter', help: 'go on to the summary; on the summary, confirm' },
  { keys: ['y'], action: 'confirm', help: 'confirm (on the summary)' },
  { keys: ['b'], action: 'back', help: 'back from the summary' },
  { keys: ['q', 'escape'], action: 'leave', help: 'leave without changing anything (Esc on the summary goes back)' },
  { keys: ['ctrl-c'], action: 'cancel', help: 'cancel: change nothing (exit code 130)' },
];

/** The key table as text lines, for `--help` and the README (the same table the screen uses). */
export function keyHelp(bindings: readonly Binding<string>[]): string[] {
  const rows = bindings.map((b) => [b.keys.map(keyLabel).join(' '), b.help] as const);
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, h]) => `  ${k.padEnd(w)}  ${h}`);
}

const CONTROL: Readonly<Record<string, KeyName>> = {
  '\r': 'enter',
  '\n': 'enter',
  '\t': 'tab',
  '\u007f': 'backspace',
  '\b': 'backspace',
  '\u0003': 'ctrl-c',
  '\u0004': 'ctrl-d',
  '\u001b': 'escape',
};

/**
 * Splits a press whose text holds several keys (a paste, or keys that arrived in one read, as
 * `tmux send-keys` delivers them) into presses: runs of printable text stay together, control
 * characters become named keys. A press with a name, or plain text, is returned as it is.
 */
export function expandPress(k: KeyPress): KeyPress[] {
  if (k.name !== null || k.input.length <= 1) return [k];
  const out: KeyPress[] = [];
  let text = '';
  for (const ch of k.input) {
    const name = CONTROL[ch];
    if (name) {
      if (text) out.push({ input: text, name: null });
      text = '';
      out.push({ input: '', name });
    } else if (ch >= ' ') {
      text += ch;
    }
  }
  if (text) out.push({ input: text, name: null });
  return out;
}

export type CouncilSceneKeyAction = 'next' | 'prev' | 'skip' | 'cancel';

/** The Council of Sisters and the Stoa Falls: step through line by line, or skip. */
export const COUNCIL_SCENE_KEYS: readonly Binding<CouncilSceneKeyAction>[] = [
  {
    keys: ['right', 'l', 'enter', 'space'],
    action: 'next',
    help: 'next line (after the last: the next scene, then done)',
  },
  { keys: ['left', 'h'], action: 'prev', help: 'previous line' },
  { keys: ['s', 'q', 'escape'], action: 'skip', help: 'skip the rest' },
  { keys: ['ctrl-c'], action: 'cancel', help: 'stop (exit code 130)' },
];
