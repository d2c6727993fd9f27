import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Socket } from 'node:net';
import { createRequire } from 'node:module';
import { ZodError } from 'zod';
import type { GramPool } from '../aggregation/gram-pool.js';
import {
  COUNCIL_URL_HEADER,
  PROTOCOL_HEADER,
  PROTOCOL_VERSION,
  ROUTES,
  SAFETENSORS_BODY_TYPE,
  type Health,
  type Layouts,
} from '../protocol/wire.js';
import { systemClock, type Clock } from '../runtime/clock.js';
import { TensorError } from '../tensor/errors.js';
import type { CouncilConfig } from './config.js';
import { Council } from './council.js';
import { CouncilHttpError } from './http-error.js';
import { protocolRefusal } from './protocol-check.js';
import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import { councilPolicy, policyConflict } from './council-policy.js';
import { openCouncilStorage } from './open-storage.js';
import { DamagedStateError, StorageUnavailableError, type CouncilStorage, type ForgeRow } from './storage.js';
import { UploadCutOffError, type Upload } from './upload.js';
import { workerAvailable, WorkerAggregator } from './worker-aggregator.js';

/**
 * The council over HTTP (Fastify 5). Plain HTTP on the configured host and port: put TLS in a
 * reverse proxy in front of it (Caddy, nginx) — tokens are bearer secrets and must not cross a
 * network in clear.
 *
 * What a client costs the council before it has proven anything:
 * - every route but /v1/health checks the request's protocol version (Kourai-Protocol) and then
 *   authenticates, from the headers alone, before a byte of the body is read; a refused request is
 *   answered at once and its connection closed (`Connection: close`), so an unauthenticated body
 *   (or one of another protocol) is never read, buffered or parsed;
 * - an upload must declare its size (Content-Length, at most `payload_limit`) and takes one of
 *   `max_in_flight` slots (more: 503 busy) and one of its forge's `max_uploads_per_forge` (more:
 *   429); a forge that already has an upload in progress cannot take the last quarter of the
 *   slots (429), so a few forges' stalled uploads never hold them all;
 * - its body must keep arriving: after `upload_grace` at `upload_rate` on average, and in full
 *   within `upload_grace` + size / `upload_rate` (408, connection closed);
 * - aggregation runs in a worker thread, so the event loop keeps answering during a round.
 * An upload is read as it arrives: decoded, checked and written to storage chunk by chunk
 * (Council.submitUpload, upload.ts), so a request holds about one 256 KiB chunk, not its body.
 *
 * Every error body — from a route, the HTTP parser, the router or a timeout — is the protocol's
 * `{"error": {status, code, message, details?}}`.
 */
const version = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

/** Body limit of every route but uploads (seal bodies are `{}`). */
export const SMALL_BODY_LIMIT = 1024 * 1024;

export interface CouncilServer {
  app: FastifyInstance;
  council: Council;
  storage: CouncilStorage;
  /** e.g. http://127.0.0.1:7470 */
  url: string;
  port: number;
  /** Uploads being read now (each holds one of max_in_flight slots). */
  uploadsInFlight(): number;
  /** Stops accepting, lets in-flight requests and aggregation finish, closes the database. */
  close(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    forge?: ForgeRow;
  }
  interface FastifyContextConfig {
    /** false: the route answers without a token (health). */
    auth?: boolean;
  }
}

