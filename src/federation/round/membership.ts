/**
 * The forge's membership of a council (`kourai federate join`): the council's URL, this forge's
 * bearer token there, and what the join found. Kept in `$KOURAI_HOME/federation/membership.json`,
 * a file only the user can read (0600 in a 0700 directory). The token is a secret: it is never
 * printed, never logged, and removed from any error text (redactSecret) before it is shown.
 */
import { lstatSync, rmSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { EnvironmentError, fsError, KouraiError, UsageError } from '../../errors.js';
import { readPrivateFile, writePrivateFile } from '../../runtime/private-file.js';
import { normalizeUrl } from './round-key.js';

export const MEMBERSHIP_FORMAT = 'kourai.federation-membership/1';

export const MembershipSchema = z
  .object({
    format: z.literal(MEMBERSHIP_FORMAT),
    url: z.string().min(1),
    token: z.string().min(1),
    /** The forge's name at the council (GET /v1/me). */
    forge: z.string(),
    /** src/federation/round/round-key.ts: names this council in round keys. */
    council_key: z.string(),
    joined_at: z.string(),
    protocol: z.number().int(),
    council_version: z.string(),
    /** The forge's base-model fingerprint when it joined (a round checks the current one again). */
    base_fingerprint: z.string(),
    /** Where council_event entries of rounds go. */
    events_memoir: z.string(),
  })
  .strict();
export type Membership = z.infer<typeof MembershipSchema>;

export function membershipPath(home: string): string {
  return join(home, 'federation', 'membership.json');
}

/** The membership, or null when the forge has not joined a council. */
export function readMembership(home: string): Membership | null {
  const path = membershipPath(home);
  if (!checkPrivatePlace(home)) return null;
  const bytes = readPrivateFile(path, 'the council membership file');
  if (bytes === null) return null;
  let doc: unknown;
  try {
    doc = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new EnvironmentError(
      `the council membership file ${path} is not valid JSON`,
      'run `kourai federate join --server URL --token T` again',
    );
  }
  const parsed = MembershipSchema.safeParse(doc);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new EnvironmentError(
      `the council membership file ${path} is damaged (${issue?.path.join('.') || 'document'}: ${issue?.message ?? 'invalid'})`,
      'run `kourai federate join --server URL --token T` again',
    );
  }
  return parsed.data;
}

/** The membership, or an error (exit 3) saying how to join. */
export function requireMembership(home: string): Membership {
  const m = readMembership(home);
  if (!m)
    throw new EnvironmentError(
      'this forge has not joined a council: nothing was sent',
      'kourai federate join --server URL --token TOKEN',
    );
  return m;
}

export function writeMembership(home: string, m: Membership): void {
  checkPrivatePlace(home, { creating: true });
  writePrivateFile(
    membershipPath(home),
    `${JSON.stringify(MembershipSchema.parse(m), null, 2)}\n`,
    'the council membership file',
  );
}

/** The most a membership file holds (a URL, a token, a few names): anything larger is not one. */
export const MEMBERSHIP_MAX_BYTES = 64 * 1024;

/**
 * The membership holds the token: its directory and file must be the user's alone — owned by the
 * user, no access for group or others (0700 / 0600), and neither a symbolic link (a link could
 * point anywhere another user can change). Returns whether the file exists; throws exit 3 naming
 * what is wrong and the fix. `creating`: the directory may not exist yet.
 */
