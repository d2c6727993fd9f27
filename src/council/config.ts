import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { z } from 'zod';
import { SELECTIONS, STRATEGIES, requirement } from '../aggregation/strategy.js';
import { kouraiHome, type Ctx } from '../context.js';
import { EnvironmentError, UsageError } from '../errors.js';
import { DEFAULT_PRIVACY_CONFIG } from '../privacy/privacy-config.js';
import { BUILTIN_FINGERPRINT } from '../train/fingerprint.js';
import { configuredLayouts, derivationOf, LayoutsConfigSchema } from './layouts.js';
import { normBound, SERVER_LR_MAX } from './norm-bound.js';
import { privacyPolicyOf, roundSettingsOf } from './round-settings.js';

/**
 * The council's settings, from (lowest to highest precedence) defaults, a JSON config file,
 * KOURAI_COUNCIL_* environment variables, and command-line flags — resolved in one function.
 *
 * Config file: `--config FILE`, else $KOURAI_COUNCIL_CONFIG, else `<KOURAI_HOME>/council/council.json`
 * if it exists. Its keys are the snake_case names below (e.g. `"min_forges": 5`).
 */
/** A closed range of accepted values; an exact value is min = max. */
export const RangeSchema = z
  .object({ min: z.number().min(0), max: z.number() })
  .strict()
  .refine((r) => Number.isFinite(r.min) && Number.isFinite(r.max) && r.min <= r.max, 'must be finite with min ≤ max');

export const CouncilConfigSchema = z.object({
  host: z.string().min(1),
  port: z.number().int().min(0).max(65535),
  data_dir: z.string().min(1),
  /** A postgres:// URL: the council's state in PostgreSQL (several processes may share it); null: SQLite in data_dir. */
  database: z
    .string()
    .regex(/^postgres(ql)?:\/\/./i, 'must be a postgres:// URL (or unset for SQLite in data_dir)')
    .nullable(),
  /** Forges sampled per round (null: every forge takes part). */
  cohort: z.number().int().min(1).nullable(),
  /** Seconds a process holds the right to aggregate a closed round without renewing it (another takes over after). */
  aggregation_lease: z.number().min(1),
  strategy: z.enum(STRATEGIES),
  byzantine: z.number().int().min(0),
  trim: z.number().int().min(0).nullable(),
  multikrum_m: z.number().int().min(1).nullable(),
  selection: z.enum(SELECTIONS).nullable(),
  min_forges: z.number().int().min(1),
  /** Seconds a round stays open at most. */
  round_deadline: z.number().positive(),
  /** Largest accepted request body, bytes (one agent's update). */
  payload_limit: z.number().int().min(1024),
  /** Submissions processed at once; more get 503 busy (bounds memory: about this × payload_limit × 3). */
  max_in_flight: z.number().int().min(1),
  base_fingerprints: z.array(z.string().min(1)),
  weights: z.enum(['uniform', 'counts']),
  /** t in the norm bound S·(1 + σ(√d + t)) (see ingest.ts). */
  tail_margin: z.number().min(0).max(1e6),
  /** The clip norms S the council accepts (the privacy policy it publishes in every round's status). */
  clip_norm: RangeSchema.refine((r) => r.max > 0, 'the largest accepted clip norm must be > 0'),
  /** The noise multipliers σ the council accepts (ignored for σ when `epsilon` is set: the council derives it). */
  noise_multiplier: RangeSchema,
  /**
   * A target ε toward an observer of the published adapters over `epsilon_rounds` rounds at
   * `delta` (null: publish `noise_multiplier` as configured). The council then publishes the σ of
   * privacy/council-sigma.ts: the target's σ, raised where one release would cost a forge more
   * than its privacy floor allows (1/8 of `agent_epsilon`), and says which bound set it.
   */
  epsilon: z.number().positive().nullable(),
  epsilon_rounds: z.number().int().min(1),
  delta: z.number().gt(0).lt(1),
  /** The lifetime ε of one agent on the forges this council serves (their `agent_epsilon`). */
  agent_epsilon: z.number().positive(),
  /**
   * The Poisson rate at which each forge sits in a round's cohort, where cohorts are drawn that way
   * by whoever drives the rounds (the simulation); null: 1. A fixed-size cohort earns no
   * amplification from this accountant, so `cohort` alone never lowers σ.
   */
  sample_rate: z.number().gt(0).max(1).nullable(),
  /**
   * Distributed noise: each forge adds a share σ/√noise_shares and the sum under secure
   * aggregation carries σ; the council accepts shares down to that (null: whole σ per forge).
   */
  noise_shares: z.number().int().min(1).nullable(),
  /** The adapter layout of each agent (see layouts.ts); null: no agent is accepted. */
  layouts: LayoutsConfigSchema.nullable(),
  /** Uploads one forge may have in progress at once (more get 429). */
  max_uploads_per_forge: z.number().int().min(1),
  /** Every upload gets this many seconds, plus its size at upload_rate, to arrive in full. */
  upload_grace: z.number().positive(),
  /** The slowest upload the council waits for, bytes per second. */
  upload_rate: z.number().int().min(1),
  trust_alpha: z.number().gt(0).max(1),
  trust_threshold: z.number().min(0).max(1),
  trust_warmup: z.number().int().min(0),
  trust_tolerance: z.number().min(1),
  /**
   * The operator's root memoir (a memoir file or a directory of them): a labelled set of the
   * preferences the whole federation shares, against which the council judges each update
   * (root-set.ts); null: updates are not judged by one.
   */
  root_memoir: z.string().min(1).nullable(),
  lora_fair_lambda: z.number().min(0),
  lora_fair_lr: z.number().positive(),
  lora_fair_steps: z.number().int().min(0),
  lora_fair_solver: z.enum(['gd', 'ridge']),
  /** The server's step: the new global is the previous one plus server_lr × the aggregate update (FedOpt's server learning rate). */
  server_lr: z.number().positive().max(SERVER_LR_MAX),
});
export type CouncilConfig = z.infer<typeof CouncilConfigSchema>;
export type Range = z.infer<typeof RangeSchema>;
export type ConfigKey = keyof CouncilConfig;

