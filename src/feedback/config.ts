import { TIER_NAMES, type TierName } from '../affinity/affinity.js';
import { DEFAULT_POLICY, type GatingPolicy } from '../affinity/gating.js';
import { resolveLayered, type Setting } from '../config.js';

/**
 * The feedback gate's settings, with the house precedence: defaults < `$KOURAI_HOME/config.json`
 * (`{"feedback": {"min_tier": "familiar", "cooldown": 5}}`) < KOURAI_FEEDBACK_MIN_TIER /
 * KOURAI_FEEDBACK_COOLDOWN < `--min-tier` / `--cooldown`. A bad file value or variable is an
 * environment error (exit 3) naming it; flags are checked by the command's schema (exit 2). The
 * precedence itself is `resolveLayered` (src/config.ts), shared with the privacy settings.
 */
const isTier = (s: unknown): s is TierName => typeof s === 'string' && (TIER_NAMES as readonly string[]).includes(s);

const SETTINGS = {
  minTier: {
    file: 'min_tier',
    env: 'KOURAI_FEEDBACK_MIN_TIER',
    flag: '--min-tier',
    parse: (raw: unknown): TierName | { invalid: string } =>
      isTier(raw) ? raw : { invalid: `not a tier; expected one of: ${TIER_NAMES.join(', ')}` },
  },
  cooldown: {
    file: 'cooldown',
    env: 'KOURAI_FEEDBACK_COOLDOWN',
    flag: '--cooldown',
    parse: (raw: unknown, from: 'file' | 'env' | 'flag'): number | { invalid: string } => {
      const n = from === 'env' ? Number(raw) : raw;
      return typeof n === 'number' && Number.isInteger(n) && n >= 0 && n <= 10_000
        ? n
        : { invalid: 'must be a whole number of entries (0–10000)' };
    },
  },
} satisfies Record<string, Setting<unknown>>;

export function gatingPolicy(
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  flags: { minTier?: TierName | undefined; cooldown?: number | undefined },
): GatingPolicy {
  const { values } = resolveLayered({
    home,
    env,
    section: 'feedback',
    settings: SETTINGS,
    defaults: { minTier: DEFAULT_POLICY.minTier, cooldown: DEFAULT_POLICY.cooldown },
    flags: {
      ...(flags.minTier ? { minTier: flags.minTier } : {}),
      ...(flags.cooldown !== undefined ? { cooldown: flags.cooldown } : {}),
    },
  });
  const policy: GatingPolicy = { ...DEFAULT_POLICY, ...values };
  policy.maxCooldown = Math.max(policy.maxCooldown, policy.cooldown);
  return policy;
}
