import { TIER_NAMES, type TierName } from '../affinity/affinity.js';
import { DEFAULT_POLICY, type GatingPolicy } from '../affinity/gating.js';
import { EnvironmentError } from '../errors.js';
import { readConfigSection } from '../config.js';

/**
 * The feedback gate's settings, with the house precedence: defaults < `$KOURAI_HOME/config.json`
 * (`{"feedback": {"min_tier": "familiar", "cooldown": 5}}`) < KOURAI_FEEDBACK_MIN_TIER /
 * KOURAI_FEEDBACK_COOLDOWN < `--min-tier` / `--cooldown`. A bad file value or variable is an
 * environment error (exit 3) naming it; flags are checked by the command's schema (exit 2).
 */
const isTier = (s: string): s is TierName => (TIER_NAMES as readonly string[]).includes(s);

function checkCooldown(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 10_000 ? v : undefined;
}

function fromFile(home: string): Partial<Pick<GatingPolicy, 'minTier' | 'cooldown'>> {
  const { path, section } = readConfigSection(home, 'feedback');
  if (section === null) return {};
  const out: Partial<Pick<GatingPolicy, 'minTier' | 'cooldown'>> = {};
  for (const [key, value] of Object.entries(section)) {
    if (key === 'min_tier') {
      if (typeof value !== 'string' || !isTier(value)) throw new EnvironmentError(`config file ${path}: feedback.min_tier must be one of: ${TIER_NAMES.join(', ')}`);
      out.minTier = value;
    } else if (key === 'cooldown') {
      const n = checkCooldown(value);
      if (n === undefined) throw new EnvironmentError(`config file ${path}: feedback.cooldown must be a whole number of entries (0–10000)`);
      out.cooldown = n;
    } else {
      throw new EnvironmentError(`config file ${path}: unknown key feedback.${key} (known: min_tier, cooldown)`);
    }
  }
  return out;
}

export function gatingPolicy(home: string, env: Readonly<Record<string, string | undefined>>, flags: { minTier?: TierName | undefined; cooldown?: number | undefined }): GatingPolicy {
  const policy: GatingPolicy = { ...DEFAULT_POLICY, ...fromFile(home) };
  const envTier = env.KOURAI_FEEDBACK_MIN_TIER?.trim();
  if (envTier) {
    if (!isTier(envTier)) throw new EnvironmentError(`KOURAI_FEEDBACK_MIN_TIER="${envTier}" is not a tier; expected one of: ${TIER_NAMES.join(', ')}`);
    policy.minTier = envTier;
  }
  const envCooldown = env.KOURAI_FEEDBACK_COOLDOWN?.trim();
  if (envCooldown) {
    const n = checkCooldown(Number(envCooldown));
    if (n === undefined) throw new EnvironmentError(`KOURAI_FEEDBACK_COOLDOWN="${envCooldown}" is not a whole number of entries (0–10000)`);
    policy.cooldown = n;
  }
  if (flags.minTier) policy.minTier = flags.minTier;
  if (flags.cooldown !== undefined) policy.cooldown = flags.cooldown;
  policy.maxCooldown = Math.max(policy.maxCooldown, policy.cooldown);
  return policy;
}
