import { FEDERATING_AGENTS, type Agent } from '../memoir/format/agents.js';

/**
 * The published specification of the frozen base every forge shares (README "Local learning").
 * Everything a forge needs to rebuild the base bit for bit is here: the encoder, the layer sizes
 * and the generator streams and scales of every frozen weight (counter-random.ts). Nothing is
 * downloaded. Two bases with different specifications have different fingerprints, and adapters
 * over different bases are never mixed.
 *
 *   x = encoder(text)                      (sparse, L2-normalised, `encoder.dim` wide)
 *   h = tanh(encoder.dense(x))             Linear(dim -> hidden) with bias
 *   score = head.score(h)                  Linear(hidden -> 1), no bias   (preference model)
 *   route = head.route(h)                  Linear(hidden -> |specialists|)  (Hephaestus)
 *
 * Weight W[o][i] of a layer = scale * U(seed, stream, i * out + o), U uniform on [-1, 1)
 * (column i of a layer is contiguous in the generator, so a column per hashed feature can be
 * made on demand); bias[o] = scale * U(seed, stream, o).
 */
export interface HashedEncoderSpec {
  kind: 'hashed-ngrams';
  /** Version of the feature extraction (tokens, shapes, n-grams, hashing): changing it changes the fingerprint. */
  version: 1;
  dim: number;
}

export interface EmbeddingsEncoderSpec {
  kind: 'embeddings';
  /** The endpoint's model name: embeddings of different models are different inputs. */
  model: string;
  dim: number;
}

export type EncoderSpec = HashedEncoderSpec | EmbeddingsEncoderSpec;

export interface LayerInit {
  stream: number;
  scale: number;
}

export interface BaseSpec {
  format: 'kourai-base/1';
  encoder: EncoderSpec;
  hidden: number;
  activation: 'tanh';
  /** The routing head's classes, in output order. */
  specialists: readonly Agent[];
  seed: number;
  init: {
    dense: LayerInit;
    denseBias: LayerInit;
    score: LayerInit;
    route: LayerInit;
  };
}

/** The specialists Hephaestus routes to: every federating agent but himself. */
export const SPECIALISTS: readonly Agent[] = FEDERATING_AGENTS.filter((a) => a !== 'hephaestus');

export const HIDDEN = 256;
export const HASHED_DIM = 1 << 14;
const SEED = 0x6b6f7572; // "kour"

function init(hidden: number): BaseSpec['init'] {
  return {
    // Pre-activations of a unit-norm input have variance 1 (uniform on [-√3, √3)).
    dense: { stream: 1, scale: Math.sqrt(3) },
    denseBias: { stream: 2, scale: 0.5 },
    // Heads start nearly neutral (output std ≈ 0.15): the base has no opinion, the adapters do.
    score: { stream: 3, scale: Math.sqrt(3 / hidden) * 0.25 },
    route: { stream: 4, scale: Math.sqrt(3 / hidden) * 0.25 },
  };
}

export function builtinBaseSpec(): BaseSpec {
  return { format: 'kourai-base/1', encoder: { kind: 'hashed-ngrams', version: 1, dim: HASHED_DIM }, hidden: HIDDEN, activation: 'tanh', specialists: SPECIALISTS, seed: SEED, init: init(HIDDEN) };
}

/** The base over an OpenAI-compatible embeddings model: same layers, the embedding as input. */
export function embeddingsBaseSpec(model: string, dim: number): BaseSpec {
  return { format: 'kourai-base/1', encoder: { kind: 'embeddings', model, dim }, hidden: HIDDEN, activation: 'tanh', specialists: SPECIALISTS, seed: SEED, init: init(HIDDEN) };
}

/** The specification as canonical JSON (sorted keys): what the fingerprint hashes first. */
export function canonicalSpec(spec: BaseSpec): string {
  return canonicalJson(spec);
}

function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}
