import { CancelledError, InvalidDataError, NetworkError } from '../../errors.js';
import type { EndpointEncoderConfig } from '../learn-config.js';
import { abortableSleep } from '../../runtime/cancel.js';

/**
 * A client for OpenAI-compatible `POST /v1/embeddings` (Ollama, a LiteLLM proxy, vLLM, OpenAI):
 * `{"model", "input": [texts]}` -> `{"data": [{"index", "embedding": [floats]}]}`. Every request
 * has a timeout; network failures, timeouts, 429 and 5xx are retried with exponential backoff
 * (250 ms, 500 ms, …); other answers fail at once. Ctrl-C (the signal) cancels, also mid-wait.
 */
export function embeddingsUrl(base: string): string {
  const trimmed = base.replace(/\/+$/, '');
  return trimmed.endsWith('/embeddings') ? trimmed : `${trimmed}/embeddings`;
}

class Retryable extends Error {}

export async function fetchEmbeddings(
  cfg: EndpointEncoderConfig,
  texts: readonly string[],
  opts: { signal: AbortSignal; env: Readonly<Record<string, string | undefined>> },
): Promise<Float32Array[]> {
  const url = embeddingsUrl(cfg.url);
  const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
  if (cfg.apiKeyEnv) {
    const key = opts.env[cfg.apiKeyEnv];
    if (key) headers.authorization = `Bearer ${key}`;
  }
  const body = JSON.stringify({ model: cfg.model, input: texts });
  let lastError = '';
  for (let attempt = 0; attempt <= cfg.retries; attempt++) {
    if (attempt > 0) await abortableSleep(250 * 2 ** (attempt - 1), opts.signal);
    if (opts.signal.aborted) throw new CancelledError();
    try {
      return await once(url, headers, body, cfg, texts.length, opts.signal);
    } catch (err) {
      if (opts.signal.aborted) throw new CancelledError();
      if (!(err instanceof Retryable)) throw err;
      lastError = err.message;
    }
  }
  throw new NetworkError(
    `embeddings endpoint ${url} failed after ${cfg.retries + 1} attempt${cfg.retries ? 's' : ''}: ${lastError}`,
    'check learn.encoder.url in config.json (or KOURAI_EMBEDDINGS_URL) and that the server is running (e.g. `ollama serve`)',
  );
}

async function once(
  url: string,
  headers: Record<string, string>,
  body: string,
  cfg: EndpointEncoderConfig,
  n: number,
  signal: AbortSignal,
): Promise<Float32Array[]> {
  const timeout = AbortSignal.timeout(cfg.timeoutMs);
  let res: Response;
  try {
    res = await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.any([signal, timeout]) });
  } catch (err) {
    if (timeout.aborted) throw new Retryable(`no answer within ${cfg.timeoutMs} ms`);
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    throw new Retryable(cause?.code ?? cause?.message ?? (err as Error).message);
  }
  let text: string;
  try {
    text = await res.text();
  } catch (err) {
    if (timeout.aborted) throw new Retryable(`no answer within ${cfg.timeoutMs} ms`);
    throw new Retryable(`the answer broke off: ${(err as Error).message}`);
  }
  if (res.status === 429 || res.status >= 500) throw new Retryable(`HTTP ${res.status}${snippet(text)}`);
  if (!res.ok)
    throw new NetworkError(
      `embeddings endpoint ${url} refused the request: HTTP ${res.status}${snippet(text)}`,
      res.status === 404 ? `is the model "${cfg.model}" available there, and does the URL end in /v1?` : undefined,
    );
  return parse(url, text, n, cfg.dimensions);
}

function snippet(text: string): string {
  const t = text.replace(/\s+/g, ' ').trim().slice(0, 160);
  return t ? `: ${t}` : '';
}

function parse(url: string, text: string, n: number, dims: number | null): Float32Array[] {
  const fail = (what: string): InvalidDataError =>
    new InvalidDataError(`embeddings endpoint ${url} answered with ${what}`);
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw fail('something that is not JSON');
  }
  const data = (doc as { data?: unknown })?.data;
  if (!Array.isArray(data)) throw fail('no "data" array');
  if (data.length !== n) throw fail(`${data.length} embeddings for ${n} texts`);
  const out: Float32Array[] = new Array<Float32Array>(n);
  let dim = dims;
  data.forEach((d: unknown, k: number) => {
    const item = d as { index?: unknown; embedding?: unknown };
    const raw = item.index === undefined ? k : item.index;
    if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 0 || raw >= n || out[raw])
      throw fail(`a bad or repeated index ${JSON.stringify(item.index)}`);
    const i = raw;
    const e = item.embedding;
    if (!Array.isArray(e) || e.length === 0) throw fail(`no embedding at index ${String(i)}`);
    if (dim !== null && e.length !== dim) throw fail(`an embedding of ${e.length} dimensions (expected ${dim})`);
    dim = e.length;
    const v = new Float32Array(e.length);
    for (let j = 0; j < e.length; j++) {
      const x = e[j] as unknown;
      if (typeof x !== 'number' || !Number.isFinite(x))
        throw fail(`a value that is not a finite number at index ${String(i)}`);
      v[j] = x;
    }
    out[i] = v;
  });
  return out;
}