function checkPrivatePlace(home: string, opts: { creating?: boolean } = {}): boolean {
  const file = membershipPath(home);
  const dir = dirname(file);
  const refuse = (what: string, path: string, why: string, fix: string): never => {
    throw new EnvironmentError(`${what} ${path} ${why}: refusing to use it (it holds the council token)`, fix);
  };
  const look = (path: string): Stats | null => {
    try {
      return lstatSync(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw fsError(err, 'the council membership file', path);
    }
  };
  const d = look(dir);
  if (!d) return false;
  if (d.isSymbolicLink())
    refuse(
      'the membership directory',
      dir,
      'is a symbolic link',
      `replace it with a real directory: mkdir -m 700 ${dir}, then kourai federate join again`,
    );
  if (!d.isDirectory())
    refuse('the membership directory', dir, 'is not a directory', `remove it, then kourai federate join again`);
  if (process.platform !== 'win32') {
    if (typeof process.getuid === 'function' && d.uid !== process.getuid())
      refuse(
        'the membership directory',
        dir,
        `belongs to another user (uid ${d.uid})`,
        `remove it, then kourai federate join again`,
      );
    if ((d.mode & 0o077) !== 0 && !opts.creating)
      refuse(
        'the membership directory',
        dir,
        `is open to other users (mode ${(d.mode & 0o777).toString(8)})`,
        `chmod 700 ${dir}, and replace the token if others may have read it`,
      );
  }
  const f = look(file);
  if (!f) return false;
  if (f.isSymbolicLink())
    refuse('the council membership file', file, 'is a symbolic link', `remove it, then kourai federate join again`);
  if (!f.isFile())
    refuse('the council membership file', file, 'is not a regular file', `remove it, then kourai federate join again`);
  if (process.platform !== 'win32' && typeof process.getuid === 'function' && f.uid !== process.getuid())
    refuse(
      'the council membership file',
      file,
      `belongs to another user (uid ${f.uid})`,
      `remove it, then kourai federate join again`,
    );
  if (f.size > MEMBERSHIP_MAX_BYTES && !opts.creating)
    refuse(
      'the council membership file',
      file,
      `is too large (${f.size} bytes; a membership holds at most ${MEMBERSHIP_MAX_BYTES})`,
      'remove it, then kourai federate join again',
    );
  return true;
}

/** Forgets the membership; returns whether there was one. */
export function forgetMembership(home: string): boolean {
  const path = membershipPath(home);
  const had = readPrivateFile(path, 'the council membership file') !== null;
  try {
    rmSync(path, { force: true });
  } catch (err) {
    throw fsError(err, 'the council membership file', path);
  }
  return had;
}

/** Checks a council URL: http(s), no credentials, query or fragment. Returns it normalised. */
export function checkCouncilUrl(raw: string, flag = '--server'): string {
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new UsageError(
      `${flag}: not a URL: ${JSON.stringify(redactUrl(raw))}`,
      'e.g. --server https://council.example.org',
    );
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new UsageError(`${flag}: the council speaks HTTP(S), not ${u.protocol.replace(/:$/, '')}`);
  if (u.username || u.password)
    throw new UsageError(
      `${flag}: credentials in the URL are not accepted (they would be stored and shown in clear)`,
      'pass the token with --token or --token-file',
    );
  if (u.search || u.hash) throw new UsageError(`${flag}: the council URL takes no query or fragment`);
  return normalizeUrl(u.toString());
}

/** A URL with any userinfo replaced (for messages about a URL that was refused). */
function redactUrl(raw: string): string {
  return raw.replace(/\/\/[^/@\s]*@/, '//[redacted]@');
}

/** Replaces every occurrence of the secret in a text. */
export function redactSecret(text: string, secret: string | null | undefined): string {
  if (!secret || secret.length < 4) return text;
  return text.split(secret).join('[redacted]');
}

/**
 * The error with the secret removed from its message, hint and stack, and its cause dropped (a
 * cause could carry request details). The error keeps its class (and so its exit code) when its
 * fields can be changed; an error whose message cannot be set (a DOMException's is a getter, a
 * frozen error's is read-only) is replaced by a plain Error with the redacted text. Never throws:
 * it runs on the way out of every failure, Ctrl-C included.
 */
export function redactError<E>(err: E, secret: string | null | undefined): E {
  if (!secret || !(err instanceof Error)) return err;
  try {
    const message = redactSecret(String(err.message), secret);
    const stack = typeof err.stack === 'string' ? redactSecret(err.stack, secret) : undefined;
    if (!setField(err, 'message', message) || (stack !== undefined && !setField(err, 'stack', stack))) {
      const copy = new Error(message);
      copy.name = String(err.name);
      if (stack !== undefined) copy.stack = stack;
      return copy as E;
    }
    if (err instanceof KouraiError && err.hint !== undefined) setField(err, 'hint', redactSecret(err.hint, secret));
    if ('cause' in err) {
      try {
        delete (err as { cause?: unknown }).cause;
      } catch {
        setField(err, 'cause', undefined);
      }
    }
    return err;
  } catch {
    return new Error('a council request failed (its details are withheld: they could hold the token)') as E;
  }
}

/** Sets a field if the object lets it; whether it now holds the value. */
function setField(target: object, key: string, value: unknown): boolean {
  try {
    (target as Record<string, unknown>)[key] = value;
    return (target as Record<string, unknown>)[key] === value;
  } catch {
    return false;
  }
}