type Kind =
  | 'string'
  | 'nullable-string'
  | 'int'
  | 'number'
  | 'duration'
  | 'size'
  | 'list'
  | 'nullable-int'
  | 'nullable-number'
  | 'range'
  | 'json-or-file';
const KEYS: Record<ConfigKey, Kind> = {
  host: 'string',
  port: 'int',
  data_dir: 'string',
  database: 'nullable-string',
  cohort: 'nullable-int',
  aggregation_lease: 'duration',
  strategy: 'string',
  byzantine: 'int',
  trim: 'nullable-int',
  multikrum_m: 'nullable-int',
  selection: 'string',
  min_forges: 'int',
  round_deadline: 'duration',
  payload_limit: 'size',
  max_in_flight: 'int',
  base_fingerprints: 'list',
  weights: 'string',
  tail_margin: 'number',
  clip_norm: 'range',
  noise_multiplier: 'range',
  epsilon: 'nullable-number',
  epsilon_rounds: 'int',
  delta: 'number',
  agent_epsilon: 'number',
  sample_rate: 'nullable-number',
  noise_shares: 'nullable-int',
  layouts: 'json-or-file',
  max_uploads_per_forge: 'int',
  upload_grace: 'duration',
  upload_rate: 'size',
  trust_alpha: 'number',
  trust_threshold: 'number',
  trust_warmup: 'int',
  trust_tolerance: 'number',
  root_memoir: 'nullable-string',
  lora_fair_lambda: 'number',
  lora_fair_lr: 'number',
  lora_fair_steps: 'int',
  lora_fair_solver: 'string',
  server_lr: 'number',
};

export function defaults(home: string): CouncilConfig {
  return {
    host: '127.0.0.1',
    port: 7470,
    data_dir: join(home, 'council'),
    database: null,
    cohort: null,
    aggregation_lease: 30,
    strategy: 'lora-fair',
    byzantine: 0,
    trim: null,
    multikrum_m: null,
    selection: null,
    min_forges: 3,
    round_deadline: 24 * 3600,
    payload_limit: 64 * 1024 * 1024,
    max_in_flight: 8,
    base_fingerprints: [],
    weights: 'uniform',
    tail_margin: 10,
    clip_norm: { min: 0, max: 1 },
    noise_multiplier: { min: 8, max: 8 },
    epsilon: null,
    epsilon_rounds: 100,
    delta: DEFAULT_PRIVACY_CONFIG.delta,
    agent_epsilon: DEFAULT_PRIVACY_CONFIG.agentEpsilon,
    sample_rate: null,
    noise_shares: null,
    layouts: null,
    max_uploads_per_forge: 2,
    upload_grace: 10,
    upload_rate: 128 * 1024,
    trust_alpha: 0.3,
    trust_threshold: 0.4,
    trust_warmup: 3,
    trust_tolerance: 1.5,
    root_memoir: null,
    lora_fair_lambda: 0.01,
    lora_fair_lr: 0.01,
    lora_fair_steps: 1000,
    lora_fair_solver: 'gd',
    server_lr: SERVER_LR,
  };
}

/**
 * The server's step on the aggregate update (decision 009): clipping holds each forge's update to
 * norm S, far below the step a forge takes alone, so a step of 1 moves the council a fraction of
 * the way each round. Post-processing of what the forges released: no privacy cost.
 */
export const SERVER_LR = 2;

