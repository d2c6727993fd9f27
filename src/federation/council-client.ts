import type { z } from 'zod';
import { ExitCode, InvalidDataError, KouraiError, NetworkError, type ExitCodeValue } from '../errors.js';
import {
  adapterDigest,
  AdapterSchema,
  ErrorBodySchema,
  HealthSchema,
  LayoutsSchema,
  MeSchema,
  path,
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
  ReceiptSchema,
  ROUTES,
  RoundStatusSchema,
  SAFETENSORS_BODY_TYPE,
  SealReceiptSchema,
  TrustSchema,
  type Health,
  type Me,
  type Receipt,
  type RoundStatus,
  type SealReceipt,
  type Submission,
  type Trust,
} from '../protocol/wire.js';
import { releaseJson, releaseToSafetensors, type CouncilRelease } from '../privacy/release.js';
import { tensorFromJson, tensorToJson } from '../tensor/json.js';
import type { NamedTensor, TensorSpec } from '../tensor/tensor.js';
import { abortableSleep } from '../runtime/cancel.js';

/**
 * A small typed client for the council protocol (v2), for the forge side of a federation round:
 *
 *   const council = new CouncilClient({ url, token });
 *   await council.me();                                  // token valid? exiled? revoked (403)?
 *   const round = await council.currentRound();          // number, deadline, globals to start from,
 *                                                        // agents accepted, privacy policy (S, σ ranges)
 *   const layouts = await council.layouts();             // tensor names/shapes per agent (must match)
 *   const global = await council.globalAdapter('metis'); // round 0 (the public init) before any aggregate
 *   await council.submit(round.round, 'metis', { tensors, baseFingerprint, clipNorm, noiseMultiplier });
 *   await council.seal(round.round);                     // my updates for this round are complete
 *   const done = await council.waitForRound(round.round); // polls until aggregated
 *   const next = await council.aggregate(round.round, 'metis');
 *   const { trust, exiled } = await council.trust();
 *
 * Every request says the client's protocol version (`Kourai-Protocol`); a council of another version
 * refuses it (400 protocol_mismatch), which leaves here as exit 9 naming both versions and the side
 * to upgrade.
 *
 * Submissions are idempotent on the server, so `submit` and `seal` retry network failures and
 * 5xx/503/429 answers with the same body (Retry-After, else exponential backoff); a retry after a
 * timeout gets the original answer. Refusals throw CouncilRequestError with the server's machine
 * code (ERROR_STATUS in protocol.ts). Before submitting, check the update against the round's
 * `privacy` (clip_norm and noise_multiplier must lie in its ranges, else 422
 * privacy_policy_violation) and `layouts()` (else 422 tensor_names_mismatch/tensor_shape_mismatch).
 */
export interface CouncilClientOptions {
  /** Base URL, e.g. https://council.example.org (TLS is the reverse proxy's job). */
  url: string;
  token: string;
  /** Per-request timeout (default 60 s). */
  timeoutMs?: number;
  /** Retries of idempotent requests after network errors or 5xx (default 4). */
  retries?: number;
  /** Base delay of the exponential backoff (default 250 ms). */
  backoffMs?: number;
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

/** The council refused or failed a request. `code` is the protocol's machine code. */
export class CouncilRequestError extends KouraiError {
  readonly status: number;
  readonly councilCode: string;
  readonly details: Record<string, unknown> | undefined;
  constructor(status: number, councilCode: string, message: string, details?: Record<string, unknown>, hint?: string) {
    super(`council: ${message} (${status} ${councilCode})`, { exitCode: exitCodeFor(status, councilCode), code: `council_${councilCode}`, ...(hint ? { hint } : {}) });
    this.status = status;
    this.councilCode = councilCode;
    this.details = details;
  }
}

function exitCodeFor(status: number, councilCode: string): ExitCodeValue {
  // Another protocol version is the same failure whichever side notices it (join/round read health).
  if (councilCode === 'protocol_mismatch') return ExitCode.network;
  if (status === 404) return ExitCode.notFound;
  if (status === 409) return ExitCode.conflict;
  if (status === 400 || status === 413 || status === 422) return ExitCode.invalidData;
  return ExitCode.network;
}

export interface UpdateToSubmit {
  tensors: readonly NamedTensor[];
  baseFingerprint: string;
  /** The clip S applied to the whole update. */
  clipNorm: number;
  /** σ: the noise added was N(0, σ²S²) per coordinate. */
  noiseMultiplier: number;
  /** Optional noised sample count. */
  weight?: number;
}

export interface DownloadedAdapter {
  agent: string;
  round: number;
  strategy: string;
  tensors: NamedTensor[];
}

export class CouncilClient {
  private readonly base: string;
  private readonly opts: Required<Pick<CouncilClientOptions, 'timeoutMs' | 'retries' | 'backoffMs'>> & CouncilClientOptions;

