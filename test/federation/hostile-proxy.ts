import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { adapterDigest } from '../../src/protocol/wire.js';
import { tensorFromJson, tensorToJson } from '../../src/tensor/json.js';

/**
 * A hostile (or broken) council: an HTTP proxy on 127.0.0.1 in front of a real council that
 * passes requests through, except where its mode says otherwise. It records every request it
 * was sent (method, path, body size, whether a token came with it) so a test can say what left
 * the forge, and `elsewhere` records what reached a host the forge never joined (the target of
 * its redirects).
 */
export type PoisonKind = 'nan' | 'infinity' | 'extra-tensor' | 'renamed-tensor' | 'huge-values';

export type HostileMode =
  | { kind: 'pass' }
  /** Rewrites the published privacy policy of every round status. */
  | { kind: 'policy'; noise_multiplier?: number; clip_norm?: number }
  /** Answers a redirect (to `elsewhere`, same path) instead of forwarding. */
  | { kind: 'redirect'; status: 301 | 302 | 303 | 307 | 308; when?: (method: string, path: string) => boolean }
  /** Answers 200 with a body of `bytes` bytes (a JSON string that never ends early), streamed. */
  | { kind: 'huge'; bytes: number; when?: (method: string, path: string) => boolean; chunked?: boolean }
  /** Accepts the connection and never answers. */
  | { kind: 'silent'; when?: (method: string, path: string) => boolean }
  /** Answers headers, then one byte every `everyMs`, forever. */
  | { kind: 'drip'; everyMs: number; when?: (method: string, path: string) => boolean }
  /** Poisons the aggregates of rounds ≥ 1 (the digest recomputed, so the digest check passes). */
  | { kind: 'poison'; poison: PoisonKind };

export interface SeenRequest {
  method: string;
  path: string;
  bytes: number;
  authorization: boolean;
  /** Date.now() when the request arrived. */
  at: number;
}

export interface HostileProxy {
  url: string;
  seen: SeenRequest[];
  /** Requests that reached the host the redirects point at. */
  elsewhere: SeenRequest[];
  /** Bodies of the uploads (PUT …/updates/…) as they passed, in order. */
  uploads: { path: string; body: Buffer; headers: Record<string, string> }[];
  set(mode: HostileMode): void;
  close(): Promise<void>;
}

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function forwardHeaders(req: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.headers))
    if (typeof v === 'string' && !['host', 'connection', 'content-length', 'transfer-encoding'].includes(k))
      headers[k] = v;
  return headers;
}

function poisonAdapter(
  doc: { tensors: { name: string; shape: number[]; dtype: 'F32'; data: string }[]; digest: string },
  kind: PoisonKind,
): void {
  const tensors = doc.tensors.map(tensorFromJson);
  const first = tensors[0];
  if (!first) return;
  if (kind === 'nan') first.data[0] = Number.NaN;
  if (kind === 'infinity') first.data[0] = Number.POSITIVE_INFINITY;
  if (kind === 'huge-values')
    for (const t of tensors) for (let i = 0; i < t.data.length; i++) t.data[i] = i % 2 ? 3e38 : -3e38;
  if (kind === 'extra-tensor')
    tensors.push({ name: 'base_model.model.smuggled.lora_A.weight', shape: [1, 2], data: Float32Array.from([1, 2]) });
  if (kind === 'renamed-tensor') first.name = `${first.name}.renamed`;
  doc.tensors = tensors.map(tensorToJson);
  doc.digest = adapterDigest(tensors);
}