export const envName = (key: ConfigKey): string => `KOURAI_COUNCIL_${key.toUpperCase()}`;
export const flagName = (key: ConfigKey): string => `--${key.replace(/_/g, '-')}`;

/** "90s", "15m", "24h", "2d" or a number of seconds. */
export function parseDuration(v: string | number): number {
  if (typeof v === 'number') return v;
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(v);
  if (!m) throw new Error(`"${v}" is not a duration (e.g. 90s, 15m, 24h, 2d)`);
  const x = Number(m[1]);
  const unit = m[2] ?? 's';
  return x * { ms: 0.001, s: 1, m: 60, h: 3600, d: 86400 }[unit as 'ms' | 's' | 'm' | 'h' | 'd'];
}

/** "64MiB", "1GB", "512k", or a number of bytes. */
export function parseSize(v: string | number): number {
  if (typeof v === 'number') return v;
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(i?)b?\s*$/i.exec(v);
  if (!m) throw new Error(`"${v}" is not a size (e.g. 64MiB, 1GB, 512k)`);
  const power = ' kmgt'.indexOf((m[2] ?? '').toLowerCase() || ' ');
  const base = m[3] || (m[2] && !/b$/i.test(v.trim())) ? 1024 : 1000;
  return Math.round(Number(m[1]) * base ** power);
}

function text(raw: unknown): string {
  return typeof raw === 'string' ? raw : JSON.stringify(raw);
}

/** "1" (exactly 1), "0.5..1", 2, or {"min": 0.5, "max": 1}. */
export function parseRange(v: unknown): unknown {
  if (typeof v === 'number') return { min: v, max: v };
  if (typeof v === 'object' && v !== null) return v;
  const s = String(v).trim();
  const num = '[-+]?(?:\\d+(?:\\.\\d*)?|\\.\\d+)(?:e[-+]?\\d+)?';
  const m = new RegExp(`^(${num})(?:\\s*\\.\\.\\s*(${num}))?$`, 'i').exec(s);
  if (!m) throw new Error(`"${s}" is not a value or a range (e.g. 1, or 0.5..1)`);
  return { min: Number(m[1]), max: Number(m[2] ?? m[1]) };
}

