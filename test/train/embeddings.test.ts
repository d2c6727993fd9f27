import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CancelledError, ExitCode } from '../../src/errors.js';
import { fetchEmbeddings } from '../../src/train/encoder/embeddings-client.js';
import { BUILTIN_FINGERPRINT } from '../../src/train/fingerprint.js';
import type { EndpointEncoderConfig } from '../../src/train/learn-config.js';
import { openTextEncoder } from '../../src/train/text-encoder.js';
import { removeDir, tempDir } from '../helpers/ctx.js';
import { embed, startEmbeddingsServer, type EmbeddingsServer } from './embeddings-server.js';

let server: EmbeddingsServer;
let home: string;
beforeEach(async () => {
  server = await startEmbeddingsServer(32);
  home = tempDir('kourai-embed-');
});
afterEach(async () => {
  await server.close();
  removeDir(home);
});

const cfg = (over: Partial<EndpointEncoderConfig> = {}): EndpointEncoderConfig => ({
  kind: 'openai',
  url: server.url,
  model: 'toy-embed',
  dimensions: null,
  timeoutMs: 2000,
  retries: 2,
  batchSize: 3,
  apiKeyEnv: 'TOY_KEY',
  ...over,
});
const opts = () => ({ signal: new AbortController().signal, env: { TOY_KEY: 'sk-test' } });

async function rejection(p: Promise<unknown>): Promise<{ exitCode: number; message: string }> {
  try {
    await p;
  } catch (err) {
    return err as { exitCode: number; message: string };
  }
  throw new Error('expected a rejection');
}

describe('the /v1/embeddings client (a real server on 127.0.0.1)', () => {
  it('sends the model, the texts and the key; puts answers back in input order', async () => {
    const out = await fetchEmbeddings(cfg(), ['alpha', 'beta'], opts());
    expect(out.map((v) => Array.from(v))).toEqual([embed('alpha', 32), embed('beta', 32)]);
    expect(server.requests).toEqual([
      { model: 'toy-embed', input: ['alpha', 'beta'], authorization: 'Bearer sk-test' },
    ]);
  });

  it('retries 503 and 429 with backoff, then succeeds', async () => {
    server.failNext = [503, 429];
    const out = await fetchEmbeddings(cfg(), ['alpha'], opts());
    expect(out).toHaveLength(1);
    expect(server.requests).toHaveLength(3);
  });

  it('retries a request that times out', async () => {
    server.hangNext = 1;
    await fetchEmbeddings(cfg({ timeoutMs: 200 }), ['alpha'], opts());
    expect(server.requests).toHaveLength(2);
  });

  it('gives up after the retries with a network error (exit 9) naming the endpoint', async () => {
    server.failNext = [500, 500, 500];
    const err = await rejection(fetchEmbeddings(cfg(), ['alpha'], opts()));
    expect(err.exitCode).toBe(ExitCode.network);
    expect(err.message).toBe(
      `embeddings endpoint ${server.url}/embeddings failed after 3 attempts: HTTP 500: {"error":{"message":"injected 500"}}`,
    );
  });

  it('an unreachable endpoint: exit 9, saying connection refused', async () => {
    const url = server.url;
    await server.close();
    server = await startEmbeddingsServer(32); // for afterEach
    const err = await rejection(fetchEmbeddings(cfg({ url, retries: 1 }), ['alpha'], opts()));
    expect(err.exitCode).toBe(ExitCode.network);
    expect(err.message).toMatch(/failed after 2 attempts: ECONNREFUSED/);
  });

  it('a 4xx is not retried', async () => {
    server.failNext = [400];
    const err = await rejection(fetchEmbeddings(cfg(), ['alpha'], opts()));
    expect(err.exitCode).toBe(ExitCode.network);
    expect(err.message).toMatch(/refused the request: HTTP 400/);
    expect(server.requests).toHaveLength(1);
  });

  it('a malformed answer is invalid data (exit 5)', async () => {
    server.garbleNext = '{"data": [{"index": 0, "embedding": [1, "x"]}]}';
    const err = await rejection(fetchEmbeddings(cfg(), ['alpha'], opts()));
    expect(err.exitCode).toBe(ExitCode.invalidData);
    expect(err.message).toMatch(/a value that is not a finite number/);
  });

  it('Ctrl-C cancels a request in flight', async () => {
    server.hangNext = 1;
    const ac = new AbortController();
    const p = fetchEmbeddings(cfg({ timeoutMs: 60_000 }), ['alpha'], { signal: ac.signal, env: {} });
    while (server.requests.length === 0) await new Promise((r) => setImmediate(r));
    ac.abort();
    await expect(p).rejects.toBeInstanceOf(CancelledError);
  });
});

describe('the endpoint encoder', () => {
  it('learns the dimension, names model and dimension in the fingerprint, and embeds each text once (SQLite cache)', async () => {
    const enc = await openTextEncoder(cfg(), { home, env: {}, signal: new AbortController().signal });
    expect(enc.spec.semantic).toEqual({ kind: 'embeddings', model: 'toy-embed', dim: 32 });
    expect(enc.fingerprint).not.toBe(BUILTIN_FINGERPRINT);
    const texts = ['one', 'two', 'three', 'four', 'two'];
    const f = await enc.encode(texts);
    expect(f).toHaveLength(5);
    expect(f[1]!.val).toEqual(f[4]!.val);
    const sent = server.requests.flatMap((r) => r.input);
    expect(sent.sort()).toEqual(['four', 'kourai', 'one', 'three', 'two']);
    enc.close();
    // a new process: everything comes from the cache, nothing is sent
    const again = await openTextEncoder(cfg(), { home, env: {}, signal: new AbortController().signal });
    const before = server.requests.length;
    await again.encode(texts);
    expect(server.requests.length).toBe(before);
    expect(again.fingerprint).toBe(enc.fingerprint);
    const other = await openTextEncoder(cfg({ model: 'toy-embed-2' }), {
      home,
      env: {},
      signal: new AbortController().signal,
    });
    expect(other.fingerprint).not.toBe(enc.fingerprint);
    again.close();
    other.close();
  });

  it('an endpoint that changes its dimension is refused, not mixed', async () => {
    const enc = await openTextEncoder(cfg({ dimensions: 16 }), { home, env: {}, signal: new AbortController().signal });
    const err = await rejection(enc.encode(['alpha']));
    expect(err.exitCode).toBe(ExitCode.invalidData);
    expect(err.message).toMatch(/an embedding of 32 dimensions \(expected 16\)/);
    enc.close();
  });
});