export async function startHostileProxy(target: string): Promise<HostileProxy> {
  let mode: HostileMode = { kind: 'pass' };
  const seen: SeenRequest[] = [];
  const elsewhereSeen: SeenRequest[] = [];
  const uploads: HostileProxy['uploads'] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();

  // The host a redirect points at: it records what arrives, then relays it to the council (as an
  // attacker's host would), so a forge that followed the redirect would see its round succeed.
  const elsewhere = createServer((req, res) => {
    void readBody(req).then(
      async (body) => {
        elsewhereSeen.push({
          method: req.method ?? '',
          path: req.url ?? '',
          bytes: body.length,
          authorization: req.headers.authorization !== undefined,
          at: Date.now(),
        });
        const r = await fetch(`${target}${req.url ?? '/'}`, {
          method: req.method ?? 'GET',
          headers: forwardHeaders(req),
          ...(body.length ? { body } : {}),
        });
        res.writeHead(r.status, { 'content-type': r.headers.get('content-type') ?? 'application/json' });
        res.end(Buffer.from(await r.arrayBuffer()));
      },
      () => res.destroy(),
    );
  });
  elsewhere.on('connection', (s: Socket) => sockets.add(s));
  await new Promise<void>((r) => elsewhere.listen(0, '127.0.0.1', r));
  const elsewhereUrl = `http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}`;

  const applies = (m: { when?: (method: string, path: string) => boolean }, req: IncomingMessage): boolean =>
    m.when ? m.when(req.method ?? 'GET', req.url ?? '/') : true;

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const m = mode;
    const path = req.url ?? '/';
    if (m.kind === 'silent' && applies(m, req)) {
      req.resume();
      seen.push({
        method: req.method ?? '',
        path,
        bytes: 0,
        authorization: req.headers.authorization !== undefined,
        at: Date.now(),
      });
      return; // never answers
    }
    const body = await readBody(req);
    seen.push({
      method: req.method ?? '',
      path,
      bytes: body.length,
      authorization: req.headers.authorization !== undefined,
      at: Date.now(),
    });
    if (req.method === 'PUT' && /\/updates\//.test(path)) uploads.push({ path, body, headers: forwardHeaders(req) });
    if (m.kind === 'redirect' && applies(m, req)) {
      res.writeHead(m.status, { location: `${elsewhereUrl}${path}`, 'content-length': '0' });
      res.end();
      return;
    }
    if (m.kind === 'huge' && applies(m, req)) {
      res.writeHead(200, {
        'content-type': 'application/json',
        ...(m.chunked ? {} : { 'content-length': String(m.bytes) }),
      });
      const head = Buffer.from('{"ok":true,"protocol":2,"round":1,"version":"');
      res.write(head);
      let left = m.bytes - head.length;
      const chunk = Buffer.alloc(1 << 20, 0x61);
      const pump = (): void => {
        while (left > 0) {
          const n = Math.min(left, chunk.length);
          left -= n;
          if (!res.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
            res.once('drain', pump);
            return;
          }
        }
        res.end();
      };
      res.on('close', () => {
        left = 0;
      });
      pump();
      return;
    }
    if (m.kind === 'drip' && applies(m, req)) {
      res.writeHead(200, { 'content-type': 'application/json' });
      const t = setInterval(() => {
        if (res.destroyed) clearInterval(t);
        else res.write(' ');
      }, m.everyMs);
      timers.add(t);
      res.on('close', () => clearInterval(t));
      return;
    }
    const r = await fetch(`${target}${path}`, {
      method: req.method ?? 'GET',
      headers: forwardHeaders(req),
      redirect: 'manual',
      ...(body.length ? { body } : {}),
    });
    let out = Buffer.from(await r.arrayBuffer());
    if (r.ok && m.kind === 'policy' && /^\/v1\/rounds\/(current|\d+)$/.test(path)) {
      const doc = JSON.parse(out.toString('utf8')) as {
        privacy_policy: {
          clip_norm: number;
          noise_multiplier: number;
          accepted: { clip_norm: { min: number; max: number }; noise_multiplier: { min: number; max: number } };
        };
      };
      if (m.noise_multiplier !== undefined) {
        doc.privacy_policy.noise_multiplier = m.noise_multiplier;
        doc.privacy_policy.accepted.noise_multiplier = { min: 0, max: m.noise_multiplier };
      }
      if (m.clip_norm !== undefined) {
        doc.privacy_policy.clip_norm = m.clip_norm;
        doc.privacy_policy.accepted.clip_norm = { min: 0, max: m.clip_norm };
      }
      out = Buffer.from(JSON.stringify(doc));
    }
    if (r.ok && m.kind === 'poison' && /^\/v1\/rounds\/[1-9]\d*\/aggregate\//.test(path)) {
      const doc = JSON.parse(out.toString('utf8')) as Parameters<typeof poisonAdapter>[0];
      poisonAdapter(doc, m.poison);
      out = Buffer.from(JSON.stringify(doc));
    }
    res.writeHead(r.status, {
      'content-type': r.headers.get('content-type') ?? 'application/json',
      ...(r.headers.get('retry-after') ? { 'retry-after': r.headers.get('retry-after') as string } : {}),
    });
    res.end(out);
  };

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  server.on('connection', (s: Socket) => sockets.add(s));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    seen,
    elsewhere: elsewhereSeen,
    uploads,
    set: (m) => {
      mode = m;
    },
    close: async () => {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
      await Promise.all([
        new Promise<void>((r) => server.close(() => r())),
        new Promise<void>((r) => elsewhere.close(() => r())),
      ]);
    },
  };
}
