import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { AGENTS } from '../../src/memoir/format/agents.js';
import { allowAndDeny, applyFlags, noConsent, parseAgentList, STANCES } from '../../src/privacy/consent.js';

describe('the Sovereignty Moment (domain)', () => {
  it('has one stance per agent in the scene order: Hephaestus opens, Aidos advocates, Cupid withdraws, ...', () => {
    expect(STANCES.map((s) => s.agent)).toEqual([
      'hephaestus',
      'aidos',
      'cupid',
      'metis',
      'kallos',
      'aletheia',
      'mneme',
      'dokimasia',
      'techne',
      'puck',
    ]);
    expect(new Set(STANCES.map((s) => s.agent))).toEqual(new Set(AGENTS));
    expect(STANCES.filter((s) => s.locked).map((s) => s.agent)).toEqual(['cupid', 'puck']);
    expect(STANCES.find((s) => s.agent === 'metis')?.line).toMatch(/patterns, never specifications/);
  });

  it('parses comma and space separated lists, with "all"', () => {
    expect(parseAgentList(['aidos,metis', 'kallos'], '--allow')).toEqual(['aidos', 'metis', 'kallos']);
    expect(parseAgentList('all', '--allow')).toHaveLength(8);
    expect(parseAgentList(undefined, '--allow')).toEqual([]);
  });

  it('agent names are lower case, as in the memoir and for --agent: "Techne" is refused with the name to use', () => {
    expect(() => parseAgentList(['Techne'], '--allow')).toThrow(
      /--allow: unknown agent "Techne" \(did you mean "techne"\?\)/,
    );
    expect(() => parseAgentList(['ALL'], '--allow')).toThrow(/did you mean "all"/);
  });

  it('names an unknown agent', () => {
    expect(() => parseAgentList(['aidos,hermes'], '--allow')).toThrow(/--allow: unknown agent "hermes"/);
    expect(() => parseAgentList(['hermes'], '--deny')).toThrow(UsageError);
  });

  it('refuses Cupid or Puck in --allow, accepts them in --deny, refuses an agent in both', () => {
    expect(() => applyFlags(noConsent(), ['cupid'], [])).toThrow(/cupid is bond-only/);
    expect(() => applyFlags(noConsent(), ['aidos', 'puck', 'cupid'], [])).toThrow(/puck and cupid are bond-only/);
    expect(applyFlags(noConsent(), [], ['cupid']).aidos).toBe(false);
    expect(() => applyFlags(noConsent(), ['aidos'], ['aidos'])).toThrow(/both name aidos/);
  });

  it('--allow all --deny techne: every federating agent except Techne; one agent named in both is still refused', () => {
    const { allow, deny } = allowAndDeny(['all'], ['techne']);
    expect(allow).not.toContain('techne');
    expect(applyFlags(noConsent(), allow, deny)).toEqual({
      ...Object.fromEntries(Object.keys(noConsent()).map((a) => [a, true])),
      techne: false,
    });
    expect(() => {
      const r = allowAndDeny(['all,techne'], ['techne']);
      applyFlags(noConsent(), r.allow, r.deny);
    }).toThrow(/both name techne/);
    expect(() => {
      const r = allowAndDeny(['aidos'], ['aidos']);
      applyFlags(noConsent(), r.allow, r.deny);
    }).toThrow(/both name aidos/);
  });

  it('changes only the agents named', () => {
    const start = { ...noConsent(), techne: true, metis: true };
    const next = applyFlags(start, ['aidos'], ['metis']);
    expect(next).toMatchObject({ aidos: true, metis: false, techne: true, kallos: false });
  });
});
