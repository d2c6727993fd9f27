import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Ctx } from '../../context.js';
import { fsError, UsageError } from '../../errors.js';

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
