import {
  closeSync,
  constants,
  existsSync,
  fstatSync,
  fsyncSync,
  linkSync,
  openSync,
  readdirSync,
  rmSync,
  statSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import fsx from 'fs-native-extensions';
import { CancelledError } from '../errors.js';
import { fsyncDir } from '../memoir/file/durable.js';
import { describeHolder } from '../memoir/file/lock-holder.js';
import { abortableSleep } from '../runtime/cancel.js';
import { processAlive } from '../runtime/process-alive.js';

/**
 * A from-scratch index is built in a private file next to `index.db` and published when it is
 * complete. Nobody else can see that file, so it is written once (no WAL to write every page to
 * and checkpoint again), with no fsync until the end: the journal is kept in memory (ROLLBACK
 * still works) and the lock is exclusive. Publishing = switch it to WAL, close it, fsync it, and
 * hard-link it to `index.db`, which fails when `index.db` exists: a concurrent builder that
 * published first wins, and the loser throws its file away and uses the winner's.
 *
 * Only when no `index.db` exists (nor a `-wal`/`-shm` without it): replacing a WAL database that
 * other processes may have open is unsafe (a new file would meet the old one's WAL), so
 * `--rebuild` of an existing index still rebuilds in place.
 *
 * One first build at a time: a builder holds the build lock (a kernel lock on `index.db.lock`,
 * released by the kernel if the builder dies) from before it looks for `index.db` until it has
 * published. A second process waits for it (`claimFirstBuild`) and then opens the published index
 * instead of building its own; if the first builder died, it gets the lock and builds.
 *
 * A crash mid-build leaves `index.db.build-<pid>-<n>`, which nothing ever opens as the index; the
 * next staged build removes those whose process is gone.
 */
export interface Staging {
  /** The private file the build writes. */
  tmp: string;
  /** Where it is published (`index.db`). */
  final: string;
  /** Held until the build is published or given up. */
  lock: BuildLock;
}

const MARK = '.build-';
const SIDE_FILES = ['', '-journal', '-wal', '-shm'];

const indexExists = (final: string): boolean => SIDE_FILES.some((s) => existsSync(`${final}${s}`));

/**
 * The right to build the first index of `final`, taken once the process building it (if any) is
 * done: undefined when there is nothing to build (`final` or a WAL of it exists, perhaps just
 * published by the builder waited for) or no lock can be had here (an unwritable directory: the
 * caller opens the index as usual and says what is wrong). `onWait` is called once, naming the
 * holder, when another process is building it; `signal` stops the wait (CancelledError).
 */
export async function claimFirstBuild(
  final: string,
  opts: { signal?: AbortSignal; onWait?: (holder: string) => void; pollMs?: number } = {},
): Promise<BuildLock | undefined> {
  let told = false;
  for (;;) {
    if (indexExists(final)) return undefined;
    const got = tryBuildLock(final);
    if (got === undefined) return undefined;
    if (got instanceof BuildLock) {
      if (!indexExists(final)) return got;
      got.release();
      return undefined;
    }
    if (!told) opts.onWait?.(got.holder);
    told = true;
    try {
      await abortableSleep(opts.pollMs ?? 50, opts.signal);
    } catch (err) {
      throw err instanceof CancelledError
        ? new CancelledError(`cancelled while waiting for ${got.holder} to build the memoir index: nothing was written`)
        : err;
    }
  }
}

/**
 * An exclusive kernel lock on `<final>.lock`. The file is removed by its holder before the lock
 * is released, so it is not left behind: a process that locked a file since unlinked (or replaced)
 * sees another inode under the name and tries again.
 */
export class BuildLock {
  private released = false;
  constructor(
    private readonly fd: number,
    readonly path: string,
  ) {}

  release(): void {
    if (this.released) return;
    this.released = true;
    rmSync(this.path, { force: true }); // still ours: nobody else can hold it
    closeSync(this.fd); // releases the lock
  }
}

/** The lock, or who holds it, or undefined when it cannot be taken here (no lock file can be made). */
function tryBuildLock(final: string): BuildLock | { holder: string } | undefined {
  const path = `${final}.lock`;
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDWR | constants.O_CREAT | constants.O_NOFOLLOW, 0o644);
  } catch {
    return undefined;
  }
  let got: boolean;
  try {
    got = fsx.tryLock(fd);
  } catch {
    closeSync(fd);
    return undefined; // no locks on this file system: the caller builds in place, as without staging
  }
  const st = fstatSync(fd);
  if (!got) {
    closeSync(fd);
    return { holder: describeHolder(st) ?? 'another process' };
  }
  if (!sameFile(path, st.ino, st.dev)) {
    closeSync(fd); // its holder removed it after we opened it: take the one there now
    return tryBuildLock(final);
  }
  return new BuildLock(fd, path);
}

function sameFile(path: string, ino: number, dev: number): boolean {
  try {
    const now = statSync(path);
    return now.ino === ino && now.dev === dev;
  } catch {
    return false;
  }
}

/** A private file to build a new index of `final` in, holding `lock` (from claimFirstBuild). */
export function stageIndex(final: string, lock: BuildLock): Staging {
  removeLeftovers(final);
  return { tmp: `${final}${MARK}${process.pid}-${process.hrtime.bigint().toString(36)}`, final, lock };
}

/** Removes a staged file (a cancelled or failed build, or after publishing it) and lets the next builder in. */
export function discard(s: Staging): void {
  for (const suffix of SIDE_FILES) rmSync(`${s.tmp}${suffix}`, { force: true });
  s.lock.release();
}

/**
 * Makes the closed staged file durable and links it into place. Returns false when another
 * builder published first (or removed our file as a leftover): the caller uses theirs.
 */
export function publish(s: Staging): boolean {
  const fd = openSync(s.tmp, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  let won = true;
  try {
    linkSync(s.tmp, s.final);
  } catch {
    // EEXIST: someone else published; ENOENT: our file was taken for a leftover; a file system
    // without hard links: the caller builds in place instead.
    won = false;
  }
  discard(s);
  if (won) fsyncDir(s.final); // the new name is durable too
  return won;
}

/** Staged files of builds whose process no longer runs. */
export function leftovers(final: string): string[] {
  const dir = dirname(final);
  const prefix = `${basename(final)}${MARK}`;
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.startsWith(prefix))
    .filter((n) => {
      const pid = Number(/^(\d+)-/.exec(n.slice(prefix.length))?.[1]);
      return Number.isInteger(pid) && pid !== process.pid && !processAlive(pid);
    })
    .map((n) => join(dir, n));
}

function removeLeftovers(final: string): void {
  for (const f of leftovers(final)) rmSync(f, { force: true });
}
