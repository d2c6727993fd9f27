import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  lstatSync,
  openSync,
  readlinkSync,
  statSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { dirname } from 'node:path';
import { EnvironmentError, fsError } from '../../errors.js';

/**
 * The file primitives every memoir writer uses: no symlink is ever written through (O_NOFOLLOW),
 * writes are whole, and a file just created has its directory fsynced too.
 */

/** kourai never writes through a symlink: the file it would change is not the one named. */
export function symlinkRefused(path: string, what = 'memoir'): EnvironmentError {
  let target = '?';
  try {
    target = readlinkSync(path);
  } catch {
    // raced away: the message still names the link
  }
  return new EnvironmentError(
    `refusing to write through a symlink: ${what} ${path} -> ${target}`,
    `name the file itself (${target}), or replace the link with the file`,
  );
}

/**
 * Opens `path` with `flags | O_NOFOLLOW`, creating it (mode 0644) when `create` and missing.
 * A symlink is refused naming link and target; other failures map to one-line errors.
 */
export function openNoFollow(
  path: string,
  flags: number,
  what: string,
  create: boolean,
): { fd: number; created: boolean } {
  // O_NONBLOCK: opening a FIFO that slipped past the check below must not wait for a peer.
  const nofollow = flags | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  assertRegular(path, what, false);
  try {
    return { fd: regularFd(openSync(path, nofollow), path, what), created: false };
  } catch (err) {
    if (err instanceof EnvironmentError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') throw symlinkRefused(path, what);
    if (code !== 'ENOENT' || !create) throw fsError(err, what, path);
  }
  try {
    return { fd: openSync(path, nofollow | constants.O_CREAT | constants.O_EXCL, 0o644), created: true };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return openNoFollow(path, flags, what, false); // another writer created it first
    if (code === 'ELOOP') throw symlinkRefused(path, what);
    throw fsError(err, what, path);
  }
}

/** The kind of a file that is not a regular file, in words; undefined for a regular file. */
export function nonRegularKind(st: Stats): string | undefined {
  if (st.isFile()) return undefined;
  if (st.isFIFO()) return 'a FIFO (named pipe)';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice()) return 'a character device';
  if (st.isBlockDevice()) return 'a block device';
  if (st.isDirectory()) return 'a directory';
  if (st.isSymbolicLink()) return undefined; // refused by O_NOFOLLOW, naming its target
  return 'not a regular file';
}

export function nonRegularRefused(path: string, kind: string, what: string): EnvironmentError {
  return new EnvironmentError(
    `${what} ${path} is ${kind}, not a regular file: refusing to use it`,
    `name a regular file (a ${what} is plain JSONL); nothing was written`,
  );
}

/**
 * Refuses a path that exists and is not a regular file (a FIFO, a device, a socket) before anything
 * opens it or is created beside it; a missing path passes. `follow`: judge a symlink's target.
 */
export function assertRegular(path: string, what: string, follow: boolean): void {
  let st: Stats;
  try {
    st = follow ? statSync(path) : lstatSync(path);
  } catch {
    return; // missing (or unreadable): the open that follows says so
  }
  const kind = nonRegularKind(st);
  if (kind) throw nonRegularRefused(path, kind, what);
}

/** `fd` when it is a regular file; otherwise it is closed and refused (the path was swapped after the check). */
export function regularFd(fd: number, path: string, what: string): number {
  const kind = nonRegularKind(fstatSync(fd));
  if (kind === undefined) return fd;
  closeSync(fd);
  throw nonRegularRefused(path, kind, what);
}

export function writeAll(fd: number, buf: Uint8Array, position?: number): void {
  let written = 0;
  while (written < buf.length) {
    written +=
      position === undefined
        ? writeSync(fd, buf, written, buf.length - written)
        : writeSync(fd, buf, written, buf.length - written, position + written);
  }
}

/**
 * fsync of the directory holding `file`, so that a file just created there survives a power
 * loss (its directory entry is data of the directory, not of the file).
 */
export function fsyncDir(file: string): void {
  let dfd: number;
  try {
    dfd = openSync(dirname(file), 'r');
  } catch {
    return; // the file itself is synced; nothing more can be done here
  }
  try {
    fsyncSync(dfd);
  } catch {
    // some filesystems refuse fsync on a directory
  } finally {
    closeSync(dfd);
  }
}
