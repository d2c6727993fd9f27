import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gatingPolicy } from '../../src/feedback/config.js';
import { removeDir, tempDir } from '../helpers/ctx.js';

let home: string;
beforeEach(() => {
  home = tempDir('kourai-fbconfig-');
});
afterEach(() => removeDir(home));

const config = (doc: unknown): void => writeFileSync(join(home, 'config.json'), JSON.stringify(doc));

describe('feedback gate settings: defaults < config.json < environment < flags', () => {
  it('defaults', () => {
    expect(gatingPolicy(home, {}, {})).toEqual({ minTier: 'familiar', cooldown: 5, maxCooldown: 80 });
  });

  it('the config file, then the environment, then flags', () => {
    config({ privacy: { delta: 1e-6 }, feedback: { min_tier: 'trusted', cooldown: 3 } });
    expect(gatingPolicy(home, {}, {})).toMatchObject({ minTier: 'trusted', cooldown: 3 });
    const env = { KOURAI_FEEDBACK_MIN_TIER: 'bonded', KOURAI_FEEDBACK_COOLDOWN: '7' };
    expect(gatingPolicy(home, env, {})).toMatchObject({ minTier: 'bonded', cooldown: 7 });
    expect(gatingPolicy(home, env, { minTier: 'stranger', cooldown: 0 })).toMatchObject({
      minTier: 'stranger',
      cooldown: 0,
    });
    // A cooldown above the cap raises the cap with it.
    expect(gatingPolicy(home, {}, { cooldown: 200 })).toMatchObject({ cooldown: 200, maxCooldown: 200 });
  });

  it.each([
    [
      { feedback: { min_tier: 'bestie' } },
      /feedback\.min_tier = "bestie": not a tier; expected one of: stranger, familiar, trusted, bonded/,
    ],
    [{ feedback: { cooldown: -1 } }, /feedback\.cooldown = -1: must be a whole number/],
    [{ feedback: { cooldown: 2.5 } }, /feedback\.cooldown = 2\.5: must be a whole number/],
    [{ feedback: { nag: true } }, /unknown key feedback\.nag/],
    [{ feedback: [] }, /"feedback" must be an object/],
  ])('a bad config file value is exit 3, naming the key: %j', (doc, message) => {
    config(doc);
    expect(() => gatingPolicy(home, {}, {})).toThrow(
      expect.objectContaining({ exitCode: 3, message: expect.stringMatching(message) }),
    );
  });

  it('bad environment values are exit 3, naming the variable', () => {
    expect(() => gatingPolicy(home, { KOURAI_FEEDBACK_COOLDOWN: 'soon' }, {})).toThrow(
      expect.objectContaining({
        exitCode: 3,
        message: expect.stringContaining('KOURAI_FEEDBACK_COOLDOWN=soon: must be a whole number of entries'),
      }),
    );
    expect(() => gatingPolicy(home, { KOURAI_FEEDBACK_MIN_TIER: 'x' }, {})).toThrow(
      expect.objectContaining({ exitCode: 3 }),
    );
  });

  it('a config file that is not JSON is exit 3', () => {
    writeFileSync(join(home, 'config.json'), '{ nope');
    expect(() => gatingPolicy(home, {}, {})).toThrow(
      expect.objectContaining({ exitCode: 3, message: expect.stringContaining('is not valid JSON') }),
    );
  });
});
