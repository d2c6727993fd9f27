import { createHash } from 'node:crypto';
import { embeddingCachePath, EmbeddingCache } from '../store/embedding-cache.js';
import { BaseModel } from './base-model.js';
import { embeddingsBaseSpec } from './base-spec.js';
import { fetchEmbeddings } from './encoder/embeddings-client.js';
import { inputEncoder } from './encoder/inputs.js';
import { fingerprintOf } from './fingerprint.js';
import type { EndpointEncoderConfig } from './learn-config.js';
import type { TextEncoder } from './text-encoder.js';

/**
 * The endpoint encoder (text-encoder.ts): embeddings from an OpenAI-compatible endpoint on the
 * main thread, through the cache, handed to the training worker. Loaded only when configured.
 */
export async function openEndpointEncoder(
  cfg: EndpointEncoderConfig,
  opts: { home: string; env: Readonly<Record<string, string | undefined>>; signal: AbortSignal },
): Promise<TextEncoder> {
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
