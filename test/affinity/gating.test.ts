import { describe, expect, it } from 'vitest';
import { decideGate, DEFAULT_POLICY, requiredCooldown, type FeedbackHistory } from '../../src/affinity/gating.js';

const h = (o: Partial<FeedbackHistory>): FeedbackHistory => ({
  affinity: 0.2,
  entriesSince: null,
  since: null,
  skips: 0,
  ...o,
});

describe('the feedback gate', () => {
  it('defaults: familiar tier, a cooldown of 5 entries, doubled per skip up to 80', () => {
    expect(DEFAULT_POLICY).toEqual({ minTier: 'familiar', cooldown: 5, maxCooldown: 80 });
    expect([0, 1, 2, 3, 4, 5, 9].map((s) => requiredCooldown(DEFAULT_POLICY, s))).toEqual([5, 10, 20, 40, 80, 80, 80]);
  });

  it.each([
    ['below the tier', h({ affinity: 0.1 }), false, 'affinity_below_tier'],
    ['exactly at the tier', h({ affinity: 0.15 }), true, 'ready'],
    ['negative affinity', h({ affinity: -0.3 }), false, 'affinity_below_tier'],
    ['never rated, never skipped', h({}), true, 'ready'],
    ['rated 2 entries ago', h({ entriesSince: 2, since: 'feedback' }), false, 'cooldown'],
    ['rated 5 entries ago', h({ entriesSince: 5, since: 'feedback' }), true, 'ready'],
    ['skipped once, 6 entries ago', h({ entriesSince: 6, since: 'skip', skips: 1 }), false, 'cooldown'],
    ['skipped once, 10 entries ago', h({ entriesSince: 10, since: 'skip', skips: 1 }), true, 'ready'],
    ['skipped 3 times, 39 entries ago', h({ entriesSince: 39, since: 'skip', skips: 3 }), false, 'cooldown'],
  ])('%s', (_name, history, ask, reason) => {
    const d = decideGate('techne', DEFAULT_POLICY, history);
    expect(d.ask).toBe(ask);
    expect(d.reason).toBe(reason);
    expect(d.message.startsWith(ask ? 'asking' : 'not asking')).toBe(true);
  });

  it('checks affinity before the cooldown and says why in one line', () => {
    const d = decideGate('techne', DEFAULT_POLICY, h({ affinity: 0.05, entriesSince: 0, since: 'feedback' }));
    expect(d.reason).toBe('affinity_below_tier');
    expect(d.message).toBe('not asking: affinity with techne is 0.05 (stranger); feedback opens at familiar (0.15)');
    const c = decideGate('techne', DEFAULT_POLICY, h({ entriesSince: 3, since: 'skip', skips: 1 }));
    expect(c.message).toBe(
      'not asking: 3 techne entries since the player skipped a prompt for it; the cooldown is 10 (backed off after 1 skip)',
    );
    expect(c).toMatchObject({
      cooldown: 10,
      entries_since: 3,
      skips: 1,
      tier: 'familiar',
      min_tier: 'familiar',
      min_affinity: 0.15,
    });
  });

  it('a configured tier moves the bar; stranger disables the affinity check', () => {
    expect(decideGate('metis', { ...DEFAULT_POLICY, minTier: 'trusted' }, h({ affinity: 0.3 })).ask).toBe(false);
    expect(decideGate('metis', { ...DEFAULT_POLICY, minTier: 'stranger' }, h({ affinity: -1 })).ask).toBe(true);
  });

  it('--force asks whatever the history', () => {
    const d = decideGate(
      'metis',
      DEFAULT_POLICY,
      h({ affinity: -1, entriesSince: 0, since: 'feedback', skips: 4 }),
      true,
    );
    expect(d).toMatchObject({ ask: true, reason: 'forced' });
  });
});
