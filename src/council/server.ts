import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { createRequire } from 'node:module';
import { ZodError } from 'zod';
import type { GramPool } from '../aggregation/gram-pool.js';
import { PROTOCOL_VERSION, ROUTES, SAFETENSORS_BODY_TYPE, submissionFromBody, submissionFromRelease, type Health } from '../federation/protocol.js';
import { releaseFromSafetensors } from '../privacy/release.js';
import { systemClock, type Clock } from '../runtime/clock.js';
import { TensorError } from '../tensor/errors.js';
import type { CouncilConfig } from './config.js';
import { Council } from './council.js';
import { CouncilHttpError } from './http-error.js';
import { SqliteCouncilStorage } from './sqlite-storage.js';
import type { CouncilStorage, ForgeRow } from './storage.js';

/**
 * The council over HTTP (Fastify 5). Plain HTTP on the configured host and port: put TLS in a
 * reverse proxy in front of it (Caddy, nginx) — tokens are bearer secrets and must not cross a
 * network in clear.
 *
 * Memory: a request body is limited to `payload_limit` and at most `max_in_flight` submissions
 * are read at once (others get 503 busy with Retry-After), so request memory stays below about
 * max_in_flight × payload_limit × 3 (the JSON text, the decoded bytes, the float32 copy). Accepted
 * updates go to SQLite at once; aggregation reads them back chunk by chunk.
 */
const version = (createRequire(import.meta.url)('../../package.json') as { version: string }).version;

export interface CouncilServer {
  app: FastifyInstance;
  council: Council;
  storage: CouncilStorage;
  /** e.g. http://127.0.0.1:7470 */
  url: string;
  port: number;
  /** Stops accepting, lets in-flight requests and aggregation finish, closes the database. */
  close(): Promise<void>;
}

