import { describe, expect, it } from 'vitest';
import verify from '../../../src/commands/memoir/verify.js';
import { testCtx } from '../../helpers/ctx.js';

/** verify's summary line: plurals follow the counts ("1 entry", not "1 entries"). */
describe('memoir verify text', () => {
  const render = (r: Record<string, unknown>): string =>
    verify.render!(
      { ok: true, problems: [], entries: 0, memoirs: 1, warnings: 0, errors: 0, ...r } as never,
      testCtx({ colorLevel: 0 }),
    );

  it('one of each is singular, more are plural', () => {
    expect(render({ entries: 1, memoirs: 1, warnings: 1 })).toBe('ok: 1 entry in 1 memoir, 1 warning');
    expect(render({ entries: 2, memoirs: 3, warnings: 2 })).toBe('ok: 2 entries in 3 memoirs, 2 warnings');
    expect(render({ ok: false, errors: 1, entries: 1, memoirs: 1 })).toBe('1 problem in 1 memoir (1 valid entry)');
  });
});
