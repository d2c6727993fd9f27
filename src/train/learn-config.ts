import { EnvironmentError } from '../errors.js';
import { readConfigSection } from '../config.js';

/**
 * Local learning settings, with the house precedence: defaults < `$KOURAI_HOME/config.json`
 * (`learn` section) < KOURAI_* environment < flags (the commands apply flags).
 *
 *   {"learn": {
 *     "encoder": {"kind": "openai", "url": "http://127.0.0.1:11434/v1", "model": "nomic-embed-text",
 *                 "dimensions": 768, "timeout_ms": 30000, "retries": 2, "batch_size": 64,
 *                 "api_key_env": "OPENAI_API_KEY"},
 *     "lean": {"default": 0.5, "code": 0.2, "plan": 0.8}
 *   }}
 *
 * `encoder` omitted (or {"kind": "builtin"}): the built-in hashed n-gram encoder. Environment:
 * KOURAI_EMBEDDINGS_URL and KOURAI_EMBEDDINGS_MODEL (together) select an endpoint;
 * KOURAI_LEAN sets the default lean. A bad value is an environment error (exit 3) naming it.
 *
 * The lean, per task type, mixes the two adapters at inference: 0 = personal (bond only),
 * 1 = federated (council only), 0.5 = both as trained. λ_council = min(1, 2·lean),
 * λ_bond = min(1, 2·(1 − lean)). Unset, `score` and `route` use the lean chosen on the player's
 * held-out scenes for the current council version (applied-lean.ts).
 */
export interface EndpointEncoderConfig {
  kind: 'openai';
  url: string;
  model: string;
  /** Expected embedding size (null: learned from the endpoint's first answer, then cached). */
  dimensions: number | null;
  timeoutMs: number;
  retries: number;
  batchSize: number;
  /** The environment variable holding the API key (sent as a Bearer token), if any. */
  apiKeyEnv: string | null;
}

export type EncoderConfig = { kind: 'builtin' } | EndpointEncoderConfig;

export interface LearnConfig {
  encoder: EncoderConfig;
  /** Per task type; `default` applies to the others. */
  lean: Record<string, number>;
}

export const DEFAULT_LEAN = 0.5;

const ENDPOINT_DEFAULTS = { dimensions: null, timeoutMs: 30_000, retries: 2, batchSize: 64, apiKeyEnv: null };

function bad(path: string, key: string, what: string): EnvironmentError {
  return new EnvironmentError(`config file ${path}: learn.${key} ${what}`);
}

function checkUrl(u: string): boolean {
  try {
    const p = new URL(u);
    return p.protocol === 'http:' || p.protocol === 'https:';
  } catch {
    return false;
  }
}

function encoderFromFile(path: string, raw: unknown): EncoderConfig {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad(path, 'encoder', 'must be an object');
  const o = raw as Record<string, unknown>;
  const kind = o.kind ?? 'builtin';
  if (kind === 'builtin') {
    const extra = Object.keys(o).filter((k) => k !== 'kind');
    if (extra.length) throw bad(path, `encoder.${extra[0]}`, 'applies only to {"kind": "openai"}');
    return { kind: 'builtin' };
  }
  if (kind !== 'openai')
    throw bad(path, 'encoder.kind', 'must be "builtin" or "openai" (an OpenAI-compatible /v1/embeddings endpoint)');
  const out: EndpointEncoderConfig = { kind: 'openai', url: '', model: '', ...ENDPOINT_DEFAULTS };
  for (const [k, v] of Object.entries(o)) {
    if (k === 'kind') continue;
    else if (k === 'url') {
      if (typeof v !== 'string' || !checkUrl(v))
        throw bad(path, 'encoder.url', 'must be an http(s) URL, e.g. "http://127.0.0.1:11434/v1"');
      out.url = v;
    } else if (k === 'model') {
      if (typeof v !== 'string' || v.trim() === '') throw bad(path, 'encoder.model', 'must be a model name');
      out.model = v;
    } else if (k === 'dimensions') {
      if (!(Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 65_536))
        throw bad(path, 'encoder.dimensions', 'must be a whole number 1–65536');
      out.dimensions = v as number;
    } else if (k === 'timeout_ms') {
      if (!(Number.isInteger(v) && (v as number) >= 100))
        throw bad(path, 'encoder.timeout_ms', 'must be a whole number of milliseconds ≥ 100');
      out.timeoutMs = v as number;
    } else if (k === 'retries') {
      if (!(Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 10))
        throw bad(path, 'encoder.retries', 'must be a whole number 0–10');
      out.retries = v as number;
    } else if (k === 'batch_size') {
      if (!(Number.isInteger(v) && (v as number) >= 1 && (v as number) <= 2048))
        throw bad(path, 'encoder.batch_size', 'must be a whole number 1–2048');
      out.batchSize = v as number;
    } else if (k === 'api_key_env') {
      if (typeof v !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(v))
        throw bad(path, 'encoder.api_key_env', 'must name an environment variable');
      out.apiKeyEnv = v;
    } else
      throw bad(
        path,
        `encoder.${k}`,
        'is not a known key (known: kind, url, model, dimensions, timeout_ms, retries, batch_size, api_key_env)',
      );
  }
  if (!out.url) throw bad(path, 'encoder.url', 'is required with {"kind": "openai"}');
  if (!out.model) throw bad(path, 'encoder.model', 'is required with {"kind": "openai"}');
  return out;
}

