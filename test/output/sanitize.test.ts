import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { colors } from '../../src/output/color.js';
import { terminalSafe, visibleControls } from '../../src/output/sanitize.js';

const ATTACK = '\u001b[2J\u001b]0;PWNED\u0007';
/** Anything a terminal would act on: ESC, BEL, CR, backspace, C1 (CSI 0x9b, OSC 0x9d), DEL. */
const ACTIVE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

describe('terminalSafe', () => {
  it('shows a clear-screen and set-title sequence instead of sending it', () => {
    const out = terminalSafe(`said: ${ATTACK}`, false);
    expect(out).toBe('said: ␛[2J␛]0;PWNED␇');
    expect(out).not.toMatch(ACTIVE);
  });

  it('keeps our colours when colour is on, and only those', () => {
    const c = colors(1);
    const text = `${c.green('shared')} ${c.bold.red('x')} ${ATTACK}`;
    const out = terminalSafe(text, true);
    expect(out.startsWith(c.green('shared'))).toBe(true);
    expect(out).toContain(c.bold.red('x'));
    expect(out).toContain('␛[2J');
  });

  it('never keeps concealed or blinking text, and no SGR at all without colour', () => {
    expect(terminalSafe('\u001b[8msecret\u001b[0m', true)).toBe('␛[8msecret\u001b[0m');
    expect(terminalSafe('\u001b[31mred\u001b[0m', false)).toBe('␛[31mred␛[0m');
  });

  it('keeps newlines and tabs, shows carriage returns, C1 controls and bidi overrides', () => {
    expect(terminalSafe('a\n\tb\rc', false)).toBe('a\n\tb␍c');
    expect(terminalSafe('x\u009b2Jy', false)).toBe('x<U+009B>2Jy');
    expect(visibleControls('abc\u202edef')).toBe('abc<U+202E>def');
  });

  it('property: without colour, nothing a terminal acts on survives', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.integer({ min: 0, max: 0x2100 }).map((n) => String.fromCharCode(n)) }), (s) => {
        expect(terminalSafe(s, false)).not.toMatch(ACTIVE);
      }),
    );
  });

  it('property: with colour, only SGR sequences remain as escapes', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom('\u001b', '[', '2', 'J', ';', 'm', '8', '\u0007', 'a', '\u009b') }),
        (s) => {
          const out = terminalSafe(s, true);
          const rest = out.replace(/\u001b\[[0-9;]*m/g, '');
          expect(rest).not.toMatch(ACTIVE);
        },
      ),
    );
  });
});
