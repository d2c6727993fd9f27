/**
 * What may leave the forge for one agent in one federation round: the clipped, noised council
 * delta and public settings. Nothing else. Every field is listed in RELEASE_FIELDS with why it
 * is safe to send; a test checks the schema and the list agree.
 *
 * Deliberately absent: example counts, losses, training time, the delta's norm before or after
 * clipping, timestamps. Each is an exact function of the forge's data (or leaks it through
 * timing) and is not covered by the DP guarantee. Coarsening would not fix that (a bucket
 * boundary still reveals data), so such figures are not sent at all; the server weights forges
 * uniformly.
 */
import { z } from 'zod';
import { FEDERATING_AGENTS, type FederatingAgent } from '../memoir/format/agents.js';
import { SafetensorsError } from '../tensor/errors.js';
import { tensorFromJson, TensorJsonSchema, tensorToJson, type TensorJson } from '../tensor/json.js';
import { readSafetensors, writeSafetensors } from '../tensor/safetensors.js';
import type { NamedTensor } from '../tensor/tensor.js';
import { clipToNorm } from './clip.js';
import type { GaussianSampler } from './gaussian-noise.js';

/**
 * Version 3: the document is also the council submission body (it carries the base fingerprint;
 * the council accepts it as it is). Version 2 had no `base_fingerprint`; version 1 also spelled
 * tensors `dtype: "float32", data_b64`.
 */
export const COUNCIL_RELEASE_FORMAT = 'kourai.council-release/3';
const FORMAT_V2 = 'kourai.council-release/2';
const FORMAT_V1 = 'kourai.council-release/1';

/** A released tensor: the shared tensor JSON shape `{name, shape, dtype: "F32", data}`. */
export const ReleasedTensorSchema = TensorJsonSchema;

export const CouncilReleaseSchema = z
  .object({
    format: z.literal(COUNCIL_RELEASE_FORMAT),
    round: z.string().min(1).max(256),
    agent: z.enum(FEDERATING_AGENTS),
    base_fingerprint: z.string().min(1).max(256),
    mechanism: z
      .object({
        name: z.literal('gaussian'),
        clip_norm: z.number().positive(),
        noise_multiplier: z.number().positive(),
        sample_rate: z.literal(1),
        accountant: z.literal('rdp'),
      })
      .strict(),
    tensors: z.array(ReleasedTensorSchema),
  })
  .strict();

export type CouncilRelease = z.infer<typeof CouncilReleaseSchema>;

/** Every field that leaves, and why it may. */
export const RELEASE_FIELDS: readonly { field: string; what: string; why: string }[] = [
  { field: 'format', what: 'the document format, a constant', why: 'public constant' },
  { field: 'round', what: 'the round key: the council and the round number it assigned', why: 'chosen by the server' },
  { field: 'agent', what: 'which agent speaks', why: 'participation is public (q = 1): the server sees who took part' },
  {
    field: 'base_fingerprint',
    what: 'the fingerprint of the published base model the adapter is over',
    why: 'public: the same for every forge on that base',
  },
  { field: 'mechanism.name', what: '"gaussian"', why: 'public constant' },
  { field: 'mechanism.clip_norm', what: 'S, the L2 norm the whole delta was clipped to', why: 'public configuration' },
  { field: 'mechanism.noise_multiplier', what: 'σ; the noise has standard deviation σ·S', why: 'public configuration' },
  { field: 'mechanism.sample_rate', what: 'q = 1', why: 'public constant' },
  { field: 'mechanism.accountant', what: '"rdp"', why: 'public constant' },
  { field: 'tensors[].name', what: 'the adapter tensor name', why: 'model architecture: public configuration' },
  { field: 'tensors[].shape', what: 'its shape', why: 'model architecture: public configuration' },
  { field: 'tensors[].dtype', what: '"F32"', why: 'public constant' },
  {
    field: 'tensors[].data',
    what: 'clip(Δ, S) + N(0, σ²S²·I), little-endian float32, base64',
    why: 'the output of the Gaussian mechanism: (ε, δ)-DP',
  },
];

export interface BuiltRelease {
  release: CouncilRelease;
  /** Local only, never sent: the norms before and after clipping and of what was sent. */
  local: { normBefore: number; clippedNorm: number; releasedNorm: number; clipped: boolean };
}

/**
 * Clips the whole delta to S and adds N(0, σ²S²) to every coordinate (float64 sum, stored as
 * float32). The caller must have written the ledger row first: see src/privacy/round-gate.ts.
 */
