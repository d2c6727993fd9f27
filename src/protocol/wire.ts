import { createHash } from 'node:crypto';
import { z } from 'zod';
import { COUNCIL_RELEASE_FORMAT, CouncilReleaseSchema, type CouncilRelease } from '../privacy/release.js';
import { toLE } from '../tensor/float-codec.js';
import { TensorJsonSchema } from '../tensor/json.js';

/**
 * The council protocol, version 2: HTTP + JSON under /v1, shared by the server (src/council) and
 * the client (council-client.ts). Every schema here is the contract; changing one is a breaking
 * change of the protocol (bump the version, keep /v1 answering). Each side refuses the other's
 * version when it differs (`protocol_mismatch`).
 *
 * v2 (2026-11-23): every agent the council accepts has a global from round 0 on — the public
 * initialisation (src/protocol/public-init.ts), published as round 0 — and an update is always the
 * difference from the global the forge trained from, round 1 included (v1 sent the factors
 * themselves in round 1, so clipping shrank the public initialisation with what was learned).
 * Adapter documents carry their digest.
 *
 * Authentication: `Authorization: Bearer <token>` (a per-forge token from
 * `kourai council forge add NAME`). TLS is terminated by a reverse proxy in front of the council.
 *
 * Version: every request but health carries `Kourai-Protocol: <version>` (PROTOCOL_HEADER). The
 * council refuses any other version, before it looks at the token or reads a body (400
 * `protocol_mismatch`, details `{council_protocol, request_protocol, header}`); a request without
 * the header comes from a forge older than the header, i.e. protocol v1, and is refused too. Health
 * answers every client: it is how a client learns the council's version, so the forge refuses a
 * council of another version before it sends anything else.
 *
 * Tensors travel in the one tensor JSON shape of kourai (src/tensor/json.ts):
 * `{name, shape, dtype: "F32", data}` with `data` the canonical base64 of the little-endian
 * float32 values.
 * Every error is `{ "error": { "status", "code", "message", "details"? } }` with a stable `code`.
 */
export const PROTOCOL_VERSION = 2;
/** The request header that carries the client's protocol version (lower case, as Node reads headers). */
export const PROTOCOL_HEADER = 'kourai-protocol';
/**
 * The URL the forge joined the council at, sent with every request: the council derives the
 * forge's council key from it (with the forge's name and registration, round-key.ts) and refuses
 * a release whose round key is not that forge's own.
 */
export const COUNCIL_URL_HEADER = 'kourai-council-url';
/** The version a request without PROTOCOL_HEADER speaks: the header came with v2. */
export const HEADERLESS_PROTOCOL = 1;

export const ROUTES = {
  health: '/v1/health',
  me: '/v1/me',
  layouts: '/v1/layouts',
  currentRound: '/v1/rounds/current',
  round: '/v1/rounds/:round',
  submit: '/v1/rounds/:round/updates/:agent',
  seal: '/v1/rounds/:round/seal',
  aggregate: '/v1/rounds/:round/aggregate/:agent',
  global: '/v1/global/:agent',
  trust: '/v1/trust',
} as const;

export const path = {
  round: (round: number) => `/v1/rounds/${round}`,
  submit: (round: number, agent: string) => `/v1/rounds/${round}/updates/${encodeURIComponent(agent)}`,
  seal: (round: number) => `/v1/rounds/${round}/seal`,
  aggregate: (round: number, agent: string) => `/v1/rounds/${round}/aggregate/${encodeURIComponent(agent)}`,
  global: (agent: string) => `/v1/global/${encodeURIComponent(agent)}`,
};

/**
 * Machine-readable error codes and the HTTP status each one comes with. Every error body the
 * council sends — from a route, from the HTTP layer (malformed requests, oversized headers or
 * URLs) or from a timeout — has this shape and one of these codes.
 */
