import type { CouncilConfig } from '../../src/council/config.js';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import { DEFAULT_SETTINGS } from '../../src/train/trainer.js';
import { startTestCouncil, type TestCouncil } from '../council/helpers.js';

/**
 * A real council on 127.0.0.1 for forges built from the sample generator: it accepts the built-in
 * base model and derives each agent's adapter layout from it with the trainer's own adapterLayout
 * (the council refuses agents it has no layout for). Its privacy policy is the test helper's
 * (S ≤ 1, σ ∈ [0, 10], so it publishes S = 1, σ = 10) unless `over` says otherwise.
 */
export function startForgeCouncil(over: Partial<CouncilConfig> = {}, dir?: string): Promise<TestCouncil> {
  return startTestCouncil(
    {
      base_fingerprints: [BUILTIN_FINGERPRINT],
      layouts: { derive: { base: 'builtin', rank: DEFAULT_SETTINGS.rank } },
      min_forges: 2,
      strategy: 'fedavg',
      ...over,
    },
    dir,
  );
}
