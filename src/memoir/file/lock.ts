import { closeSync, constants, fstatSync } from 'node:fs';
import fsx from 'fs-native-extensions';
import { CancelledError, ConflictError, EnvironmentError } from '../../errors.js';
import { openNoFollow } from './durable.js';
import { describeHolder } from './lock-holder.js';

/**
 * The writer lock of a memoir is a kernel record lock on the memoir file itself (the whole file,
 * `fcntl` open-file-description lock on Linux, `flock` on macOS), not a lock file beside it:
 * - the kernel releases it when its holder dies, so there is never a stale lock to take over;
 * - it is exclusive between processes and between two opens in one process;
 * - nothing else on disk can block it (a leftover or garbage `memoir.jsonl.lock` is ignored);
 * - a Python host takes the same lock with the standard library: `fcntl.lockf(f, fcntl.LOCK_EX)`
 *   on the memoir opened for appending (README, "Sharing a memoir with Python hosts").
 * Lock-free hosts stay safe as long as each of their lines is one O_APPEND write.
 */
export interface MemoirLock {
  /** Read-write, O_APPEND: writes land at the end, reads and truncation take explicit offsets. */
  readonly fd: number;
  readonly path: string;
  /** True when this open created the memoir. */
  readonly created: boolean;
  release(): void;
}

export interface LockOptions {
  /** How long to wait for another writer (default 5 s), then ConflictError (exit 7). */
  waitMs?: number;
  pollMs?: number;
  /** Create the memoir when it does not exist (append); otherwise a missing file is not found. */
  create?: boolean;
  signal?: AbortSignal;
}

export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Opens the memoir for writing without following a symlink (O_NOFOLLOW) and takes its lock,
 * waiting up to `waitMs`.
 */
export function lockMemoir(path: string, opts: LockOptions = {}): MemoirLock {
  const { fd, created } = openNoFollow(path, constants.O_RDWR | constants.O_APPEND, 'memoir', opts.create ?? true);
  try {
    waitForLock(fd, path, opts);
  } catch (err) {
    closeSync(fd);
    throw err;
  }
  let released = false;
  return {
    fd,
    path,
    created,
    release() {
      if (released) return;
      released = true;
      try {
        fsx.unlock(fd);
      } finally {
        closeSync(fd); // closing releases the lock in any case
      }
    },
  };
}

function waitForLock(fd: number, path: string, opts: LockOptions): void {
  const deadline = Date.now() + (opts.waitMs ?? 5000);
  for (;;) {
    let got: boolean;
    try {
      got = fsx.tryLock(fd);
    } catch (err) {
      throw new EnvironmentError(
        `cannot lock ${path}: ${(err as Error).message}`,
        'the filesystem must support fcntl/flock locks',
        err,
      );
    }
    if (got) return;
    if (opts.signal?.aborted) throw new CancelledError(`cancelled while waiting for the memoir lock: ${path}`);
    if (Date.now() >= deadline) {
      const holder = describeHolder(fstatSync(fd));
      throw new ConflictError(
        `memoir is being written by ${holder ?? 'another process'}: ${path}`,
        'retry when that writer is done (the lock is released when it exits)',
      );
    }
    sleepSync(opts.pollMs ?? 10);
  }
}