export function buildRelease(p: {
  round: string;
  agent: FederatingAgent;
  baseFingerprint: string;
  delta: readonly NamedTensor[];
  clipNorm: number;
  noiseMultiplier: number;
  sampler: GaussianSampler;
}): BuiltRelease {
  if (!(p.noiseMultiplier > 0) || !Number.isFinite(p.noiseMultiplier))
    throw new RangeError(`σ must be a positive finite number, got ${p.noiseMultiplier}`);
  const clipped = clipToNorm(p.delta, p.clipNorm);
  const stddev = p.noiseMultiplier * p.clipNorm;
  let sq = 0;
  const tensors = clipped.tensors.map((t) => {
    const data = new Float32Array(t.data.length);
    for (let i = 0; i < data.length; i++) {
      data[i] = (t.data[i] as number) + p.sampler.standardNormal() * stddev;
      sq += (data[i] as number) * (data[i] as number);
    }
    return tensorToJson({ name: t.name, shape: t.shape, data });
  });
  return {
    release: {
      format: COUNCIL_RELEASE_FORMAT,
      round: p.round,
      agent: p.agent,
      base_fingerprint: p.baseFingerprint,
      mechanism: {
        name: 'gaussian',
        clip_norm: p.clipNorm,
        noise_multiplier: p.noiseMultiplier,
        sample_rate: 1,
        accountant: 'rdp',
      },
      tensors,
    },
    local: {
      normBefore: clipped.normBefore,
      clippedNorm: clipped.normAfter,
      releasedNorm: Math.sqrt(sq),
      clipped: clipped.clipped,
    },
  };
}

/**
 * Reads a release document stored by any kourai version (the privacy ledger keeps them): older
 * documents are upgraded to the current shape — the same noised values, re-spelled, with the
 * base fingerprint the caller knows it was made for (version 2 and 1 did not record it).
 */
export function parseStoredRelease(doc: unknown, opts: { baseFingerprint?: string } = {}): CouncilRelease {
  if (typeof doc !== 'object' || doc === null) return CouncilReleaseSchema.parse(doc);
  const d = doc as { format?: unknown; tensors?: unknown; base_fingerprint?: unknown };
  if (d.format !== FORMAT_V1 && d.format !== FORMAT_V2) return CouncilReleaseSchema.parse(doc);
  let tensors = d.tensors;
  if (d.format === FORMAT_V1 && Array.isArray(d.tensors)) {
    tensors = d.tensors.map((t: { name?: unknown; shape?: unknown; dtype?: unknown; data_b64?: unknown }) => {
      if (t.dtype !== 'float32') throw new RangeError('a version-1 release tensor must be float32');
      return { name: t.name, shape: t.shape, dtype: 'F32', data: t.data_b64 };
    });
  }
  const { format: _f, tensors: _t, ...rest } = doc as Record<string, unknown>;
  return CouncilReleaseSchema.parse({
    format: COUNCIL_RELEASE_FORMAT,
    ...rest,
    base_fingerprint: opts.baseFingerprint ?? d.base_fingerprint,
    tensors,
  });
}

/** The release document as JSON text: exactly the bytes the council client sends as a JSON body. */
export function releaseJson(r: CouncilRelease): string {
  return JSON.stringify(r);
}

/**
 * The release as a safetensors body (for large adapters: no base64 third). The envelope — every
 * field but the tensors — travels as JSON under `__metadata__["kourai.release"]`; nothing else is
 * in the metadata but the data section's sha256 the writer records. Decoding it gives back the
 * same document.
 */
export const RELEASE_METADATA_KEY = 'kourai.release';

export function releaseToSafetensors(r: CouncilRelease): Buffer {
  const { tensors, ...envelope } = r;
  return writeSafetensors(tensors.map(tensorFromJson), { [RELEASE_METADATA_KEY]: JSON.stringify(envelope) });
}

/** Parses a safetensors release body; SafetensorsError (exit 5) names what is wrong. */
export function releaseFromSafetensors(bytes: Uint8Array): CouncilRelease {
  const contents = readSafetensors(bytes);
  return releaseFromParts(
    contents.metadata,
    contents.tensors.map((t) => {
      if (!(t.data instanceof Float32Array))
        throw new SafetensorsError(`tensor "${t.name}": a release holds F32 tensors only`);
      return tensorToJson(t as NamedTensor);
    }),
  );
}

/**
 * A release from a safetensors body's `__metadata__` (without the data digest) and its tensors
 * (F32, in data order): the checks of releaseFromSafetensors on what is not tensor bytes. A body
 * read as it arrives passes tensors whose `data` is "" (the bytes are checked as they stream).
 */
export function releaseFromParts(metadata: Record<string, string>, tensors: TensorJson[]): CouncilRelease {
  const extra = Object.keys(metadata).filter((k) => k !== RELEASE_METADATA_KEY);
  if (extra.length > 0)
    throw new SafetensorsError(
      `a release carries nothing but "${RELEASE_METADATA_KEY}" in __metadata__; found ${extra.map((k) => JSON.stringify(k)).join(', ')}`,
    );
  const raw = metadata[RELEASE_METADATA_KEY];
  if (raw === undefined)
    throw new SafetensorsError(`not a release: __metadata__ has no "${RELEASE_METADATA_KEY}" envelope`);
  let envelope: unknown;
  try {
    envelope = JSON.parse(raw);
  } catch {
    throw new SafetensorsError(`the "${RELEASE_METADATA_KEY}" envelope is not valid JSON`);
  }
  if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope) || 'tensors' in envelope) {
    throw new SafetensorsError(`the "${RELEASE_METADATA_KEY}" envelope must be a JSON object without tensors`);
  }
  const parsed = CouncilReleaseSchema.safeParse({ ...envelope, tensors });
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new SafetensorsError(
      `not a valid release: ${issue?.path.join('.') || 'envelope'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}
