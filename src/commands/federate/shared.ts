import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Ctx } from '../../context.js';
import { EnvironmentError, fsError, UsageError } from '../../errors.js';
import { warn } from '../../output/notice.js';

/**
 * The token from --token (or `-` for stdin), --token-file, or KOURAI_COUNCIL_TOKEN; never echoed.
 * A file or stdin may also hold the JSON document `council forge add --json` prints (its `token`),
 * so an operator's output can be handed over as it is.
 */
export async function readToken(
  ctx: Ctx,
  opts: { token?: string | undefined; tokenFile?: string | undefined },
): Promise<string> {
  if (opts.token !== undefined && opts.tokenFile !== undefined)
    throw new UsageError('--token and --token-file: pass one of them');
  let raw: string | undefined;
  if (opts.tokenFile !== undefined) {
    const path = resolve(ctx.cwd, opts.tokenFile);
    try {
      const mode = statSync(path).mode;
      if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
        throw new EnvironmentError(
          `the token file ${path} can be read by other users (mode ${(mode & 0o777).toString(8)}): refusing to use it`,
          `chmod 600 ${path}, and ask the council operator for a new token if others may have read it (kourai council forge rotate)`,
        );
      }
      raw = readFileSync(path, 'utf8');
    } catch (err) {
      if (err instanceof EnvironmentError) throw err;
      throw fsError(err, 'token file', path);
    }
  } else if (opts.token === '-') {
    const chunks: Buffer[] = [];
    for await (const c of ctx.stdin) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(String(c)));
    raw = Buffer.concat(chunks).toString('utf8');
  } else {
    // A value on the command line sits in the process list (/proc/PID/cmdline, ps) for other users to read.
    if (opts.token !== undefined)
      warn(
        ctx,
        '--token puts the token in the process list, where other users on this machine can read it; pass --token-file FILE (mode 600) or --token - (read from stdin) instead',
      );
    raw = opts.token ?? ctx.env.KOURAI_COUNCIL_TOKEN;
  }
  let token = raw?.trim();
  if (token?.startsWith('{')) token = tokenOfDocument(token, opts.tokenFile ?? 'stdin');
  if (!token)
    throw new UsageError(
      '--token: required: the forge token the council operator gave you',
      'pass --token T, --token - (read from stdin), --token-file FILE or set KOURAI_COUNCIL_TOKEN',
    );
  if (/\s/.test(token)) throw new UsageError('--token: a token is one word (no spaces or line breaks)');
  return token;
}

function tokenOfDocument(text: string, where: string): string {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new UsageError(`${where}: not a token and not valid JSON`);
  }
  const token = (doc as { token?: unknown } | null)?.token;
  if (typeof token !== 'string')
    throw new UsageError(
      `${where}: a JSON token file needs a "token" string (as \`kourai council forge add --json\` prints)`,
    );
  return token.trim();
}