function errorReplyText(e: CouncilHttpError, extraHeaders: Record<string, string> = {}): string {
  const body = JSON.stringify(e.body());
  const head = [
    `HTTP/1.1 ${e.status} ${httpReason(e.status)}`,
    'content-type: application/json; charset=utf-8',
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
    ...Object.entries(extraHeaders).map(([k, v]) => `${k}: ${v}`),
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

function httpReason(status: number): string {
  return (
    { 400: 'Bad Request', 408: 'Request Timeout', 414: 'URI Too Long', 431: 'Request Header Fields Too Large' }[
      status
    ] ?? 'Error'
  );
}

/** Errors Node's HTTP parser raises before any route runs: answered in the protocol's shape. */
function clientErrorHandler(err: NodeJS.ErrnoException, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const e =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new CouncilHttpError('headers_too_large', 'the request headers exceed the limit')
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new CouncilHttpError('request_timeout', 'the request did not arrive in time')
        : new CouncilHttpError('bad_request', 'the request is not valid HTTP');
  if (socket.writable) socket.end(errorReplyText(e));
  socket.destroy();
}

export function buildApp(
  council: Council,
  config: CouncilConfig,
  log: (line: string) => void,
  clock: Clock = systemClock,
  self: { id: string; backend: 'sqlite' | 'postgres' } = { id: 'council', backend: 'sqlite' },
): FastifyInstance & { uploadsInFlight(): number } {
  const longestUpload = (config.upload_grace + config.payload_limit / config.upload_rate) * 1000;
  const app = Fastify({
    logger: false,
    bodyLimit: SMALL_BODY_LIMIT,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // The outer bound; uploads have their own, size-proportional deadline (below).
    requestTimeout: Math.ceil(longestUpload) + 10_000,
    clientErrorHandler,
    frameworkErrors: (err, _req, reply) => {
      const e =
        err.code === 'FST_ERR_MAX_PARAM_LENGTH'
          ? new CouncilHttpError('uri_too_long', 'a path segment is too long')
          : new CouncilHttpError('bad_request', `the request URL cannot be read: ${err.message}`);
      void (reply as FastifyReply).status(e.status).header('connection', 'close').send(e.body());
    },
  });
  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const e = toHttpError(err, req);
    if (err instanceof StorageUnavailableError) {
      log(`council: ${req.method} ${req.url}: 503: ${err.message}`);
      void reply.status(e.status).header('retry-after', '5').send(e.body());
      return;
    }
    if (err instanceof DamagedStateError)
      log(`council: DAMAGED STATE — ${req.method} ${req.url}: ${err.message}; restore council.db from a backup`);
    else if (e.status >= 500) log(`council: ${req.method} ${req.url} failed: ${(err as Error).stack ?? String(err)}`);
    else if (e.status !== 401 && req.method !== 'GET')
      log(`council: refused ${req.method} ${req.url}: ${e.code}: ${e.message}`);
    void reply.status(e.status).send(e.body());
  });
  app.setNotFoundHandler((req, reply) => {
    const e = new CouncilHttpError(
      'not_found',
      `no route ${req.method} ${req.url.split('?')[0]} (the council speaks protocol v${PROTOCOL_VERSION} under /v1)`,
    );
    void reply.status(404).header('connection', 'close').send(e.body());
  });

  // The protocol version, then authentication, from the headers, before the body: a refused
  // request never has its body read. Health answers every client (it is how one learns the version).
  app.addHook('onRequest', async (req, reply) => {
    if (req.routeOptions.config.auth === false || req.routeOptions.url === undefined) return;
    const mismatch = protocolRefusal(req.headers[PROTOCOL_HEADER]);
    if (mismatch) {
      if (req.method !== 'GET')
        log(`council: refused ${req.method} ${req.url}: protocol_mismatch: ${mismatch.message}`);
      void reply.status(mismatch.status).header('connection', 'close').send(mismatch.body());
      return reply;
    }
    try {
      req.forge = await council.authenticate(req.headers.authorization);
    } catch (err) {
      if (!(err instanceof CouncilHttpError)) throw err;
      void reply.status(err.status).header('connection', 'close').send(err.body());
      return reply;
    }
  });

  let inFlight = 0;
  const perForge = new Map<number, number>();
  const consumed = new WeakMap<Socket, number>();
  const forgeOf = (req: FastifyRequest): ForgeRow => req.forge as ForgeRow;
  const roundParam = (raw: unknown, min = 1): number => {
    const s = String(raw);
    if (!/^\d{1,12}$/.test(s) || Number(s) < min)
      throw new CouncilHttpError(
        'invalid_body',
        `round must be a ${min === 0 ? 'whole number (0: the public initialisation)' : 'positive whole number'}, got "${s}"`,
      );
    return Number(s);
  };

  app.get(ROUTES.health, { config: { auth: false } }, async (_req, reply): Promise<Health | undefined> => {
    const process = { id: self.id, role: council.role() };
    try {
      return {
        ok: true,
        protocol: PROTOCOL_VERSION,
        version,
        round: (await council.currentRound()).round,
        database: { backend: self.backend, ok: true },
        process,
      };
    } catch (err) {
      const e =
        err instanceof CouncilHttpError && err.code === 'round_not_found'
          ? null
          : new CouncilHttpError('unavailable', `the council cannot read its state: ${(err as Error).message}`, {
              database: { backend: self.backend, ok: false },
              process,
            });
      if (!e)
        return {
          ok: true,
          protocol: PROTOCOL_VERSION,
          version,
          round: null,
          database: { backend: self.backend, ok: true },
          process,
        };
      void reply.status(e.status).header('retry-after', '5').send(e.body());
      return undefined;
    }
  });
  app.get(ROUTES.me, async (req) => council.me(forgeOf(req)));
  app.get(ROUTES.layouts, async (): Promise<Layouts> => council.layouts());
  app.get(ROUTES.currentRound, async (req) => council.roundStatus(forgeOf(req), 'current'));
  app.get<{ Params: { round: string } }>(ROUTES.round, async (req) =>
    council.roundStatus(forgeOf(req), roundParam(req.params.round)),
  );
  // Uploads are read as they arrive (Council.submitUpload): in a scope of their own, every body is
  // handed over unread, whatever its type.
  const uploads = async (scope: FastifyInstance): Promise<void> => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_req, _payload, done) => done(null, undefined));
    scope.put<{ Params: { round: string; agent: string } }>(
      ROUTES.submit,
      {
        bodyLimit: config.payload_limit,
        // After authentication: the upload's size, its forge's uploads, the council's slots, its deadline.
        onRequest: (req, reply, done) => {
          const refuse = (e: CouncilHttpError, headers: Record<string, string> = {}): void => {
            void reply
              .status(e.status)
              .headers({ connection: 'close', ...headers })
              .send(e.body());
          };
          const forge = forgeOf(req);
          const declared = req.headers['content-length'];
          if (declared === undefined || !/^\d+$/.test(declared))
            return refuse(
              new CouncilHttpError('length_required', 'an update upload must declare its size (Content-Length)'),
            );
          const length = Number(declared);
          if (length > config.payload_limit) return refuse(payloadTooLarge(config.payload_limit, 'update uploads'));
          const mine = perForge.get(forge.id) ?? 0;
          if (mine >= config.max_uploads_per_forge) {
            return refuse(
              new CouncilHttpError(
                'too_many_uploads',
                `forge "${forge.name}" already has ${mine} uploads in progress (at most ${config.max_uploads_per_forge} at once); retry when one has finished`,
              ),
              { 'retry-after': '1' },
            );
          }
          // The last quarter of the slots is kept for forges with no upload in progress: a few
          // forges' stalled uploads can never hold them all.
          const reserved = Math.max(1, Math.floor(config.max_in_flight / 4));
          if (mine > 0 && inFlight >= config.max_in_flight - reserved) {
            return refuse(
              new CouncilHttpError(
                'too_many_uploads',
                `forge "${forge.name}" already has ${mine} upload${mine === 1 ? '' : 's'} in progress and the council keeps its last ${reserved} slot${reserved === 1 ? '' : 's'} for forges with none; retry when one has finished`,
              ),
              { 'retry-after': '1' },
            );
          }
          if (inFlight >= config.max_in_flight)
            return refuse(
              new CouncilHttpError('busy', `the council is reading ${inFlight} updates already; retry shortly`),
              { 'retry-after': '1' },
            );
          inFlight++;
          perForge.set(forge.id, mine + 1);
          // The deadline follows the bytes that arrive, not the size declared: after upload_grace the
          // body must keep coming at upload_rate (a stalled upload is cut at the grace), and the whole
          // declared size must arrive within upload_grace + length / upload_rate.
          const socket = req.raw.socket;
          // Bytes read on this connection before this request (keep-alive); its own headers count as arrived.
          const from = consumed.get(socket) ?? 0;
          const started = clock.now().getTime();
          const longest = (config.upload_grace + length / config.upload_rate) * 1000;
          let timer = { cancel: () => undefined as void };
          const check = (): void => {
            if (req.bodyRead) return;
            const got = Math.max(0, socket.bytesRead - from);
            const elapsed = clock.now().getTime() - started;
            const earned = Math.min(longest, (config.upload_grace + got / config.upload_rate) * 1000);
            if (elapsed < earned) {
              timer = clock.setTimer(earned - elapsed, check);
              return;
            }
            const e =
              elapsed >= longest
                ? new CouncilHttpError(
                    'request_timeout',
                    `the ${length}-byte body did not arrive within ${Number((longest / 1000).toPrecision(6))} s (${config.upload_grace} s + its size at ${config.upload_rate} B/s); upload again`,
                  )
                : new CouncilHttpError(
                    'request_timeout',
                    `the ${length}-byte body stopped arriving: ${got} bytes in ${Number((elapsed / 1000).toPrecision(6))} s (the council waits ${config.upload_grace} s, then needs ${config.upload_rate} B/s); upload again`,
                  );
            log(`council: ${forge.name}: upload to ${req.url} timed out (${length} bytes declared, ${got} arrived)`);
            if (!reply.raw.headersSent && socket.writable) socket.end(errorReplyText(e));
            socket.destroy();
          };
          timer = clock.setTimer(config.upload_grace * 1000, check);
          reply.raw.once('close', () => {
            consumed.set(socket, socket.bytesRead);
            timer.cancel();
            inFlight--;
            const n = (perForge.get(forge.id) ?? 1) - 1;
            if (n > 0) perForge.set(forge.id, n);
            else perForge.delete(forge.id);
          });
          done();
        },
      },
      async (req, reply) => {
        req.raw.once('end', () => (req.bodyRead = true));
        try {
          const round = roundParam(req.params.round);
          const url = req.headers[COUNCIL_URL_HEADER];
          const upload: Upload = {
            type: uploadType(req.headers['content-type']),
            length: Number(req.headers['content-length']),
            body: req.raw,
          };
          const { created, receipt } = await council.submitUpload(forgeOf(req), round, req.params.agent, upload, {
            councilUrl: typeof url === 'string' ? url : null,
          });
          void reply.status(created ? 201 : 200);
          return receipt;
        } catch (err) {
          // Refused before its end: the rest of the body is never read, so the connection cannot serve another request.
          if (!req.raw.complete) void reply.header('connection', 'close');
          throw err;
        }
      },
    );
  };
  void app.register(uploads);
  app.post<{ Params: { round: string } }>(ROUTES.seal, async (req) =>
    council.seal(forgeOf(req), roundParam(req.params.round)),
  );
  app.get<{ Params: { round: string; agent: string } }>(ROUTES.aggregate, async (req) =>
    council.adapter(req.params.agent, roundParam(req.params.round, 0)),
  );
  app.get<{ Params: { agent: string } }>(ROUTES.global, async (req) => council.adapter(req.params.agent));
  app.get(ROUTES.trust, async (req) => council.trust(forgeOf(req)));
  return Object.assign(app, { uploadsInFlight: () => inFlight });
}

