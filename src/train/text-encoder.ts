import { BaseModel } from './base-model.js';
import { builtinBaseSpec, type BaseSpec } from './base-spec.js';
import { inputEncoder } from './encoder/inputs.js';
import type { Features } from './features.js';
import { fingerprintOf } from './fingerprint.js';
import type { EncoderConfig } from './learn-config.js';
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
  // The endpoint's client and cache load only when configured: scoring with the built-in encoder starts without them.
  return (await import('./text-encoder-endpoint.js')).openEndpointEncoder(cfg, opts);
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
