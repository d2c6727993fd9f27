import { chmodSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { EnvironmentError, fsError } from '../errors.js';
import { writeFileAtomic } from './atomic-write.js';

/**
 * Files only the user can read: secrets (the council token, the noise key). The directory is
 * created 0700 and the file written 0600 atomically (never a moment with wider permissions); a
 * secret file that others can read is refused rather than used, because whoever read it may hold
 * the secret already.
 */
export function writePrivateFile(
  path: string,
  data: string | Uint8Array,
  what: string,
  opts: { overwrite?: boolean } = {},
): void {
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (process.platform !== 'win32' && (statSync(dir).mode & 0o077) !== 0) chmodSync(dir, 0o700);
    writeFileAtomic(path, data, { mode: 0o600, overwrite: opts.overwrite ?? true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') throw err;
    throw fsError(err, what, path);
  }
}

/** The file's contents, or null when it does not exist; refuses a file group or others can read. */
export function readPrivateFile(path: string, what: string): Buffer | null {
  let mode: number;
  try {
    mode = statSync(path).mode;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw fsError(err, what, path);
  }
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new EnvironmentError(
      `${what} ${path} can be read by other users (mode ${(mode & 0o777).toString(8)}): refusing to use it`,
      `chmod 600 ${path}, and replace the secret if others may have read it`,
    );
  }
  try {
    return readFileSync(path);
  } catch (err) {
    throw fsError(err, what, path);
  }
}
