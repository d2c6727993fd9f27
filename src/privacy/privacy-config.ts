/**
 * Privacy settings: the budgets (whisper capacity) and the mechanism (σ, S), resolved in one
 * place with the house precedence: defaults < config file < KOURAI_PRIVACY_* environment < flags.
 */
import { configFilePath, resolveLayered, type Setting } from '../config.js';
import { kouraiHome, type Ctx } from '../context.js';

export interface PrivacyConfig {
  /** ε the forge may spend over its lifetime, all agents' releases composed. */
  forgeEpsilon: number;
  /** ε each agent may spend over the forge's lifetime. */
  agentEpsilon: number;
  /** δ at which every ε here is stated. */
  delta: number;
  /** σ: the noise standard deviation as a multiple of the clip norm. */
  noiseMultiplier: number;
  /** S: the L2 norm every released delta is clipped to. */
  clipNorm: number;
}

export type PrivacyKey = keyof PrivacyConfig;
export type ConfigOrigin = 'default' | 'file' | 'env' | 'flag';

/**
 * ε = 8 at δ = 1e-5 for the forge and for each agent, over the forge's lifetime. σ = 8 lets
 * the whole council (eight agents) speak in 19 rounds before the forge's capacity runs out;
 * one agent alone could speak 157 times.
 */
export const DEFAULT_PRIVACY_CONFIG: Readonly<PrivacyConfig> = Object.freeze({
  forgeEpsilon: 8,
  agentEpsilon: 8,
  delta: 1e-5,
  noiseMultiplier: 8,
  clipNorm: 1,
});

export const PRIVACY_KEYS: readonly PrivacyKey[] = [
  'forgeEpsilon',
  'agentEpsilon',
  'delta',
  'noiseMultiplier',
  'clipNorm',
];

export const PRIVACY_ENV: Readonly<Record<PrivacyKey, string>> = {
  forgeEpsilon: 'KOURAI_PRIVACY_FORGE_EPSILON',
  agentEpsilon: 'KOURAI_PRIVACY_AGENT_EPSILON',
  delta: 'KOURAI_PRIVACY_DELTA',
  noiseMultiplier: 'KOURAI_PRIVACY_NOISE_MULTIPLIER',
  clipNorm: 'KOURAI_PRIVACY_CLIP_NORM',
};

export const PRIVACY_FILE_KEYS: Readonly<Record<PrivacyKey, string>> = {
  forgeEpsilon: 'forge_epsilon',
  agentEpsilon: 'agent_epsilon',
  delta: 'delta',
  noiseMultiplier: 'noise_multiplier',
  clipNorm: 'clip_norm',
};

export const PRIVACY_FLAGS: Readonly<Record<PrivacyKey, string>> = {
  forgeEpsilon: '--forge-epsilon',
  agentEpsilon: '--agent-epsilon',
  delta: '--delta',
  noiseMultiplier: '--noise-multiplier',
  clipNorm: '--clip-norm',
};

/** Why a value is unacceptable, or undefined. */
export function invalidReason(key: PrivacyKey, v: number): string | undefined {
  if (!Number.isFinite(v)) return 'must be a finite number';
  if (key === 'delta') return v > 0 && v < 1 ? undefined : 'δ must be strictly between 0 and 1';
  if (key === 'noiseMultiplier') return v > 0 ? undefined : 'σ must be greater than 0';
  if (key === 'clipNorm') return v > 0 ? undefined : 'the clip norm S must be greater than 0';
  return v > 0 ? undefined : 'ε must be greater than 0';
}

export { configFilePath };

export interface ResolvedPrivacyConfig {
  config: PrivacyConfig;
  origin: Record<PrivacyKey, ConfigOrigin>;
  /** The config file read, or null when there is none. */
  file: string | null;
}

/** Each setting: its names in the file, the environment and on the command line, and its check. */
const SETTINGS = Object.fromEntries(
  PRIVACY_KEYS.map((k) => [
    k,
    {
      file: PRIVACY_FILE_KEYS[k],
      env: PRIVACY_ENV[k],
      flag: PRIVACY_FLAGS[k],
      parse(raw: unknown, from: 'file' | 'env' | 'flag'): number | { invalid: string } {
        const v = from === 'env' ? Number(raw) : raw;
        if (typeof v !== 'number') return { invalid: 'must be a number' };
        if (Number.isNaN(v)) return { invalid: 'not a number' };
        const why = invalidReason(k, v);
        return why ? { invalid: why } : v;
      },
    } satisfies Setting<number>,
  ]),
) as Record<PrivacyKey, Setting<number>>;

/**
 * Resolves the privacy settings: defaults < `$KOURAI_HOME/config.json` ("privacy" section)
 * < KOURAI_PRIVACY_* environment < flags (`resolveLayered`, src/config.ts). Bad file or
 * environment values are environment errors (exit 3) naming the file key or variable; bad flags
 * are usage errors (exit 2).
 */
export function resolvePrivacyConfig(p: {
  home: string;
  env: Readonly<Record<string, string | undefined>>;
  flags?: Partial<Record<PrivacyKey, number | undefined>>;
}): ResolvedPrivacyConfig {
  const flags = Object.fromEntries(
    Object.entries(p.flags ?? {}).filter(([, v]) => v !== undefined),
  ) as Partial<PrivacyConfig>;
  const r = resolveLayered({
    home: p.home,
    env: p.env,
    section: 'privacy',
    settings: SETTINGS,
    defaults: { ...DEFAULT_PRIVACY_CONFIG },
    flags,
  });
  return { config: r.values, origin: r.origin, file: r.file };
}

/** The settings as a command sees them: its home and environment, and the flags it was given. */
export function privacyConfigFor(
  ctx: Pick<Ctx, 'env' | 'cwd'>,
  flags: Partial<Record<PrivacyKey, number | undefined>>,
): ResolvedPrivacyConfig {
  return resolvePrivacyConfig({ home: kouraiHome(ctx), env: ctx.env, flags });
}