declare module 'fastify' {
  interface FastifyRequest {
    bodyRead?: boolean;
  }
}

/** How an upload's body is read, from its Content-Type. */
function uploadType(header: string | undefined): Upload['type'] {
  const media = (header ?? '').split(';')[0]?.trim().toLowerCase();
  if (media === 'application/json') return 'json';
  if (media === SAFETENSORS_BODY_TYPE) return 'safetensors';
  throw new CouncilHttpError(
    'invalid_body',
    `send the body as application/json (or a safetensors release as ${SAFETENSORS_BODY_TYPE})`,
  );
}

function payloadTooLarge(limit: number, what: string): CouncilHttpError {
  return new CouncilHttpError(
    'payload_too_large',
    `request body exceeds this route's limit of ${limit} bytes (${what})`,
    { limit },
  );
}

function toHttpError(err: unknown, req: FastifyRequest): CouncilHttpError {
  if (err instanceof CouncilHttpError) return err;
  if (err instanceof StorageUnavailableError)
    return new CouncilHttpError('unavailable', `${err.message}; retry shortly (what was acknowledged is kept)`);
  if (err instanceof DamagedStateError)
    return new CouncilHttpError(
      'unavailable',
      `the council's stored state is damaged: ${err.message}; the operator must restore council.db`,
    );
  if (err instanceof ZodError) {
    const issue = err.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'body';
    return new CouncilHttpError('invalid_body', `${where}: ${issue?.message ?? 'invalid'}`, {
      issues: err.issues.slice(0, 10).map((i) => ({ path: i.path.join('.'), message: i.message })),
    });
  }
  if (err instanceof TensorError) return new CouncilHttpError('invalid_body', `safetensors body: ${err.message}`);
  if (err instanceof UploadCutOffError) return new CouncilHttpError('bad_request', err.message);
  const code = (err as { code?: string }).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    const limit = req.routeOptions.bodyLimit ?? SMALL_BODY_LIMIT;
    return payloadTooLarge(
      limit,
      req.routeOptions.url === ROUTES.submit ? 'update uploads' : 'requests other than uploads',
    );
  }
  if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY')
    return new CouncilHttpError('invalid_body', 'the body is not valid JSON');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE')
    return new CouncilHttpError(
      'invalid_body',
      `send the body as application/json (or a safetensors release as ${SAFETENSORS_BODY_TYPE})`,
    );
  const status = (err as { statusCode?: number }).statusCode;
  if (status !== undefined && status >= 400 && status < 500)
    return new CouncilHttpError('invalid_body', (err as Error).message);
  return new CouncilHttpError('internal', 'internal error (see the council log)');
}

