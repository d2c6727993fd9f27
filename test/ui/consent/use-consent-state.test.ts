import { describe, expect, it } from 'vitest';
import { STANCES } from '../../../src/privacy/consent.js';
import {
  consentReducer,
  decisionOf,
  initialConsentState,
  type ConsentAction,
} from '../../../src/ui/consent/use-consent-state.js';

const run = (...actions: ConsentAction[]) =>
  actions.reduce(consentReducer, initialConsentState(STANCES, { metis: true }));

describe('consent reducer', () => {
  it('starts from the current consent with the cursor on Hephaestus', () => {
    const s = run();
    expect(s.rows.find((r) => r.agent === 'metis')?.allowed).toBe(true);
    expect(s.rows[0]?.agent).toBe('hephaestus');
    expect(s.step).toBe('choose');
  });

  it('toggles the agent under the cursor; locked agents stay off with a notice', () => {
    const s = run({ type: 'toggle' }, { type: 'down' }, { type: 'down' }, { type: 'toggle' });
    expect(s.rows[0]?.allowed).toBe(true);
    expect(s.rows[2]).toMatchObject({ agent: 'cupid', allowed: false });
    expect(s.notice).toMatch(/Cupid is bond-only/);
    expect(run({ type: 'up' }).rows[run({ type: 'up' }).cursor]?.agent).toBe('puck'); // wraps
  });

  it('all/none never touch locked agents; decisions list only the eight federating agents', () => {
    const s = run({ type: 'all', allowed: true });
    expect(s.rows.filter((r) => r.locked).every((r) => !r.allowed)).toBe(true);
    expect(decisionOf(s)).toHaveLength(8);
    expect(decisionOf(s).every((d) => d.allowed)).toBe(true);
    expect(decisionOf(run({ type: 'all', allowed: false })).some((d) => d.allowed)).toBe(false);
  });

  it('choose -> confirm -> confirmed; back returns; toggles are ignored on the summary; finished states are final', () => {
    expect(run({ type: 'next' }).step).toBe('confirm');
    expect(run({ type: 'next' }, { type: 'back' }).step).toBe('choose');
    expect(run({ type: 'next' }, { type: 'toggle' }).rows[0]?.allowed).toBe(false);
    expect(run({ type: 'confirm' }).step).toBe('choose'); // confirm only from the summary
    const done = run({ type: 'next' }, { type: 'confirm' });
    expect(done.step).toBe('confirmed');
    expect(consentReducer(done, { type: 'cancel' }).step).toBe('confirmed');
    expect(run({ type: 'cancel' }).step).toBe('cancelled');
    expect(run({ type: 'enter' }).step).toBe('confirm');
    expect(run({ type: 'enter' }, { type: 'enter' }).step).toBe('confirmed');
    expect(run({ type: 'enter' }, { type: 'escape' }).step).toBe('choose');
    expect(run({ type: 'escape' }).step).toBe('left');
    expect(run({ type: 'key', press: { input: 'q', name: null } }).step).toBe('left');
    expect(run({ type: 'key', press: { input: '', name: 'ctrl-c' } }).step).toBe('cancelled');
    expect(
      run({ type: 'enter' }, { type: 'all', allowed: true }).rows.some((r) => r.allowed && r.agent !== 'metis'),
    ).toBe(false);
  });
});