  constructor(opts: CouncilClientOptions) {
    this.base = opts.url.replace(/\/+$/, '');
    this.opts = { timeoutMs: 60_000, retries: 4, backoffMs: 250, ...opts };
  }

  health(): Promise<Health> {
    return this.request('GET', ROUTES.health, HealthSchema, { auth: false, retry: true });
  }

  me(): Promise<Me> {
    return this.request('GET', ROUTES.me, MeSchema, { retry: true });
  }

  /** The adapter layout (tensor names and shapes, in order) the council accepts, per agent. */
  async layouts(): Promise<Record<string, TensorSpec[]>> {
    return (await this.request('GET', ROUTES.layouts, LayoutsSchema, { retry: true })).layouts;
  }

  currentRound(): Promise<RoundStatus> {
    return this.request('GET', ROUTES.currentRound, RoundStatusSchema, { retry: true });
  }

  round(round: number): Promise<RoundStatus> {
    return this.request('GET', path.round(round), RoundStatusSchema, { retry: true });
  }

  /** The newest global council adapter of an agent (round 0: its public initialisation); null when the council holds none for it. */
  async globalAdapter(agent: string): Promise<DownloadedAdapter | null> {
    try {
      return decodeAdapter(await this.request('GET', path.global(agent), AdapterSchema, { retry: true }));
    } catch (err) {
      if (err instanceof CouncilRequestError && err.councilCode === 'no_global') return null;
      throw err;
    }
  }

  /** The adapter a given round produced for an agent. */
  async aggregate(round: number, agent: string): Promise<DownloadedAdapter> {
    return decodeAdapter(await this.request('GET', path.aggregate(round, agent), AdapterSchema, { retry: true }));
  }

  /** Sends one agent's update (the difference from the global adapter it trained from; round 0's is the public initialisation). */
  submit(round: number, agent: string, update: UpdateToSubmit): Promise<Receipt> {
    const body: Submission = {
      base_fingerprint: update.baseFingerprint,
      privacy: { clip_norm: update.clipNorm, noise_multiplier: update.noiseMultiplier },
      ...(update.weight !== undefined ? { weight: update.weight } : {}),
      tensors: update.tensors.map(tensorToJson),
    };
    return this.request('PUT', path.submit(round, agent), ReceiptSchema, { body: JSON.stringify(body), retry: true });
  }

  /**
   * Sends a release document (src/privacy/release.ts) as it is: the JSON text `privacy release`
   * writes, byte for byte, or the same release as a safetensors body (no base64 third).
   */
  submitRelease(round: number, release: CouncilRelease, opts: { encoding?: 'json' | 'safetensors' } = {}): Promise<Receipt> {
    const safetensors = opts.encoding === 'safetensors';
    return this.request('PUT', path.submit(round, release.agent), ReceiptSchema, {
      body: safetensors ? releaseToSafetensors(release) : releaseJson(release),
      contentType: safetensors ? SAFETENSORS_BODY_TYPE : 'application/json',
      retry: true,
    });
  }

  /** Declares the forge's updates for the round complete (the round closes when enough forges have). */
  seal(round: number): Promise<SealReceipt> {
    return this.request('POST', path.seal(round), SealReceiptSchema, { body: '{}', retry: true });
  }

  trust(): Promise<Trust> {
    return this.request('GET', ROUTES.trust, TrustSchema, { retry: true });
  }