export const ERROR_STATUS = {
  /** The request could not be parsed as HTTP. */
  bad_request: 400,
  /** The request's Kourai-Protocol header is absent (v1), another version, or not a version. */
  protocol_mismatch: 400,
  invalid_body: 400,
  unauthorized: 401,
  forge_exiled: 403,
  /** The forge was not sampled into this round's cohort: it sends nothing until the next round. */
  not_in_cohort: 403,
  /** The operator revoked this forge's token (`kourai council forge revoke`). */
  forge_revoked: 403,
  not_found: 404,
  round_not_found: 404,
  unknown_agent: 404,
  no_aggregate: 404,
  no_global: 404,
  /** The body stopped arriving (after upload_grace, at upload_rate) or did not arrive within upload_grace + size / upload_rate. */
  request_timeout: 408,
  duplicate_submission: 409,
  late_submission: 409,
  /** Another forge already sent these exact bytes for this agent and round. */
  replayed_release: 409,
  /** An upload must declare its size (Content-Length). */
  length_required: 411,
  payload_too_large: 413,
  uri_too_long: 414,
  bond_only_agent: 422,
  /** The council has no adapter layout configured for the agent. */
  agent_not_configured: 422,
  base_fingerprint_mismatch: 422,
  /** The declared clip_norm or noise_multiplier is outside the round's privacy policy. */
  privacy_policy_violation: 422,
  tensor_names_mismatch: 422,
  tensor_shape_mismatch: 422,
  tensor_data_length: 422,
  /** A tensor's data is not canonical base64. */
  invalid_base64: 422,
  non_finite: 422,
  norm_exceeds_clip: 422,
  /** A release's round key names another round than the URL's. */
  round_mismatch: 422,
  /** A release's round key is not the sending forge's own (or the Kourai-Council-Url header is missing). */
  foreign_round_key: 422,
  /** This forge already has max_uploads_per_forge uploads in progress (Retry-After). */
  too_many_uploads: 429,
  headers_too_large: 431,
  internal: 500,
  /** The council is reading max_in_flight uploads already (Retry-After). */
  busy: 503,
  /** The council cannot read its state (health answers this too). */
  unavailable: 503,
} as const;
export type ErrorCode = keyof typeof ERROR_STATUS;

