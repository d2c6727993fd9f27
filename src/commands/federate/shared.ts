import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Ctx } from '../../context.js';
import { fsError, UsageError } from '../../errors.js';
import { httpTransport, type CouncilTransport } from '../../federation/round/transport.js';
import type { Membership } from '../../federation/round/membership.js';
import { learnConfig } from '../../train/learn-config.js';
import { openTextEncoder, type TextEncoder } from '../../train/text-encoder.js';

/** The token from --token (or `-` for stdin), --token-file, or KOURAI_COUNCIL_TOKEN; never echoed. */
export async function readToken(ctx: Ctx, opts: { token?: string | undefined; tokenFile?: string | undefined }): Promise<string> {
  if (opts.token !== undefined && opts.tokenFile !== undefined) throw new UsageError('--token and --token-file: pass one of them');
  let raw: string | undefined;
  if (opts.tokenFile !== undefined) {
    const path = resolve(ctx.cwd, opts.tokenFile);
    try {
      raw = readFileSync(path, 'utf8');
    } catch (err) {
      throw fsError(err, 'token file', path);
    }
  } else if (opts.token === '-') {
    const chunks: Buffer[] = [];
    for await (const c of ctx.stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
    raw = Buffer.concat(chunks).toString('utf8');
  } else raw = opts.token ?? ctx.env.KOURAI_COUNCIL_TOKEN;
  const token = raw?.trim();
  if (!token) throw new UsageError('--token: required: the forge token the council operator gave you', 'pass --token T, --token - (read from stdin), --token-file FILE or set KOURAI_COUNCIL_TOKEN');
  if (/\s/.test(token)) throw new UsageError('--token: a token is one word (no spaces or line breaks)');
  return token;
}

/** The transport to the joined council, with the process's Ctrl-C signal. */
export function councilTransport(ctx: Ctx, m: Pick<Membership, 'url' | 'token'>, opts: { encoding?: 'json' | 'safetensors'; timeoutMs?: number; retries?: number } = {}): CouncilTransport {
  return httpTransport(m.url, m.token, { signal: ctx.signal, ...opts });
}

/** The forge's base model (its encoder decides it), as training and the council see it. Close it. */
export async function forgeBase(ctx: Ctx, home: string): Promise<TextEncoder> {
  return openTextEncoder(learnConfig(home, ctx.env).encoder, { home, env: ctx.env, signal: ctx.signal });
}