  /** Polls the round's status until it is aggregated (or the signal aborts). */
  async waitForRound(round: number, opts: { pollMs?: number; signal?: AbortSignal } = {}): Promise<RoundStatus> {
    const poll = opts.pollMs ?? 5000;
    for (;;) {
      const s = await this.round(round);
      if (s.state === 'aggregated') return s;
      await abortableSleep(poll, opts.signal ?? this.opts.signal);
    }
  }

  private async request<S extends z.ZodType>(method: string, route: string, schema: S, o: { body?: string | Uint8Array; contentType?: string; auth?: boolean; retry?: boolean }): Promise<z.output<S>> {
    const doFetch = this.opts.fetch ?? fetch;
    let attempt = 0;
    for (;;) {
      let res: Response;
      try {
        const signals = [AbortSignal.timeout(this.opts.timeoutMs), ...(this.opts.signal ? [this.opts.signal] : [])];
        res = await doFetch(`${this.base}${route}`, {
          method,
          headers: {
            accept: 'application/json',
            [PROTOCOL_HEADER]: String(PROTOCOL_VERSION),
            ...(o.body !== undefined ? { 'content-type': o.contentType ?? 'application/json' } : {}),
            ...(o.auth === false ? {} : { authorization: `Bearer ${this.opts.token}` }),
          },
          ...(o.body !== undefined ? { body: o.body } : {}),
          signal: AbortSignal.any(signals),
        });
      } catch (err) {
        if (this.opts.signal?.aborted) throw err;
        if (o.retry && attempt < this.opts.retries) {
          await abortableSleep(this.opts.backoffMs * 2 ** attempt++, this.opts.signal);
          continue;
        }
        throw new NetworkError(`council: cannot reach ${this.base}: ${(err as Error).message}`, 'check the council URL and that the council is running', err);
      }
      const text = await res.text();
      if (res.ok) {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          throw new CouncilRequestError(res.status, 'bad_response', `${method} ${route} answered something that is not JSON`);
        }
        const parsed = schema.safeParse(json);
        if (!parsed.success) throw new CouncilRequestError(res.status, 'bad_response', `${method} ${route} answered an unexpected document: ${parsed.error.issues[0]?.message ?? ''}`);
        return parsed.data;
      }
      if (o.retry && (res.status >= 500 || res.status === 429) && attempt < this.opts.retries) {
        const after = Number(res.headers.get('retry-after'));
        await abortableSleep(Number.isFinite(after) && after > 0 ? after * 1000 : this.opts.backoffMs * 2 ** attempt, this.opts.signal);
        attempt++;
        continue;
      }
      let err: { code: string; message: string; details?: Record<string, unknown> } = { code: `http_${res.status}`, message: `${method} ${route} failed with HTTP ${res.status}` };
      try {
        const body = ErrorBodySchema.safeParse(JSON.parse(text));
        if (body.success) err = body.data.error;
      } catch {
        // not JSON: keep the generic message
      }
      if (err.code === 'protocol_mismatch') throw protocolRefused(this.base, res.status, err);
      throw new CouncilRequestError(res.status, err.code, err.message, err.details);
    }
  }
}

/** The council refused this request's protocol version: say both versions and which side to upgrade. */
function protocolRefused(where: string, status: number, err: { message: string; details?: Record<string, unknown> }): CouncilRequestError {
  const num = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);
  const council = num(err.details?.council_protocol);
  const sent = num(err.details?.request_protocol) ?? PROTOCOL_VERSION;
  const message = council === null ? err.message : `the council at ${where} speaks protocol v${council} and refused this request's v${sent}`;
  const hint = council !== null && council < sent ? 'the council runs an older kourai: ask its operator to upgrade' : 'upgrade kourai on this forge';
  return new CouncilRequestError(status, 'protocol_mismatch', message, err.details, hint);
}

/** The adapter's tensors, checked against the digest the council published (InvalidDataError when they differ). */
export function decodeAdapter(a: z.infer<typeof AdapterSchema>): DownloadedAdapter {
  const tensors = a.tensors.map(tensorFromJson);
  const digest = adapterDigest(tensors);
  if (digest !== a.digest) throw new InvalidDataError(`the council's ${a.agent} adapter of round ${a.round} does not match its published digest (${a.digest.slice(0, 12)}…, got ${digest.slice(0, 12)}…): nothing was used`);
  return { agent: a.agent, round: a.round, strategy: a.strategy, tensors };
}