export function checkLean(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= 1 ? v : undefined;
}

export function learnConfig(home: string, env: Readonly<Record<string, string | undefined>>): LearnConfig {
  const { path, section } = readConfigSection(home, 'learn');
  const cfg: LearnConfig = { encoder: { kind: 'builtin' }, lean: {} };
  for (const [key, value] of Object.entries(section ?? {})) {
    if (key === 'encoder') cfg.encoder = encoderFromFile(path, value);
    else if (key === 'lean') {
      if (checkLean(value) !== undefined) cfg.lean = { default: value as number };
      else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
        for (const [t, l] of Object.entries(value)) {
          const n = checkLean(l);
          if (n === undefined)
            throw bad(
              path,
              `lean.${t}`,
              'must be a number from 0 (personal: bond only) to 1 (federated: council only)',
            );
          cfg.lean[t] = n;
        }
      } else throw bad(path, 'lean', 'must be a number in [0, 1] or an object of task type -> number');
    } else throw bad(path, key, 'is not a known key (known: encoder, lean)');
  }
  const url = env.KOURAI_EMBEDDINGS_URL?.trim();
  const model = env.KOURAI_EMBEDDINGS_MODEL?.trim();
  if (url || model) {
    if (!url || !model)
      throw new EnvironmentError('KOURAI_EMBEDDINGS_URL and KOURAI_EMBEDDINGS_MODEL must be set together');
    if (!checkUrl(url)) throw new EnvironmentError(`KOURAI_EMBEDDINGS_URL="${url}" is not an http(s) URL`);
    cfg.encoder = {
      ...ENDPOINT_DEFAULTS,
      ...(cfg.encoder.kind === 'openai' ? cfg.encoder : {}),
      kind: 'openai',
      url,
      model,
    };
  }
  const lean = env.KOURAI_LEAN?.trim();
  if (lean) {
    const n = checkLean(Number(lean));
    if (n === undefined)
      throw new EnvironmentError(`KOURAI_LEAN="${lean}" is not a number from 0 (personal) to 1 (federated)`);
    cfg.lean.default = n;
  }
  return cfg;
}

/** The lean set for a task type in config.json or KOURAI_LEAN (its own, else `default`); undefined when none is set. */
export function configuredLean(cfg: LearnConfig, taskType: string | null): number | undefined {
  if (taskType !== null && cfg.lean[taskType] !== undefined) return cfg.lean[taskType];
  return cfg.lean.default;
}

/** The lean for a task type: the flag, else the configured one, else DEFAULT_LEAN. */
export function leanFor(cfg: LearnConfig, taskType: string | null, flag?: number): number {
  if (flag !== undefined) return flag;
  return configuredLean(cfg, taskType) ?? DEFAULT_LEAN;
}

/** Mixing weights of the two adapters for a lean. */
export function mixing(lean: number): { council: number; bond: number } {
  return { council: Math.min(1, 2 * lean), bond: Math.min(1, 2 * (1 - lean)) };
}