/**
 * Opens the storage, starts the council (resuming interrupted work) and listens. Aggregation runs
 * in a worker thread when the worker is built (it opens its own connection to the same storage);
 * otherwise in this thread (with `pool` for pairwise distances).
 *
 * With PostgreSQL, several such processes may share one database: each reports a heartbeat
 * (`council status`), refuses to start beside a live process of other settings, and every
 * `tick` picks up closed rounds whose aggregator went silent (see Council.sweep).
 */
export async function startCouncilServer(opts: {
  config: CouncilConfig;
  log: (line: string) => void;
  clock?: Clock;
  storage?: CouncilStorage;
  pool?: GramPool | null;
  /** Threads of the aggregation worker's pairwise-distance pool (default 1). */
  threads?: number;
  /** 'thread': aggregate on the event loop (tests of the in-thread path). */
  aggregation?: 'worker' | 'thread';
  /** This process's name among those sharing the storage (default: host:pid:random with PostgreSQL, 'council' with SQLite). */
  processId?: string;
}): Promise<CouncilServer> {
  const { config, log } = opts;
  const clock = opts.clock ?? systemClock;
  const storage = opts.storage ?? (await openCouncilStorage(config, 'create', log));
  const info = storage.info();
  const id =
    opts.processId ??
    (info.backend === 'postgres' ? `${hostname()}:${process.pid}:${randomBytes(3).toString('hex')}` : 'council');
  const useWorker =
    (opts.aggregation ?? 'worker') === 'worker' &&
    (opts.storage === undefined || info.backend === 'sqlite') &&
    workerAvailable();
  const worker = useWorker
    ? new WorkerAggregator({
        dataDir: config.data_dir,
        database: config.database,
        threads: opts.threads ?? 1,
        trustTolerance: config.trust_tolerance,
        root: {
          root_memoir: config.root_memoir,
          data_dir: config.data_dir,
          base_fingerprints: config.base_fingerprints,
        },
      })
    : null;
  const council = new Council({
    storage,
    config,
    clock,
    log,
    owner: id,
    pool: opts.pool ?? null,
    ...(worker ? { aggregator: worker.aggregator(() => clock.now()) } : {}),
  });
  const policyJson = JSON.stringify(councilPolicy(config));
  // A heartbeat and a sweep every quarter lease (0.5–5 s): a silent process is noticed within one lease.
  const tickMs = Math.min(5000, Math.max(500, (config.aggregation_lease * 1000) / 4));
  const startedAt = clock.now().toISOString();
  let url = '';
  let port = config.port;
  let app: (FastifyInstance & { uploadsInFlight(): number }) | undefined;
  let ticker: ReturnType<typeof setInterval> | undefined;
  const beat = () =>
    storage.heartbeat({
      id,
      host: hostname(),
      pid: process.pid,
      url,
      startedAt,
      heartbeatAt: clock.now().toISOString(),
      role: council.role(),
      policyJson,
    });
  try {
    const live = await storage.processes(new Date(clock.now().getTime() - 3 * tickMs).toISOString());
    for (const other of live)
      if (other.id !== id) policyConflict(JSON.parse(policyJson) as Record<string, unknown>, other);
    await council.start();
    app = buildApp(council, config, log, clock, { id, backend: info.backend });
    await app.listen({ host: config.host, port: config.port });
    const addr = app.server.address();
    port = typeof addr === 'object' && addr ? addr.port : config.port;
    url = `http://${config.host.includes(':') ? `[${config.host}]` : config.host}:${port}`;
    await beat();
  } catch (err) {
    await council.stop();
    await app?.close();
    await worker?.close();
    await storage.close();
    throw err;
  }
  let ticking = false;
  ticker = setInterval(() => {
    if (ticking) return;
    ticking = true;
    Promise.all([beat(), council.sweep()])
      .catch((err: unknown) =>
        log(
          `council: ${err instanceof StorageUnavailableError ? err.message : `background check failed: ${String(err)}`}`,
        ),
      )
      .finally(() => (ticking = false));
  }, tickMs);
  ticker.unref();
  const server = app;
  return {
    app: server,
    council,
    storage,
    url,
    port,
    uploadsInFlight: () => server.uploadsInFlight(),
    async close() {
      clearInterval(ticker);
      ticker = undefined;
      await server.close();
      await council.stop();
      await worker?.close();
      await storage.removeProcess(id).catch(() => undefined);
      await storage.close();
    },
  };
}