/** Inline JSON, or the path of a JSON file (relative to `base`). */
function jsonOrFile(v: unknown, base: string): unknown {
  if (typeof v !== 'string') return v;
  const s = v.trim();
  if (s.startsWith('{')) return JSON.parse(s) as unknown;
  const file = resolve(base, s);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`cannot read ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new Error(`${file} is not valid JSON: ${(err as Error).message}`);
  }
}

function coerce(key: ConfigKey, raw: unknown, base: string): unknown {
  const kind = KEYS[key];
  if (raw === null) return null;
  switch (kind) {
    case 'string':
      return text(raw);
    case 'nullable-string': {
      const s = text(raw).trim();
      return s === '' || s === 'none' || s === 'null' ? null : s;
    }
    case 'int':
    case 'number':
    case 'nullable-int':
    case 'nullable-number': {
      if (typeof raw === 'number') return raw;
      const s = text(raw).trim();
      if (kind !== 'int' && kind !== 'number' && (s === '' || s === 'none' || s === 'null')) return null;
      if (!/^[-+]?\d+(\.\d+)?(e[-+]?\d+)?$/i.test(s)) throw new Error(`"${s}" is not a number`);
      return Number(s);
    }
    case 'duration':
      return parseDuration(raw as string | number);
    case 'size':
      return parseSize(raw as string | number);
    case 'list':
      return Array.isArray(raw)
        ? raw.map(text)
        : text(raw)
            .split(',')
            .map((s) => s.trim())
            .filter(Boolean);
    case 'range':
      return parseRange(raw);
    case 'json-or-file':
      return jsonOrFile(raw, base);
  }
}

export interface ResolvedConfig {
  config: CouncilConfig;
  /** Where each value came from: 'default', 'file <path>', 'env NAME', 'flag --name'. */
  sources: Record<ConfigKey, string>;
  file: string | null;
}

/**
 * Defaults < config file < KOURAI_COUNCIL_* < flags. `flags` holds values already given on the
 * command line, keyed by config key (undefined = not given).
 */
export function resolveCouncilConfig(
  ctx: Pick<Ctx, 'env' | 'cwd'>,
  flags: Partial<Record<ConfigKey, unknown>> & { config?: string | undefined },
): ResolvedConfig {
  const home = kouraiHome(ctx);
  const merged: Record<string, unknown> = { ...defaults(home) };
  const sources = Object.fromEntries(Object.keys(KEYS).map((k) => [k, 'default'])) as Record<ConfigKey, string>;
  const explicit = flags.config ?? ctx.env.KOURAI_COUNCIL_CONFIG;
  const file = explicit ? resolve(ctx.cwd, explicit) : join(home, 'council', 'council.json');
  let usedFile: string | null = null;
  if (explicit || existsSync(file)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw new EnvironmentError(
        code === 'ENOENT'
          ? `council config file not found: ${file}`
          : `council config file ${file} is not valid JSON: ${(err as Error).message}`,
      );
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new EnvironmentError(`council config file ${file} must hold a JSON object`);
    for (const [k, v] of Object.entries(parsed)) {
      if (!(k in KEYS))
        throw new EnvironmentError(
          `council config file ${file}: unknown key "${k}" (known: ${Object.keys(KEYS).join(', ')})`,
        );
      set(k as ConfigKey, v, `file ${file}`, dirname(file));
    }
    usedFile = file;
  }
  for (const k of Object.keys(KEYS) as ConfigKey[]) {
    const v = ctx.env[envName(k)];
    if (v !== undefined && v !== '') set(k, v, `env ${envName(k)}`, ctx.cwd);
  }
  for (const k of Object.keys(KEYS) as ConfigKey[]) {
    const v = flags[k];
    if (v !== undefined) set(k, v, `flag ${flagName(k)}`, ctx.cwd);
  }
  merged.data_dir = resolve(ctx.cwd, String(merged.data_dir));

  function set(k: ConfigKey, v: unknown, source: string, base: string): void {
    try {
      merged[k] = coerce(k, v, base);
    } catch (err) {
      throw configError(source, k, (err as Error).message);
    }
    sources[k] = source;
  }

  const result = CouncilConfigSchema.safeParse(merged);
  if (!result.success) {
    const issue = result.error.issues[0];
    const key = String(issue?.path[0] ?? 'config') as ConfigKey;
    const where = issue && issue.path.length > 1 ? ` at ${issue.path.slice(1).join('.')}` : '';
    throw configError(sources[key] ?? 'config', key, `${issue?.message ?? 'invalid value'}${where}`);
  }
  return { config: result.data, sources, file: usedFile };
}

function configError(source: string, key: ConfigKey, message: string): Error {
  const text = `${key} (from ${source}): ${message}`;
  return source.startsWith('flag') ? new UsageError(text) : new EnvironmentError(text);
}

/**
 * Checks what `serve` needs beyond the schema; throws a usage error naming the setting. Layouts
 * derived from the built-in base also give the accepted fingerprint when none is configured.
 */
export function checkServeConfig(r: ResolvedConfig): void {
  const c = r.config;
  const derivesBuiltin = derivationOf(c.layouts)?.base === 'builtin';
  if (c.base_fingerprints.length === 0 && !derivesBuiltin) {
    throw new UsageError(
      'no accepted base-model fingerprint: the council must know which base model updates are for',
      `pass --base-fingerprint SHA (repeatable) or set ${envName('base_fingerprints')}`,
    );
  }
  // With a cohort, f depends on how many forges there are: each round checks its own (round-settings.ts).
  const req = requirement(roundSettingsOf(c));
  if (c.cohort === null && c.min_forges < req.min) {
    throw new UsageError(
      `min_forges is ${c.min_forges} (from ${r.sources.min_forges}) but ${req.rule}`,
      `raise --min-forges to ${req.min} or lower --byzantine`,
    );
  }
  const layouts = configuredLayouts(c.layouts);
  // Layouts derived from the built-in base only fit adapters over that base.
  if (derivationOf(c.layouts)?.base === 'builtin') {
    if (c.base_fingerprints.length === 0) c.base_fingerprints = [BUILTIN_FINGERPRINT];
    else if (!c.base_fingerprints.includes(BUILTIN_FINGERPRINT)) {
      throw new UsageError(
        `layouts are derived from the built-in base, but its fingerprint ${BUILTIN_FINGERPRINT} is not among the accepted ones (${c.base_fingerprints.join(', ')})`,
        `add --base-fingerprint ${BUILTIN_FINGERPRINT}, or give explicit layouts`,
      );
    }
  }
  if (layouts.size === 0) {
    throw new UsageError(
      'no adapter layouts: the council must know the tensors it accepts for each agent (no forge may decide them)',
      'pass --layouts FILE (JSON: {"*": [{"name", "shape"}, …]} or per agent), or set "layouts" in the config file',
    );
  }
  // The policy's widest bound must be a finite number for the largest layout.
  const d = Math.max(...[...layouts.values()].map((l) => l.size));
  const sigmaMax = privacyPolicyOf(c).noise_multiplier.max;
  if (!Number.isFinite(normBound(c.clip_norm.max, sigmaMax, d, c.tail_margin))) {
    throw new UsageError(
      `clip_norm ≤ ${c.clip_norm.max} with noise_multiplier ≤ ${sigmaMax} over ${d} coordinates allows norms beyond the float64 range`,
      'lower --clip-norm or --noise-multiplier',
    );
  }
}
