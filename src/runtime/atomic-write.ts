import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, linkSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Writes a whole file so that a crash, a full disk or a kill at any moment leaves either the old
 * file or the new one, never a torn mix: a temporary file in the same directory, written and
 * fsynced, then renamed over the target (or hard-linked to it when `overwrite` is false, which
 * fails instead of replacing an existing file), then the directory fsynced so the new name is
 * durable too. Throws the raw fs error (callers map it with fsError); the temporary file is
 * removed on failure.
 */
export function writeFileAtomic(
  path: string,
  data: Uint8Array | string,
  opts: { overwrite?: boolean; mode?: number } = {},
): void {
  const dir = dirname(path);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let fd = -1;
  try {
    fd = openSync(tmp, 'wx', opts.mode ?? 0o644);
    for (let off = 0; off < bytes.byteLength;) off += writeSync(fd, bytes, off, bytes.byteLength - off);
    fsyncSync(fd);
    closeSync(fd);
    fd = -1;
    if (opts.overwrite ?? true) renameSync(tmp, path);
    else {
      linkSync(tmp, path); // EEXIST when the target exists: nothing is replaced
      rmSync(tmp, { force: true });
    }
    fsyncDir(dir);
  } catch (err) {
    if (fd >= 0) closeSync(fd);
    rmSync(tmp, { force: true });
    throw err;
  }
}

/** fsync of a directory (makes a rename or a new name durable); a no-op where the OS refuses it. */
export function fsyncDir(dir: string): void {
  let fd = -1;
  try {
    fd = openSync(dir, 'r');
    fsyncSync(fd);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'EISDIR' && code !== 'EINVAL' && code !== 'EPERM' && code !== 'EBADF') throw err;
  } finally {
    if (fd >= 0) closeSync(fd);
  }
}