export const ErrorBodySchema = z.object({
  error: z.object({
    status: z.number().int(),
    code: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()).optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

const finite = z.number().refine(Number.isFinite, 'must be a finite number');

/** A tensor on the wire: the shared tensor JSON shape; a council update has 1–8 dimensions, none empty. */
export const WireTensorSchema = TensorJsonSchema.extend({ shape: z.array(z.number().int().min(1)).min(1).max(8) });
export type WireTensor = z.infer<typeof WireTensorSchema>;

/** PUT /v1/rounds/:round/updates/:agent — one agent's council update for the round. */
export const SubmissionSchema = z.object({
  /** Fingerprint of the base model the adapter was trained on (must be one the council accepts). */
  base_fingerprint: z.string().min(1).max(256),
  /**
   * What the forge applied before sending: the update (all tensors together) clipped to L2 norm
   * `clip_norm` = S, then N(0, σ²S²) noise added to every coordinate, σ = `noise_multiplier`.
   */
  privacy: z.object({
    clip_norm: finite.pipe(z.number().positive()),
    noise_multiplier: finite.pipe(z.number().min(0)),
  }),
  /** Optional (noised) sample count, used only when the council weighs by counts. */
  weight: finite.pipe(z.number().positive()).optional(),
  /** The update: the difference from the global adapter the forge trained from (round 0's is the public initialisation). */
  tensors: z.array(WireTensorSchema).min(1).max(4096),
  /**
   * A release document's round key (`<council key>#<round>`, round-key.ts): present when the body
   * is a release. Its round must be the URL's and its council key the sending forge's own.
   */
  round_key: z.string().min(1).max(256).optional(),
});
export type Submission = z.infer<typeof SubmissionSchema>;

/**
 * A submission body may also be the forge's release document itself (src/privacy/release.ts,
 * `kourai.council-release/3`: exactly what `kourai privacy release` writes), as JSON, or as a
 * safetensors body (`Content-Type: application/octet-stream`) whose `__metadata__` carries the
 * envelope under "kourai.release" — large adapters then skip base64's third. Every form becomes
 * the same Submission (and so the same digest: a retry in another form is the same submission).
 */
export const SAFETENSORS_BODY_TYPE = 'application/octet-stream';

/** The Submission a release stands for; its agent must be the route's. */
export function submissionFromRelease(r: CouncilRelease, agent: string): Submission {
  if (r.agent !== agent) {
    throw new z.ZodError([
      {
        code: 'custom',
        path: ['agent'],
        message: `the release is ${r.agent}'s but was sent to ${agent}'s route`,
        input: r.agent,
      },
    ]);
  }
  return SubmissionSchema.parse({
    base_fingerprint: r.base_fingerprint,
    privacy: { clip_norm: r.mechanism.clip_norm, noise_multiplier: r.mechanism.noise_multiplier },
    tensors: r.tensors,
    round_key: r.round,
  });
}

/** A parsed JSON body (a Submission or a release document) -> the Submission; ZodError when neither. */
export function submissionFromBody(body: unknown, agent: string): Submission {
  if (typeof body === 'object' && body !== null && 'format' in body) {
    const format = (body as { format: unknown }).format;
    if (format !== COUNCIL_RELEASE_FORMAT) {
      throw new z.ZodError([
        {
          code: 'custom',
          path: ['format'],
          message: `unsupported release format ${JSON.stringify(format)} (the council reads ${COUNCIL_RELEASE_FORMAT})`,
          input: format,
        },
      ]);
    }
    return submissionFromRelease(CouncilReleaseSchema.parse(body), agent);
  }
  return SubmissionSchema.parse(body);
}

export const ReceiptSchema = z.object({
  round: z.number().int(),
  forge: z.string(),
  agent: z.string(),
  /** sha256 of the submission's content (fingerprint, privacy, weight, names, shapes, bytes). */
  digest: z.string(),
  accepted_at: z.string(),
  coords: z.number().int(),
  norm: z.number(),
  norm_bound: z.number(),
  /** The round key of the release accepted (absent for a plain submission). */
  round_key: z.string().optional(),
});
export type Receipt = z.infer<typeof ReceiptSchema>;

export const SealReceiptSchema = z.object({
  round: z.number().int(),
  forge: z.string(),
  sealed_at: z.string(),
  agents: z.array(z.string()),
});
export type SealReceipt = z.infer<typeof SealReceiptSchema>;

export const ROUND_STATES = ['open', 'closing', 'aggregated'] as const;

export const StrategyInfoSchema = z.object({
  strategy: z.string(),
  byzantine: z.number().int(),
  selection: z.string().nullable(),
  min_updates: z.number().int(),
  /** The server's step: the new global is the previous one plus server_lr × the aggregate update (absent: 1). */
  server_lr: z.number().optional(),
});

export const AgentOutcomeSchema = z.object({
  agent: z.string(),
  updates: z.number().int(),
  /** Whether a new global adapter came out of this round for the agent. */
  aggregated: z.boolean(),
  /** Why not (e.g. too few updates for the Byzantine bound). */
  skipped_reason: z.string().nullable(),
  used: z.number().int(),
  /** Whether the caller's update was among those aggregated (null: the caller sent none). */
  yours_used: z.boolean().nullable(),
});

/** A closed range [min, max] (an exact value when min = max). */
export const RangeSchema = z.object({ min: z.number(), max: z.number() });

/**
 * The privacy policy the council sets for a round — the council, never a forge: `clip_norm` (S)
 * and `noise_multiplier` (σ) are what a forge that follows the council uses (clip the whole update
 * to S, add N(0, σ²S²) to every coordinate, declare both); `accepted` are the ranges every
 * update's declared S and σ must lie in (S and σ above are their largest values), else 422
 * `privacy_policy_violation`. The council then refuses any update whose norm exceeds
 * S·(1 + σ(√d + tail_margin))·(1 + 10⁻⁶) for its declared S and σ (422 `norm_exceeds_clip`).
 * A forge clips and noises as published and charges each release to its Whisper Limit at that σ;
 * a σ its budget cannot afford means it sends nothing and says why (src/privacy/council-policy.ts).
 */
export const PrivacyPolicySchema = z.object({
  clip_norm: finite.pipe(z.number().positive()),
  noise_multiplier: finite.pipe(z.number().min(0)),
  accepted: z.object({ clip_norm: RangeSchema, noise_multiplier: RangeSchema }),
  tail_margin: z.number(),
  /**
   * Present when the council derives σ from a target ε (src/privacy/council-sigma.ts): the target,
   * the σ the observer's accountant needs, the σ at which one release stays within a forge's
   * privacy floor, and which of the two bound.
   */
  derivation: z
    .object({
      target_epsilon: z.number(),
      rounds: z.number().int(),
      delta: z.number(),
      sample_rate: z.number(),
      agent_epsilon: z.number(),
      observer_sigma: z.number(),
      floor_sigma: z.number(),
      release_cap: z.number(),
      release_epsilon: z.number(),
      binding: z.enum(['observer', 'floor']),
    })
    .optional(),
});
export type PrivacyPolicy = z.infer<typeof PrivacyPolicySchema>;

export const RoundStatusSchema = z.object({
  round: z.number().int(),
  state: z.enum(ROUND_STATES),
  opened_at: z.string(),
  deadline: z.string(),
  closed_at: z.string().nullable(),
  close_reason: z.enum(['min_forges', 'deadline']).nullable(),
  aggregated_at: z.string().nullable(),
  strategy: StrategyInfoSchema,
  min_forges: z.number().int(),
  forges_submitted: z.number().int(),
  forges_sealed: z.number().int(),
  /** Agents the council accepts updates for (those it has an adapter layout for). */
  agents: z.array(z.string()),
  accepted_base_fingerprints: z.array(z.string()),
  /** The round's privacy policy (frozen when the round opened): every update is checked against it. */
  privacy_policy: PrivacyPolicySchema,
  /**
   * The global each accepted agent starts from this round: agent -> the round that produced it;
   * 0 = the public initialisation (`public_init`), served like any version.
   */
  globals: z.record(z.string(), z.number().int()),
  /** How the round-0 globals are derived (src/protocol/public-init.ts): anyone can recompute them. */
  public_init: z.object({ scheme: z.string(), seed: z.number().int() }),
  you: z.object({
    forge: z.string(),
    submitted: z.array(z.string()),
    sealed: z.boolean(),
    trust: z.number(),
    exiled: z.boolean(),
    /** Per submitted agent, the round key of the release the council holds (absent for plain submissions and older councils). */
    round_keys: z.record(z.string(), z.string()).optional(),
  }),
  outcomes: z.array(AgentOutcomeSchema),
  /** Forges exiled when this round was aggregated (the Stoa Falls), this forge included. Absent from older councils. */
  exiles: z.array(z.object({ forge: z.string(), round: z.number().int() })).optional(),
  /**
   * The forges sampled for this round (src/protocol/cohort.ts, by a seed only the council knows);
   * null when every forge takes part; absent from older councils. A forge not in it sends nothing
   * this round and looks again after `next_check` (the round's deadline) or once the round closed.
   */
  cohort: z
    .object({
      size: z.number().int(),
      forges: z.array(z.string()),
      you: z.boolean(),
      next_check: z.string(),
    })
    .nullable()
    .optional(),
});
export type RoundStatus = z.infer<typeof RoundStatusSchema>;

export const AdapterSchema = z.object({
  agent: z.string(),
  /** The round whose aggregation produced this adapter; 0 = the public initialisation. */
  round: z.number().int(),
  /** The aggregation strategy, or `public-init` for round 0. */
  strategy: z.string(),
  /** adapterDigest of the tensors: a forge checks what it downloaded against it. */
  digest: z.string(),
  tensors: z.array(WireTensorSchema),
});
export type Adapter = z.infer<typeof AdapterSchema>;

/**
 * sha256 (hex) over an adapter's tensors in order: for each, `[name, shape, "F32"]` as JSON and a
 * newline, then its float32 little-endian bytes. The same numbers give the same digest on every
 * machine (the council computes it from its stored chunks, a forge from what it decoded).
 */
export function adapterDigest(
  tensors: readonly { name: string; shape: readonly number[]; data: Float32Array }[],
): string {
  const h = createHash('sha256');
  for (const t of tensors) {
    h.update(`${JSON.stringify([t.name, t.shape, 'F32'])}\n`);
    h.update(toLE(t.data));
  }
  return h.digest('hex');
}

export const TrustSchema = z.object({
  forge: z.string(),
  trust: z.number(),
  rounds_scored: z.number().int(),
  exiled: z.boolean(),
  exiled_round: z.number().int().nullable(),
  threshold: z.number(),
  warmup: z.number().int(),
  history: z.array(z.object({ round: z.number().int(), similarity: z.number(), trust: z.number() })),
});
export type Trust = z.infer<typeof TrustSchema>;

export const MeSchema = z.object({
  forge: z.string(),
  created_at: z.string(),
  trust: z.number(),
  exiled: z.boolean(),
  protocol: z.number().int(),
});
export type Me = z.infer<typeof MeSchema>;

/** GET /v1/layouts — the adapter layout the council accepts for each agent (configured by the operator). */
export const LayoutsSchema = z.object({
  layouts: z.record(z.string(), z.array(z.object({ name: z.string(), shape: z.array(z.number().int()) }))),
});
export type Layouts = z.infer<typeof LayoutsSchema>;

export const HealthSchema = z.object({
  ok: z.literal(true),
  protocol: z.number().int(),
  version: z.string().max(128),
  round: z.number().int().nullable(),
  /** Where the council keeps its state and whether it answered (absent from older councils). */
  database: z.object({ backend: z.enum(['sqlite', 'postgres']), ok: z.boolean() }).optional(),
  /** This process: its id among the processes sharing the database, and what it is doing. */
  process: z.object({ id: z.string().max(256), role: z.string().max(256) }).optional(),
});
export type Health = z.infer<typeof HealthSchema>;
