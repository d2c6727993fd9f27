import { FEDERATING_AGENTS, type Agent } from '../memoir/format/agents.js';
import { STRUCTURE_DIM, STRUCTURE_FEATURES } from './encoder/structure.js';

/**
 * The published specification of the frozen base every forge shares (README "Local learning").
 * Everything a forge needs to rebuild the base bit for bit is here: the encoder, the layer sizes
 * and the generator streams and scales of every frozen weight (counter-random.ts). Nothing is
 * downloaded. Two bases with different specifications have different fingerprints, and adapters
 * over different bases are never mixed.
 *
 *   x = [ hashed(text) | structure(text, prompt) | embedding(text) | words(text) ]   (inputDim(spec) wide)
 *         L2-normalised   standardised (structure.ts)  L2-normalised,    L2-normalised (words.ts)
 *                                                      only with `semantic`
 *   h = tanh(encoder.dense(x))             Linear(in -> hidden) with bias; its word columns are zero
 *   score = head.score(h) + direct.score(x)      (preference model)
 *   route = head.route(h) + direct.route(x)      (Hephaestus)
 *
 * `direct.*` is a linear path from the raw sparse inputs to the outputs, frozen at zero in the
 * base: the adapters' LoRA factors on it make a linear model of the n-grams, the length and the
 * prompt relation, which the frozen random projection alone cannot express.
 *
 * Weight W[o][i] of a layer = scale * U(seed, stream, i * out + o), U uniform on [-1, 1)
 * (column i of a layer is contiguous in the generator, so a column per input feature can be
 * made on demand); encoder.dense's structure columns use `denseStructure`'s scale;
 * bias[o] = scale * U(seed, stream, o).
 */
export interface HashedEncoderSpec {
  kind: 'hashed-ngrams';
  /** Version of the feature extraction (tokens, shapes, n-grams, hashing): changing it changes the fingerprint. */
  version: 1;
  dim: number;
}

/** An OpenAI-compatible embeddings model, combined with the hashed features. */
export interface SemanticSpec {
  kind: 'embeddings';
  /** The endpoint's model name: embeddings of different models are different inputs. */
  model: string;
  dim: number;
}

/** Hashed lower-cased word unigrams (encoder/words.ts), read only by the adapters. */
export interface WordsSpec {
  kind: 'word-unigrams';
  /** Version of the word extraction and hashing: changing it changes the fingerprint. */
  version: 1;
  dim: number;
}

export interface StructureSpec {
  /** 2: the request (the prompt's last paragraph) and context features. */
  version: 2;
  features: readonly string[];
}

export interface LayerInit {
  stream: number;
  scale: number;
}

export interface BaseSpec {
  format: 'kourai-base/3';
  encoder: HashedEncoderSpec;
  structure: StructureSpec;
  semantic: SemanticSpec | null;
  words: WordsSpec;
  hidden: number;
  activation: 'tanh';
  /** The routing head's classes, in output order. */
  specialists: readonly Agent[];
  seed: number;
  init: {
    dense: LayerInit;
    denseStructure: LayerInit;
    denseBias: LayerInit;
    score: LayerInit;
    route: LayerInit;
  };
}

/** The specialists Hephaestus routes to: every federating agent but himself. */
export const SPECIALISTS: readonly Agent[] = FEDERATING_AGENTS.filter((a) => a !== 'hephaestus');

export const HIDDEN = 256;
export const HASHED_DIM = 1 << 14;
export const WORDS_DIM = 1 << 13;
const SEED = 0x6b6f7572; // "kour"

function init(hidden: number, semantic: boolean): BaseSpec['init'] {
  return {
    // Pre-activations of a unit-norm input block have variance 1 (uniform on [-√3, √3)); with an
    // embedding block too, each block gives half.
    dense: { stream: 1, scale: Math.sqrt(3) * (semantic ? Math.SQRT1_2 : 1) },
    // Structure inputs are O(1) each: small columns keep tanh out of saturation.
    denseStructure: { stream: 1, scale: Math.sqrt(3 / STRUCTURE_DIM) * 0.5 },
    denseBias: { stream: 2, scale: 0.5 },
    // Heads start nearly neutral (output std ≈ 0.15): the base has no opinion, the adapters do.
    score: { stream: 3, scale: Math.sqrt(3 / hidden) * 0.25 },
    route: { stream: 4, scale: Math.sqrt(3 / hidden) * 0.25 },
  };
}

const STRUCTURE: StructureSpec = { version: 2, features: STRUCTURE_FEATURES };

export function builtinBaseSpec(): BaseSpec {
  return {
    format: 'kourai-base/3',
    encoder: { kind: 'hashed-ngrams', version: 1, dim: HASHED_DIM },
    structure: STRUCTURE,
    semantic: null,
    words: { kind: 'word-unigrams', version: 1, dim: WORDS_DIM },
    hidden: HIDDEN,
    activation: 'tanh',
    specialists: SPECIALISTS,
    seed: SEED,
    init: init(HIDDEN, false),
  };
}

/** The base with an OpenAI-compatible embeddings model's vectors added to the hashed inputs. */
export function embeddingsBaseSpec(model: string, dim: number): BaseSpec {
  return { ...builtinBaseSpec(), semantic: { kind: 'embeddings', model, dim }, init: init(HIDDEN, true) };
}

/** Width of the input vector x: hashed, structure, the embedding, then the words. */
export function inputDim(spec: BaseSpec): number {
  return inputBlocks(spec).end;
}

/** Where each block of x starts (`words`: also where the frozen projection's inputs end). */
export function inputBlocks(spec: BaseSpec): { structure: number; semantic: number; words: number; end: number } {
  const structure = spec.encoder.dim;
  const semantic = structure + spec.structure.features.length;
  const words = semantic + (spec.semantic?.dim ?? 0);
  return { structure, semantic, words, end: words + spec.words.dim };
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
