import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain .mjs script module without types
import { selectMutants } from '../../scripts/mutant-select.mjs';

const ids = ['scan-escape', 'scan-number', 'verify-offset', 'split-bond-only-agent'];
const pick = (only: string): { chosen: string[]; unmatched: string[] } => selectMutants(only, ids);

describe('npm run mutants -- --only', () => {
  it('takes exact ids', () => {
    expect(pick('scan-number,verify-offset')).toEqual({ chosen: ['scan-number', 'verify-offset'], unmatched: [] });
  });

  it('takes globs: * for any run of characters', () => {
    expect(pick('scan-*')).toEqual({ chosen: ['scan-escape', 'scan-number'], unmatched: [] });
    expect(pick('*-only-*,verify-*')).toEqual({ chosen: ['verify-offset', 'split-bond-only-agent'], unmatched: [] });
  });

  it('keeps the list order and names each mutant once', () => {
    expect(pick('verify-*,scan-*,scan-escape').chosen).toEqual(['scan-escape', 'scan-number', 'verify-offset']);
  });

  it('names every pattern that matches nothing', () => {
    expect(pick('scan-*,nope-*,scan')).toEqual({
      chosen: ['scan-escape', 'scan-number'],
      unmatched: ['nope-*', 'scan'],
    });
  });

  it('treats other characters literally (a dot is not "any character")', () => {
    expect(pick('scan.escape').unmatched).toEqual(['scan.escape']);
  });
});
