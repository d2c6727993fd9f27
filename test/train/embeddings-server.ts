import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A real OpenAI-compatible embeddings server on 127.0.0.1 (port 0) for tests: deterministic
 * embeddings (character trigram counts hashed into `dim` values), a log of every request, and
 * faults to inject: answer the next requests with a status, hang, or a malformed body.
 */
export interface EmbeddingsServer {
  url: string;
  requests: { model: string; input: string[]; authorization: string | undefined }[];
  /** Statuses for the next requests, in order (e.g. [503, 503]). */
  failNext: number[];
  /** Hang (never answer) the next n requests. */
  hangNext: number;
  /** Replace the next answer's body. */
  garbleNext: string | null;
  close(): Promise<void>;
}

export function embed(text: string, dim: number): number[] {
  const v = new Array<number>(dim).fill(0);
  const t = ` ${text.toLowerCase()} `;
  for (let i = 0; i + 3 <= t.length; i++) {
    let h = 2166136261;
    for (let k = 0; k < 3; k++) h = Math.imul(h ^ t.charCodeAt(i + k), 16777619);
    v[(h >>> 0) % dim]! += (h & 1) === 0 ? 1 : -1;
  }
  return v;
}

export async function startEmbeddingsServer(dim = 32): Promise<EmbeddingsServer> {
  const hung: ServerResponse[] = [];
  const state: EmbeddingsServer = {
    url: '',
    requests: [],
    failNext: [],
    hangNext: 0,
    garbleNext: null,
    close: () =>
      new Promise((resolve) => {
        for (const r of hung) r.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server: Server = createServer((req: IncomingMessage, res: ServerResponse) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString('utf8')));
    req.on('end', () => {
      if (req.method !== 'POST' || req.url !== '/v1/embeddings') {
        res.writeHead(404).end('{"error":"not found"}');
        return;
      }
      const doc = JSON.parse(body) as { model: string; input: string[] };
      state.requests.push({ model: doc.model, input: doc.input, authorization: req.headers.authorization });
      if (state.hangNext > 0) {
        state.hangNext--;
        hung.push(res);
        return;
      }
      const status = state.failNext.shift();
      if (status !== undefined) {
        res.writeHead(status, { 'content-type': 'application/json' }).end(`{"error":{"message":"injected ${status}"}}`);
        return;
      }
      if (state.garbleNext !== null) {
        const g = state.garbleNext;
        state.garbleNext = null;
        res.writeHead(200, { 'content-type': 'application/json' }).end(g);
        return;
      }
      const data = doc.input.map((t, index) => ({ object: 'embedding', index, embedding: embed(t, dim) }));
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ object: 'list', model: doc.model, data: data.reverse() }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  return state;
}
