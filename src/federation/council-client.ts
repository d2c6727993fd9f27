import type { z } from 'zod';
import {
  CancelledError,
  ExitCode,
  InvalidDataError,
  KouraiError,
  NetworkError,
  type ExitCodeValue,
} from '../errors.js';
import {
  adapterDigest,
  AdapterSchema,
  COUNCIL_URL_HEADER,
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
  /** Per-request deadline: the whole answer, first byte to last, within it (default 30 s; adapters get more by size). */
  timeoutMs?: number;
  /** Retries of idempotent requests after network errors or 5xx (default 4). */
  retries?: number;
  /** Base delay of the exponential backoff (default 250 ms). */
  backoffMs?: number;
  fetch?: typeof fetch;
  signal?: AbortSignal;
  /** No retry of a request starts once this long has passed since its first attempt (default 60 s). */
  retryForMs?: number;
  /** Called with a line every `waitNoticeMs` while a request waits for its answer (progress for stderr). */
  onWait?: (line: string) => void;
  waitNoticeMs?: number;
  /** Sends the URL this client speaks to in Kourai-Council-Url (the council binds releases with it). */
  councilUrlHeader?: boolean;
}

/** The council refused or failed a request. `code` is the protocol's machine code. */
export class CouncilRequestError extends KouraiError {
  readonly status: number;
  readonly councilCode: string;
  readonly details: Record<string, unknown> | undefined;
  constructor(status: number, councilCode: string, message: string, details?: Record<string, unknown>, hint?: string) {
    super(`council: ${message} (${status} ${councilCode})`, {
      exitCode: exitCodeFor(status, councilCode),
      code: `council_${councilCode}`,
      ...(hint ? { hint } : {}),
    });
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

/** What the forge knows an adapter must look like (its own layout for the agent): bounds the answer's size. */
export interface AdapterExpectation {
  layout: readonly TensorSpec[];
}

export interface DownloadedAdapter {
  agent: string;
  round: number;
  strategy: string;
  tensors: NamedTensor[];
}

export class CouncilClient {
  private readonly base: string;
  private readonly opts: Required<
    Pick<CouncilClientOptions, 'timeoutMs' | 'retries' | 'backoffMs' | 'retryForMs' | 'waitNoticeMs'>
  > &
    CouncilClientOptions;

  constructor(opts: CouncilClientOptions) {
    this.base = opts.url.replace(/\/+$/, '');
    this.opts = {
      timeoutMs: 30_000,
      retries: 4,
      backoffMs: 250,
      retryForMs: 60_000,
      waitNoticeMs: 5000,
      councilUrlHeader: true,
      ...opts,
    };
  }

  health(): Promise<Health> {
    return this.request('GET', ROUTES.health, HealthSchema, {
      auth: false,
      retry: true,
      maxBytes: ANSWER_LIMITS.small,
    });
  }

  me(): Promise<Me> {
    return this.request('GET', ROUTES.me, MeSchema, { retry: true, maxBytes: ANSWER_LIMITS.small });
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
  async globalAdapter(agent: string, expect?: AdapterExpectation): Promise<DownloadedAdapter | null> {
    try {
      return decodeAdapter(
        await this.request('GET', path.global(agent), AdapterSchema, {
          retry: true,
          maxBytes: expect ? adapterLimit(expect.layout) : ANSWER_LIMITS.adapter,
        }),
      );
    } catch (err) {
      if (err instanceof CouncilRequestError && err.councilCode === 'no_global') return null;
      throw err;
    }
  }

  /** The adapter a given round produced for an agent. */
  async aggregate(round: number, agent: string, expect?: AdapterExpectation): Promise<DownloadedAdapter> {
    return decodeAdapter(
      await this.request('GET', path.aggregate(round, agent), AdapterSchema, {
        retry: true,
        maxBytes: expect ? adapterLimit(expect.layout) : ANSWER_LIMITS.adapter,
      }),
    );
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
  submitRelease(
    round: number,
    release: CouncilRelease,
    opts: { encoding?: 'json' | 'safetensors' } = {},
  ): Promise<Receipt> {
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

  private async request<S extends z.ZodType>(
    method: string,
    route: string,
    schema: S,
    o: { body?: string | Uint8Array; contentType?: string; auth?: boolean; retry?: boolean; maxBytes?: number },
  ): Promise<z.output<S>> {
    const maxBytes = o.maxBytes ?? ANSWER_LIMITS.document;
    let attempt = 0;
    const began = Date.now();
    for (;;) {
      let answer: { status: number; headers: Headers; text: string };
      try {
        answer = await this.exchange(method, route, o, maxBytes);
      } catch (err) {
        if (!(err instanceof NetworkError) || err.code !== 'network') throw err;
        if (o.retry && attempt < this.opts.retries && Date.now() - began < this.opts.retryForMs) {
          await this.pause(this.opts.backoffMs * 2 ** attempt++, method, route);
          continue;
        }
        throw err;
      }
      const { status, text } = answer;
      if (status >= 200 && status < 300) {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          throw new CouncilRequestError(
            status,
            'bad_response',
            `${method} ${route} answered something that is not JSON`,
          );
        }
        const parsed = schema.safeParse(json);
        if (!parsed.success)
          throw new CouncilRequestError(
            status,
            'bad_response',
            `${method} ${route} answered an unexpected document: ${parsed.error.issues[0]?.message ?? ''}`,
          );
        return parsed.data;
      }
      if (
        o.retry &&
        (status >= 500 || status === 429) &&
        attempt < this.opts.retries &&
        Date.now() - began < this.opts.retryForMs
      ) {
        const after = Number(answer.headers.get('retry-after'));
        await this.pause(
          Number.isFinite(after) && after > 0 ? Math.min(after, 60) * 1000 : this.opts.backoffMs * 2 ** attempt,
          method,
          route,
        );
        attempt++;
        continue;
      }
      let err: { code: string; message: string; details?: Record<string, unknown> } = {
        code: `http_${status}`,
        message: `${method} ${route} failed with HTTP ${status}`,
      };
      try {
        const body = ErrorBodySchema.safeParse(JSON.parse(text));
        if (body.success) err = body.data.error;
      } catch {
        // not JSON: keep the generic message
      }
      if (err.code === 'protocol_mismatch') throw protocolRefused(this.base, status, err);
      throw new CouncilRequestError(status, err.code, err.message, err.details);
    }
  }

  private async pause(ms: number, method: string, route: string): Promise<void> {
    try {
      await abortableSleep(ms, this.opts.signal);
    } catch {
      throw new CancelledError(`cancelled while waiting to ask the council again (${method} ${route})`);
    }
  }

  /**
   * One request and its whole answer, bounded: redirects are never followed (the protocol URL is
   * exactly the one joined); the answer must be complete within the request's deadline (time to
   * the first byte and every byte after it) and hold at most `maxBytes`, else nothing of it is
   * kept. While it waits, a line is said every `waitNoticeMs`.
   */
  private async exchange(
    method: string,
    route: string,
    o: { body?: string | Uint8Array; contentType?: string; auth?: boolean },
    maxBytes: number,
  ): Promise<{ status: number; headers: Headers; text: string }> {
    const doFetch = this.opts.fetch ?? fetch;
    const what = `${method} ${route}`;
    // Large answers (adapters) get time in proportion to their size on top of the deadline.
    const deadlineMs =
      this.opts.timeoutMs + (maxBytes > ANSWER_LIMITS.document ? (maxBytes / MIN_ANSWER_RATE) * 1000 : 0);
    const stop = new AbortController();
    let why: 'deadline' | 'cancelled' | null = null;
    const onAbort = (): void => {
      why ??= 'cancelled';
      stop.abort();
    };
    this.opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (this.opts.signal?.aborted) onAbort();
    const timer = setTimeout(() => {
      why ??= 'deadline';
      stop.abort();
    }, deadlineMs);
    const started = Date.now();
    const notice = this.opts.onWait
      ? setInterval(
          () =>
            this.opts.onWait?.(
              `waiting for the council (${what}): no complete answer after ${Math.round((Date.now() - started) / 1000)} s (gives up after ${fmtSeconds(deadlineMs)})`,
            ),
          Math.min(this.opts.waitNoticeMs, Math.max(250, deadlineMs / 3)),
        )
      : null;
    let received = 0;
    try {
      const res = await doFetch(`${this.base}${route}`, {
        method,
        redirect: 'manual',
        headers: {
          accept: 'application/json',
          [PROTOCOL_HEADER]: String(PROTOCOL_VERSION),
          ...(o.body !== undefined ? { 'content-type': o.contentType ?? 'application/json' } : {}),
          ...(o.auth === false ? {} : { authorization: `Bearer ${this.opts.token}` }),
          ...(this.opts.councilUrlHeader ? { [COUNCIL_URL_HEADER]: this.base } : {}),
        },
        ...(o.body !== undefined ? { body: o.body } : {}),
        signal: stop.signal,
      });
      if (res.status >= 300 && res.status < 400) {
        await res.body?.cancel().catch(() => undefined);
        throw new KouraiError(
          `the council at ${this.base} answered ${res.status} to ${what}, a redirect${redirectTarget(res.headers.get('location'), this.base)}: not followed (kourai speaks only to the URL it joined)`,
          {
            exitCode: ExitCode.network,
            code: 'council_redirect',
            hint: 'if the council moved, ask its operator for the new URL and run kourai federate join --server URL again',
          },
        );
      }
      const declared = Number(res.headers.get('content-length'));
      if (Number.isFinite(declared) && declared > maxBytes) {
        await res.body?.cancel().catch(() => undefined);
        throw tooLarge(this.base, what, maxBytes);
      }
      const chunks: Uint8Array[] = [];
      if (res.body) {
        for await (const value of res.body as unknown as AsyncIterable<Uint8Array>) {
          received += value.byteLength;
          if (received > maxBytes) throw tooLarge(this.base, what, maxBytes); // leaving the loop cancels the body
          chunks.push(value);
        }
      }
      return { status: res.status, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') };
    } catch (err) {
      if (err instanceof KouraiError) throw err;
      if (why === 'cancelled' || this.opts.signal?.aborted)
        throw new CancelledError(`cancelled while waiting for the council (${what})`);
      if (why === 'deadline') {
        const msg =
          received > 0
            ? `did not finish answering within ${fmtSeconds(deadlineMs)} (${received} bytes arrived)`
            : `did not answer within ${fmtSeconds(deadlineMs)}`;
        throw new NetworkError(
          `council: ${this.base} ${msg} (${what})`,
          'check the council URL and that the council is running; --retry-for bounds how long a round keeps trying',
        );
      }
      throw new NetworkError(
        `council: cannot reach ${this.base}: ${messageOf(err)}`,
        'check the council URL and that the council is running',
      );
    } finally {
      clearTimeout(timer);
      if (notice) clearInterval(notice);
      this.opts.signal?.removeEventListener('abort', onAbort);
    }
  }
}

/**
 * The most a council answer may hold, by kind: small documents (health, me, layouts, round
 * status, trust, receipts) and an adapter, whose size follows from its layout (adapterLimit).
 */
export const ANSWER_LIMITS = {
  /** health and me: a few hundred bytes from an honest council. */
  small: 64 * 1024,
  /** round status, trust (its history grows by ~60 bytes a round), layouts, receipts. */
  document: 4 * 1024 * 1024,
  /** An adapter whose layout this forge does not know: the council's default upload limit, in base64. */
  adapter: Math.ceil((64 * 1024 * 1024 * 4) / 3) + 1024 * 1024,
} as const;

/** The slowest large answer waited for, bytes per second (on top of the request deadline). */
export const MIN_ANSWER_RATE = 64 * 1024;

/** An adapter document's largest honest size: its float32 values in base64, plus names, shapes and envelope. */
export function adapterLimit(specs: readonly { name: string; shape: readonly number[] }[]): number {
  const coords = specs.reduce((s, t) => s + t.shape.reduce((a, b) => a * b, 1), 0);
  return 4 * Math.ceil((4 * coords) / 3) + specs.reduce((s, t) => s + t.name.length + 64, 0) + 4096;
}

function tooLarge(base: string, what: string, limit: number): KouraiError {
  return new KouraiError(
    `the council at ${base}: ${what} answered more than ${fmtBytes(limit)} (the most such an answer may hold): nothing of it was kept`,
    {
      exitCode: ExitCode.network,
      code: 'council_answer_too_large',
      hint: 'the council (or something in front of it) is broken or hostile: tell its operator',
    },
  );
}

function fmtBytes(n: number): string {
  return n >= 1024 * 1024
    ? `${Number((n / 1024 / 1024).toPrecision(3))} MiB`
    : `${Number((n / 1024).toPrecision(3))} KiB`;
}

function fmtSeconds(ms: number): string {
  return `${Number((ms / 1000).toPrecision(3))} s`;
}

/** Where a redirect pointed, as an origin only (a path could carry anything). */
function redirectTarget(location: string | null, base: string): string {
  if (!location) return '';
  try {
    return ` to ${new URL(location, base).origin}`;
  } catch {
    return '';
  }
}

function messageOf(err: unknown): string {
  try {
    const m =
      (err as { cause?: { message?: unknown }; message?: unknown }).cause?.message ??
      (err as { message?: unknown }).message;
    return typeof m === 'string' ? m : String(err);
  } catch {
    return 'request failed';
  }
}

/** The council refused this request's protocol version: say both versions and which side to upgrade. */
function protocolRefused(
  where: string,
  status: number,
  err: { message: string; details?: Record<string, unknown> },
): CouncilRequestError {
  const num = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);
  const council = num(err.details?.council_protocol);
  const sent = num(err.details?.request_protocol) ?? PROTOCOL_VERSION;
  const message =
    council === null
      ? err.message
      : `the council at ${where} speaks protocol v${council} and refused this request's v${sent}`;
  const hint =
    council !== null && council < sent
      ? 'the council runs an older kourai: ask its operator to upgrade'
      : 'upgrade kourai on this forge';
  return new CouncilRequestError(status, 'protocol_mismatch', message, err.details, hint);
}

/** The adapter's tensors, checked against the digest the council published (InvalidDataError when they differ). */
export function decodeAdapter(a: z.infer<typeof AdapterSchema>): DownloadedAdapter {
  const tensors = a.tensors.map(tensorFromJson);
  const digest = adapterDigest(tensors);
  if (digest !== a.digest)
    throw new InvalidDataError(
      `the council's ${a.agent} adapter of round ${a.round} does not match its published digest (${a.digest.slice(0, 12)}…, got ${digest.slice(0, 12)}…): nothing was used`,
    );
  return { agent: a.agent, round: a.round, strategy: a.strategy, tensors };
}
