import { closeSync, existsSync, fsyncSync, linkSync, openSync, readdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fsyncDir } from '../memoir/durable.js';
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
 * A crash mid-build leaves `index.db.build-<pid>-<n>`, which nothing ever opens as the index; the
 * next staged build removes those whose process is gone.
 */
export interface Staging {
  /** The private file the build writes. */
  tmp: string;
  /** Where it is published (`index.db`). */
  final: string;
}

const MARK = '.build-';
const SIDE_FILES = ['', '-journal', '-wal', '-shm'];

/** A private file to build a new index of `final` in, or undefined when `final` (or a WAL of it) exists. */
export function stageIndex(final: string): Staging | undefined {
  if (SIDE_FILES.some((s) => existsSync(`${final}${s}`))) return undefined;
  removeLeftovers(final);
  return { tmp: `${final}${MARK}${process.pid}-${process.hrtime.bigint().toString(36)}`, final };
}

/** Removes a staged file (a cancelled or failed build, or after publishing it). */
export function discard(s: Staging): void {
  for (const suffix of SIDE_FILES) rmSync(`${s.tmp}${suffix}`, { force: true });
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
