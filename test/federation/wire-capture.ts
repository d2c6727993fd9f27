import { connect, createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP relay on 127.0.0.1 in front of a council: a forge joins the relay's URL, and every byte it
 * sends crosses here and is kept, whole and in order per connection, before it reaches the council.
 * What the council answers passes through untouched (it is not the forge's to leak).
 */
export interface WireCapture {
  url: string;
  /** Connections opened so far. */
  connections(): number;
  /** Every byte forges sent through this relay, per connection, in arrival order. */
  sent(): Buffer[];
  /** All of it, one buffer. */
  all(): Buffer;
  close(): Promise<void>;
}

export async function captureWire(target: string): Promise<WireCapture> {
  const { hostname, port } = new URL(target);
  const chunks: Buffer[][] = [];
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const mine: Buffer[] = [];
    chunks.push(mine);
    const upstream = connect(Number(port), hostname);
    sockets.add(client).add(upstream);
    client.on('data', (d: Buffer) => {
      mine.push(Buffer.from(d));
      upstream.write(d);
    });
    upstream.on('data', (d: Buffer) => client.write(d));
    client.on('end', () => upstream.end());
    upstream.on('end', () => client.end());
    const drop = (): void => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('error', drop);
    upstream.on('error', drop);
    client.on('close', drop);
    upstream.on('close', drop);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    connections: () => chunks.length,
    sent: () => chunks.map((c) => Buffer.concat(c)),
    all: () => Buffer.concat(chunks.map((c) => Buffer.concat(c))),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}

export interface RawRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
}

/** The HTTP/1.1 requests in one connection's bytes (content-length or chunked bodies). */
export function parseRequests(bytes: Buffer): RawRequest[] {
  const out: RawRequest[] = [];
  let at = 0;
  while (at < bytes.length) {
    const end = bytes.indexOf('\r\n\r\n', at);
    if (end < 0) throw new Error(`an incomplete request head at byte ${at}`);
    const [line, ...rest] = bytes.subarray(at, end).toString('latin1').split('\r\n');
    const [method, path] = (line ?? '').split(' ');
    const headers: Record<string, string> = {};
    for (const h of rest) {
      const i = h.indexOf(':');
      headers[h.slice(0, i).trim().toLowerCase()] = h.slice(i + 1).trim();
    }
    at = end + 4;
    let body: Buffer;
    if (headers['transfer-encoding']?.includes('chunked')) {
      const parts: Buffer[] = [];
      for (;;) {
        const eol = bytes.indexOf('\r\n', at);
        const size = parseInt(bytes.subarray(at, eol).toString('latin1'), 16);
        at = eol + 2;
        if (size === 0) {
          at += 2;
          break;
        }
        parts.push(bytes.subarray(at, at + size));
        at += size + 2;
      }
      body = Buffer.concat(parts);
    } else {
      const n = Number(headers['content-length'] ?? 0);
      body = bytes.subarray(at, at + n);
      at += n;
    }
    out.push({ method: method ?? '', path: path ?? '', headers, body });
  }
  return out;
}
