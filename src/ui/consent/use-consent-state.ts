/**
 * The Sovereignty Moment's state: a toggle per agent (Cupid and Puck locked), then a summary to
 * confirm. A pure reducer (unit-tested without Ink).
 */
import type { Agent } from '../../memoir/format/agents.js';
import type { Stance } from '../../privacy/consent.js';
import { bound, CONSENT_KEYS, type KeyPress } from '../keys.js';

export interface ConsentRow {
  agent: Agent;
  role: string;
  line: string;
  locked: boolean;
  allowed: boolean;
}

/** `left`: the player left without confirming (q, Esc): nothing changes. `cancelled`: Ctrl-C (exit 130). */
export type ConsentStep = 'choose' | 'confirm' | 'confirmed' | 'left' | 'cancelled';

export interface ConsentState {
  rows: ConsentRow[];
  cursor: number;
  step: ConsentStep;
  /** A one-line message, e.g. why a locked agent cannot be toggled. */
  notice: string | null;
}

export type ConsentAction =
  | { type: 'up' }
  | { type: 'down' }
  | { type: 'toggle' }
  | { type: 'all'; allowed: boolean }
  | { type: 'next' }
  | { type: 'back' }
  | { type: 'confirm' }
  | { type: 'cancel' }
  /** Leave without confirming: nothing changes. */
  | { type: 'leave' }
  /** Enter: on to the summary, or confirm on the summary. */
  | { type: 'enter' }
  /** Escape closes what is open: back from the summary; while choosing, leave. */
  | { type: 'escape' }
  /** A key press, mapped by CONSENT_KEYS against the state at the moment it is applied. */
  | { type: 'key'; press: KeyPress };

export function initialConsentState(
  stances: readonly Stance[],
  current: Readonly<Partial<Record<Agent, boolean>>>,
): ConsentState {
  return {
    rows: stances.map((s) => ({
      agent: s.agent,
      role: s.role,
      line: s.line,
      locked: s.locked,
      allowed: !s.locked && current[s.agent] === true,
    })),
    cursor: 0,
    step: 'choose',
    notice: null,
  };
}

const name = (a: string): string => a.charAt(0).toUpperCase() + a.slice(1);

export function consentReducer(s: ConsentState, a: ConsentAction): ConsentState {
  if (s.step === 'confirmed' || s.step === 'cancelled' || s.step === 'left') return s;
  const n = s.rows.length;
  switch (a.type) {
    case 'key': {
      if (a.press.name === 'escape') return consentReducer(s, { type: 'escape' });
      const b = CONSENT_KEYS.find((x) => bound(x.keys, a.press));
      if (!b) return s;
      const action: ConsentAction =
        b.action === 'allowAll'
          ? { type: 'all', allowed: true }
          : b.action === 'allowNone'
            ? { type: 'all', allowed: false }
            : { type: b.action };
      return consentReducer(s, action);
    }
    case 'up':
      return s.step === 'choose' ? { ...s, cursor: (s.cursor - 1 + n) % n, notice: null } : s;
    case 'down':
      return s.step === 'choose' ? { ...s, cursor: (s.cursor + 1) % n, notice: null } : s;
    case 'toggle': {
      if (s.step !== 'choose') return s;
      const row = s.rows[s.cursor];
      if (!row) return s;
      if (row.locked)
        return { ...s, notice: `${name(row.agent)} is bond-only: locked out of the council, never leaves the forge` };
      return { ...s, rows: s.rows.map((r, i) => (i === s.cursor ? { ...r, allowed: !r.allowed } : r)), notice: null };
    }
    case 'all':
      return s.step === 'choose'
        ? { ...s, rows: s.rows.map((r) => (r.locked ? r : { ...r, allowed: a.allowed })), notice: null }
        : s;
    case 'next':
      return s.step === 'choose' ? { ...s, step: 'confirm', notice: null } : s;
    case 'back':
      return s.step === 'confirm' ? { ...s, step: 'choose' } : s;
    case 'confirm':
      return s.step === 'confirm' ? { ...s, step: 'confirmed' } : s;
    case 'cancel':
      return { ...s, step: 'cancelled' };
    case 'leave':
      return { ...s, step: 'left' };
    case 'enter':
      return consentReducer(s, { type: s.step === 'choose' ? 'next' : 'confirm' });
    case 'escape':
      return consentReducer(s, { type: s.step === 'choose' ? 'leave' : 'back' });
  }
}

/** The decision the scene produced: every federating agent with its toggle. */
export function decisionOf(s: ConsentState): { agent: Agent; allowed: boolean }[] {
  return s.rows.filter((r) => !r.locked).map((r) => ({ agent: r.agent, allowed: r.allowed }));
}
