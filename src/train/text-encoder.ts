import { createHash } from 'node:crypto';
import { embeddingCachePath, EmbeddingCache } from '../store/embedding-cache.js';
import { BaseModel } from './base-model.js';
import { builtinBaseSpec, embeddingsBaseSpec, type BaseSpec } from './base-spec.js';
import { fetchEmbeddings } from './encoder/embeddings-client.js';
import { inputEncoder } from './encoder/inputs.js';
import type { Features } from './features.js';
import { fingerprintOf } from './fingerprint.js';
import type { EncoderConfig, EndpointEncoderConfig } from './learn-config.js';
import type { EmbeddedTexts } from './worker-protocol.js';

/**
 * The configured encoder and the base over it. The built-in encoder runs anywhere (the training
 * worker encodes for itself); an endpoint encoder embeds on the main thread, through the cache,
 * and hands the vectors to the worker. The base's fingerprint names the encoder (for an endpoint:
 * its model and dimension), so adapters over different encoders are never mixed.
 */
export interface TextEncoder {
  readonly spec: BaseSpec;
  readonly base: BaseModel;
  readonly fingerprint: string;
  /** The base's input vectors of candidate texts answering `prompt` (null: not known). */
  encode(texts: readonly string[], prompt?: string | null): Promise<Features[]>;
  /** What the training worker needs to encode `texts` (null: it encodes them itself). */
  embedded(texts: readonly string[]): Promise<EmbeddedTexts | null>;
  close(): void;
}

export async function openTextEncoder(
  cfg: EncoderConfig,
  opts: { home: string; env: Readonly<Record<string, string | undefined>>; signal: AbortSignal },
): Promise<TextEncoder> {
  if (cfg.kind === 'builtin') return builtin();
  const cache = new EmbeddingCache(embeddingCachePath(opts.home));
  try {
    let dim = cfg.dimensions ?? cache.dimension(cfg.model);
    if (dim === null) dim = ((await embedThroughCache(cfg, cache, ['kourai'], opts))[0] as Float32Array).length;
    // From here on every embedding must have the base's dimension.
    const fixed: EndpointEncoderConfig = { ...cfg, dimensions: dim };
    const embed = (texts: readonly string[]): Promise<Float32Array[]> => embedThroughCache(fixed, cache, texts, opts);
    const spec = embeddingsBaseSpec(cfg.model, dim);
    const base = new BaseModel(spec);
    const inputs = inputEncoder(spec);
    return {
      spec,
      base,
      fingerprint: fingerprintOf(base),
      encode: async (texts, prompt = null) => {
        const vecs = await embed(texts);
        return texts.map((t, i) => inputs(t, prompt, vecs[i] as Float32Array));
      },
      embedded: async (texts) => {
        const unique = [...new Set(texts)];
        const vecs = await embed(unique);
        const data = new Float32Array(unique.length * (dim as number));
        vecs.forEach((v, i) => data.set(v, i * (dim as number)));
        return { texts: unique, dim: dim as number, data };
      },
      close: () => cache.close(),
    };
  } catch (err) {
    cache.close();
    throw err;
  }
}

function builtin(): TextEncoder {
  const spec = builtinBaseSpec();
  const base = new BaseModel(spec);
  const enc = inputEncoder(spec);
  return {
    spec,
    base,
    fingerprint: fingerprintOf(base),
    encode: async (texts, prompt = null) => texts.map((t) => enc(t, prompt)),
    embedded: async () => null,
    close: () => undefined,
  };
}

const sha = (t: string): string => createHash('sha256').update(t).digest('hex');

/** Embeddings for texts: cached ones from the cache, the rest from the endpoint in batches (then cached). */
async function embedThroughCache(
  cfg: EndpointEncoderConfig,
  cache: EmbeddingCache,
  texts: readonly string[],
  opts: { env: Readonly<Record<string, string | undefined>>; signal: AbortSignal },
): Promise<Float32Array[]> {
  const out: (Float32Array | null)[] = texts.map(() => null);
  const missing = new Map<string, number[]>();
  texts.forEach((t, i) => {
    const h = sha(t);
    const hit = cache.get(cfg.model, h);
    if (hit && (cfg.dimensions === null || hit.length === cfg.dimensions)) out[i] = hit;
    else missing.set(t, [...(missing.get(t) ?? []), i]);
  });
  const todo = [...missing.keys()];
  for (let b = 0; b < todo.length; b += cfg.batchSize) {
    const batch = todo.slice(b, b + cfg.batchSize);
    const vecs = await fetchEmbeddings(cfg, batch, opts);
    cache.putMany(
      cfg.model,
      batch.map((t, k) => ({ sha: sha(t), vector: vecs[k] as Float32Array })),
    );
    batch.forEach((t, k) => {
      for (const i of missing.get(t) ?? []) out[i] = vecs[k] as Float32Array;
    });
  }
  return out as Float32Array[];
}

/**
 * The configured base without contacting an endpoint: the built-in one, or an endpoint's when its
 * dimension is configured or cached; null when only the endpoint could say.
 */
export function configuredBaseOffline(
  cfg: EncoderConfig,
  home: string,
): { spec: BaseSpec; fingerprint: string } | null {
  if (cfg.kind === 'builtin') {
    const spec = builtinBaseSpec();
    return { spec, fingerprint: fingerprintOf(new BaseModel(spec)) };
  }
  let dim = cfg.dimensions;
  if (dim === null) {
    const cache = new EmbeddingCache(embeddingCachePath(home));
    try {
      dim = cache.dimension(cfg.model);
    } finally {
      cache.close();
    }
  }
  if (dim === null) return null;
  const spec = embeddingsBaseSpec(cfg.model, dim);
  return { spec, fingerprint: fingerprintOf(new BaseModel(spec)) };
}
