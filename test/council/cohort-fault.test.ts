import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaults, type CouncilConfig } from '../../src/council/config.js';
import { cohortShortfall, roundFault, roundSettingsOf } from '../../src/council/round-settings.js';
import { SqliteCouncilStorage } from '../../src/council/sqlite-storage.js';
import { UsageError } from '../../src/errors.js';
import { tempDir } from '../helpers/ctx.js';
import { startTestCouncil } from './helpers.js';

const config = (over: Partial<CouncilConfig>): CouncilConfig => ({ ...defaults('/nowhere'), ...over });

describe("a cohort's f: the council's bound is the simulation's", () => {
  it('without a cohort f is the configured count; with one, the hypergeometric bound over the eligible forges', () => {
    expect(roundFault(config({ byzantine: 200 }), 1000)).toBe(200);
    // scipy.stats.hypergeom(1000, 200, 100): sf(31) > 1e-3 ≥ sf(32).
    expect(roundFault(config({ byzantine: 200, cohort: 100 }), 1000)).toBe(32);
    expect(roundSettingsOf(config({ byzantine: 200, cohort: 100, strategy: 'multikrum' }), 1000).f).toBe(32);
    // Every eligible forge in the cohort: f is the Byzantine count (at most all of them).
    expect(roundFault(config({ byzantine: 4, cohort: 100 }), 30)).toBe(4);
    expect(roundFault(config({ byzantine: 40, cohort: 100 }), 30)).toBe(30);
  });

  it('names a cohort too small for the rule, with f and the smallest cohort that holds it', () => {
    const krum = config({ byzantine: 200, cohort: 100, strategy: 'multikrum' });
    expect(cohortShortfall(krum, 1000)).toBeNull();
    expect(
      cohortShortfall(config({ byzantine: 200, cohort: 100, strategy: 'lora-fair', selection: 'bulyan' }), 1000),
    ).toBe(
      'cohort 100 is too small: lora-fair after bulyan selection with f=32 needs n ≥ 4f+3 (at least 131 updates), ' +
        'and f = 32 is the most of the 200 Byzantine forges among 1000 one cohort of 100 holds except with probability 0.001 per round; ' +
        'the smallest cohort that holds it is 391',
    );
    // No sampling (the cohort holds every forge): min_forges is what is checked, not this.
    expect(cohortShortfall(krum, 80)).toBeNull();
  });

  it('a council whose cohort cannot hold f among the forges registered refuses to start (usage error)', async () => {
    const dir = tempDir('kourai-council-fault-');
    const storage = new SqliteCouncilStorage(join(dir, 'council'));
    for (let i = 0; i < 10; i++) await storage.addForge(`forge-${i}`, new Date().toISOString(), () => randomBytes(32));
    await storage.close();
    const start = startTestCouncil({ database: null, strategy: 'multikrum', byzantine: 4, cohort: 5 }, dir);
    await expect(start).rejects.toThrow(UsageError);
    await expect(
      startTestCouncil({ database: null, strategy: 'multikrum', byzantine: 4, cohort: 5 }, dir),
    ).rejects.toThrow(/^cohort 5 is too small: multikrum with f=4 needs n > 2f\+2 .* no cohort of 10 forges holds it$/);
  });

  it('each round opens with the f of its cohort and publishes it', async () => {
    const dir = tempDir('kourai-council-fault-');
    const storage = new SqliteCouncilStorage(join(dir, 'council'));
    for (let i = 0; i < 40; i++) await storage.addForge(`forge-${i}`, new Date().toISOString(), () => randomBytes(32));
    await storage.close();
    const c = await startTestCouncil(
      { database: null, strategy: 'multikrum', byzantine: 4, cohort: 20, min_forges: 20 },
      dir,
    );
    try {
      const r = await c.server.storage.latestRound();
      // scipy.stats.hypergeom(40, 4, 20): sf(3) > 1e-3 ≥ sf(4) → 4; the mean share would say 2.
      expect(JSON.parse(r!.strategyJson)).toMatchObject({ strategy: 'multikrum', f: roundFault(c.config, 40) });
      expect(roundFault(c.config, 40)).toBe(4);
    } finally {
      await c.close();
    }
  });
});