export function buildApp(council: Council, config: CouncilConfig, log: (line: string) => void): FastifyInstance {
  // requestTimeout: a client that stops sending mid-body must not hold an in-flight slot forever.
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024, return503OnClosing: true, forceCloseConnections: 'idle', requestTimeout: 300_000 });
  let inFlight = 0;
  // Safetensors submission bodies (a release without base64); each route's bodyLimit applies.
  app.addContentTypeParser(SAFETENSORS_BODY_TYPE, { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  app.setErrorHandler((err: unknown, req: FastifyRequest, reply: FastifyReply) => {
    const e = toHttpError(err, config);
    if (e.status >= 500) log(`council: ${req.method} ${req.url} failed: ${(err as Error).stack ?? String(err)}`);
    else if (e.status !== 401 && req.method !== 'GET') log(`council: refused ${req.method} ${req.url}: ${e.code}: ${e.message}`);
    void reply.status(e.status).send(e.body());
  });
  app.setNotFoundHandler((req, reply) => {
    const e = new CouncilHttpError('not_found', `no route ${req.method} ${req.url.split('?')[0]} (the council speaks protocol v${PROTOCOL_VERSION} under /v1)`);
    void reply.status(404).send(e.body());
  });

  const auth = async (req: FastifyRequest): Promise<ForgeRow> => council.authenticate(req.headers.authorization);
  const roundParam = (raw: unknown): number => {
    const s = String(raw);
    if (!/^\d{1,12}$/.test(s) || Number(s) < 1) throw new CouncilHttpError('invalid_body', `round must be a positive whole number, got "${s}"`);
    return Number(s);
  };

  app.get(ROUTES.health, async (): Promise<Health> => ({ ok: true, protocol: PROTOCOL_VERSION, version, round: (await council.currentRound().catch(() => null))?.round ?? null }));
  app.get(ROUTES.me, async (req) => council.me(await auth(req)));
  app.get(ROUTES.currentRound, async (req) => council.roundStatus(await auth(req), 'current'));
  app.get<{ Params: { round: string } }>(ROUTES.round, async (req) => council.roundStatus(await auth(req), roundParam(req.params.round)));
  app.put<{ Params: { round: string; agent: string } }>(
    ROUTES.submit,
    {
      bodyLimit: config.payload_limit,
      onRequest: (req, reply, done) => {
        if (inFlight >= config.max_in_flight) {
          void reply
            .status(503)
            .header('retry-after', '1')
            .send(new CouncilHttpError('busy', `the council is reading ${inFlight} updates already; retry shortly`).body());
          return;
        }
        inFlight++;
        reply.raw.once('close', () => inFlight--);
        done();
      },
    },
    async (req, reply) => {
      const forge = await auth(req);
      const round = roundParam(req.params.round);
      const body = Buffer.isBuffer(req.body) ? submissionFromRelease(releaseFromSafetensors(req.body), req.params.agent) : submissionFromBody(req.body, req.params.agent);
      const { created, receipt } = await council.submit(forge, round, req.params.agent, body);
      void reply.status(created ? 201 : 200);
      return receipt;
    },
  );
  app.post<{ Params: { round: string } }>(ROUTES.seal, async (req) => council.seal(await auth(req), roundParam(req.params.round)));
  app.get<{ Params: { round: string; agent: string } }>(ROUTES.aggregate, async (req) => {
    await auth(req);
    return council.adapter(req.params.agent, roundParam(req.params.round));
  });
  app.get<{ Params: { agent: string } }>(ROUTES.global, async (req) => {
    await auth(req);
    return council.adapter(req.params.agent);
  });
  app.get(ROUTES.trust, async (req) => council.trust(await auth(req)));
  return app;
}

function toHttpError(err: unknown, config: CouncilConfig): CouncilHttpError {
  if (err instanceof CouncilHttpError) return err;
  if (err instanceof ZodError) {
    const issue = err.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : 'body';
    return new CouncilHttpError('invalid_body', `${where}: ${issue?.message ?? 'invalid'}`, { issues: err.issues.slice(0, 10).map((i) => ({ path: i.path.join('.'), message: i.message })) });
  }
  if (err instanceof TensorError) return new CouncilHttpError('invalid_body', `safetensors body: ${err.message}`);
  const code = (err as { code?: string }).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new CouncilHttpError('payload_too_large', `request body exceeds the council's payload limit of ${config.payload_limit} bytes`, { limit: config.payload_limit });
  if (code === 'FST_ERR_CTP_INVALID_JSON_BODY' || code === 'FST_ERR_CTP_EMPTY_JSON_BODY') return new CouncilHttpError('invalid_body', 'the body is not valid JSON');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new CouncilHttpError('invalid_body', `send the body as application/json (or a safetensors release as ${SAFETENSORS_BODY_TYPE})`);
  const status = (err as { statusCode?: number }).statusCode;
  if (status !== undefined && status >= 400 && status < 500) return new CouncilHttpError('invalid_body', (err as Error).message);
  return new CouncilHttpError('internal', 'internal error (see the council log)');
}

/** Opens the storage, starts the council (resuming interrupted work) and listens. */
export async function startCouncilServer(opts: { config: CouncilConfig; log: (line: string) => void; clock?: Clock; storage?: CouncilStorage; pool?: GramPool | null }): Promise<CouncilServer> {
  const { config, log } = opts;
  const storage = opts.storage ?? new SqliteCouncilStorage(config.data_dir);
  const council = new Council({ storage, config, clock: opts.clock ?? systemClock, log, pool: opts.pool ?? null });
  let app: FastifyInstance | undefined;
  try {
    await council.start();
    app = buildApp(council, config, log);
    await app.listen({ host: config.host, port: config.port });
  } catch (err) {
    await council.stop();
    await app?.close();
    storage.close();
    throw err;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const server = app;
  return {
    app: server,
    council,
    storage,
    url: `http://${host}:${port}`,
    port,
    async close() {
      await server.close();
      await council.stop();
      storage.close();
    },
  };
}
