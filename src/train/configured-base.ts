import { embeddingCachePath, EmbeddingCache } from '../store/embedding-cache.js';
import { BaseModel } from './base-model.js';
import { builtinBaseSpec, embeddingsBaseSpec, type BaseSpec } from './base-spec.js';
import { fingerprintOf } from './fingerprint.js';
import type { EncoderConfig } from './learn-config.js';

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
