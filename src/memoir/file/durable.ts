import { closeSync, constants, fsyncSync, openSync, readlinkSync, writeSync } from 'node:fs';
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
  return new EnvironmentError(`refusing to write through a symlink: ${what} ${path} -> ${target}`, `name the file itself (${target}), or replace the link with the file`);
}

/**
 * Opens `path` with `flags | O_NOFOLLOW`, creating it (mode 0644) when `create` and missing.
 * A symlink is refused naming link and target; other failures map to one-line errors.
 */
export function openNoFollow(path: string, flags: number, what: string, create: boolean): { fd: number; created: boolean } {
  const nofollow = flags | constants.O_NOFOLLOW;
  try {
    return { fd: openSync(path, nofollow), created: false };
  } catch (err) {
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

export function writeAll(fd: number, buf: Uint8Array, position?: number): void {
  let written = 0;
  while (written < buf.length) {
    written += position === undefined ? writeSync(fd, buf, written, buf.length - written) : writeSync(fd, buf, written, buf.length - written, position + written);
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
