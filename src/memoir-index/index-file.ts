import {
  accessSync,
  chmodSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ConflictError, EnvironmentError, IntegrityError, type KouraiError } from '../errors.js';
import { openDb, type DB } from '../store/db.js';
import { INDEX_MIGRATIONS } from './index-migrations.js';

/**
 * Where the memoir index lives and what to do when that file cannot be used. The index is a
 * cache of the memoirs, so:
 * - a damaged file (not a database, a bad header, corrupt pages) is moved aside to
 *   `index.db.damaged-<time>` and a new one is built, with a note;
 * - a home or index that cannot be written is a permissions problem (exit 3, naming the path)
 *   for commands that must write it (`memoir index`), while reading commands still work: from a
 *   temporary copy of the index (brought up to date there), or from an index in memory.
 */
export type IndexSource = 'file' | 'copy' | 'memory';

export interface OpenedIndexDb {
  db: DB;
  source: IndexSource;
  notes: string[];
  /** Removes a temporary copy (source `copy`). */
  cleanup?: () => void;
}

const DAMAGE = new Set([
  'SQLITE_CORRUPT',
  'SQLITE_NOTADB',
  'SQLITE_CORRUPT_INDEX',
  'SQLITE_CORRUPT_SEQUENCE',
  'SQLITE_CORRUPT_VTAB',
]);
const PERMISSION = new Set([
  'SQLITE_READONLY',
  'SQLITE_CANTOPEN',
  'SQLITE_READONLY_DIRECTORY',
  'SQLITE_READONLY_DBMOVED',
  'SQLITE_AUTH',
  'SQLITE_PERM',
  'EACCES',
  'EPERM',
  'EROFS',
]);

function codeOf(err: unknown): string {
  let e: unknown = err;
  while (e && typeof e === 'object') {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (code.startsWith('SQLITE_') || code.startsWith('E'))) return code;
    e = (e as { cause?: unknown }).cause;
  }
  const message = err instanceof Error ? err.message : String(err);
  if (/file is not a database|malformed|corrupt/i.test(message)) return 'SQLITE_CORRUPT';
  if (/readonly|read-only|permission denied|unable to open/i.test(message)) return 'SQLITE_READONLY';
  return '';
}

export const isDamage = (err: unknown): boolean => DAMAGE.has(codeOf(err)) || codeOf(err).startsWith('SQLITE_CORRUPT');
export const isPermission = (err: unknown): boolean =>
  PERMISSION.has(codeOf(err)) || codeOf(err).startsWith('SQLITE_READONLY');

const isBusy = (code: string): boolean => code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
const isFull = (code: string): boolean => code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT';
const isIo = (code: string): boolean => code.startsWith('SQLITE_IOERR') || code === 'EIO';

/**
 * A write to the index that failed for a reason outside kourai, as the one-line error the operator
 * gets: another process holding the write lock past the busy timeout (exit 7), a full disk, an I/O
 * error, a file or disk that turned read-only (exit 3). `after` says what state the index was
 * left in (each writer rolls back what it had not committed). Undefined for any other error.
 */
export function writeFailure(err: unknown, path: string, after: string): KouraiError | undefined {
  const code = codeOf(err);
  const where = `the memoir index ${path}`;
  if (isBusy(code)) {
    return new ConflictError(
      `${where} is locked by another process (longer than the busy timeout): ${after}`,
      'run the command again once the other kourai command writing the index (memoir index, a first search) has finished',
    );
  }
  const why = isFull(code)
    ? 'the disk is full'
    : isIo(code)
      ? `an I/O error (${code})`
      : isPermission(err)
        ? (err as Error).message
        : undefined;
  if (why === undefined) return undefined;
  return new EnvironmentError(
    `cannot write ${where}: ${why}: ${after}`,
    isFull(code)
      ? 'free some space, or point KOURAI_HOME at another disk (the index is a cache: deleting it loses nothing)'
      : 'check the disk and the permissions, or point KOURAI_HOME at a writable directory',
    err,
  );
}

/** Moves a damaged index (and its WAL and shared-memory files) aside; returns where it went. */
export function moveAside(path: string, now: Date): string {
  const stamp = `${path}.damaged-${now.toISOString().replace(/[:.]/g, '-')}`;
  let aside = stamp;
  for (let n = 2; existsSync(aside); n++) aside = `${stamp}-${n}`;
  for (const suffix of ['', '-wal', '-shm']) {
    try {
      renameSync(`${path}${suffix}`, `${aside}${suffix}`);
    } catch {
      // not there (no WAL) or already gone
    }
  }
  return aside;
}

/** Why `path` (or its directory) cannot be written, or undefined when it can. */
export function unwritable(path: string): string | undefined {
  const dir = dirname(path);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    return `${dir} cannot be created (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`;
  }
  try {
    accessSync(dir, constants.W_OK);
  } catch {
    return `${dir} is not writable`;
  }
  if (existsSync(path)) {
    try {
      accessSync(path, constants.W_OK);
    } catch {
      return `${path} is read-only`;
    }
  }
  return undefined;
}

/** For commands that must write the index (`memoir index`): exit 3 naming the path. */
export function assertIndexWritable(path: string): void {
  const why = unwritable(path);
  if (why)
    throw new EnvironmentError(
      `cannot write the memoir index ${path}: ${why}`,
      'fix the permissions, or point KOURAI_HOME at a writable directory',
    );
}

export function memoryDb(): DB {
  return openDb(':memory:', INDEX_MIGRATIONS);
}

/** Opens the index file, replacing a damaged one, falling back as the header comment says. */
export function openIndexDb(path: string, now: () => Date): OpenedIndexDb {
  const notes: string[] = [];
  const why = unwritable(path);
  if (why) return readOnly(path, why, notes);
  try {
    return { db: openDb(path, INDEX_MIGRATIONS), source: 'file', notes };
  } catch (err) {
    if (isPermission(err)) return readOnly(path, (err as Error).message, notes);
    // A full disk says nothing about the file: read it as a read-only home would, never move it aside.
    if (isFull(codeOf(err)) || isIo(codeOf(err)))
      return readOnly(path, isFull(codeOf(err)) ? 'the disk is full' : `an I/O error (${codeOf(err)})`, notes);
    if (!isDamage(err) && !(err instanceof IntegrityError)) throw err;
    const aside = moveAside(path, now());
    notes.push(
      `the memoir index ${path} was damaged (${reason(err)}); it was moved aside to ${aside} and is rebuilt from the memoirs`,
    );
    return { db: openDb(path, INDEX_MIGRATIONS), source: 'file', notes };
  }
}

function readOnly(path: string, why: string, notes: string[]): OpenedIndexDb {
  if (existsSync(path)) {
    // SQLite cannot open a WAL database read-only in a directory it cannot write: read a copy.
    let dir: string | undefined;
    try {
      dir = mkdtempSync(join(tmpdir(), 'kourai-index-'));
      const copy = join(dir, 'index.db');
      copyFileSync(path, copy);
      chmodSync(copy, 0o600); // the copy keeps the original's mode: make it ours
      if (existsSync(`${path}-wal`)) {
        copyFileSync(`${path}-wal`, `${copy}-wal`);
        chmodSync(`${copy}-wal`, 0o600);
      }
      const db = openDb(copy, INDEX_MIGRATIONS);
      const d = dir;
      notes.push(`the memoir index ${path} cannot be written (${why}): reading a temporary copy of it for this run`);
      return { db, source: 'copy', notes, cleanup: () => rmSync(d, { recursive: true, force: true }) };
    } catch {
      if (dir) rmSync(dir, { recursive: true, force: true }); // unreadable as well: fall through to memory
    }
  }
  notes.push(`the memoir index cannot be written (${why}): using an index in memory for this run`);
  return { db: memoryDb(), source: 'memory', notes };
}

function reason(err: unknown): string {
  const m = err instanceof Error ? err.message : String(err);
  return m.replace(/^database .* is unreadable: /, '');
}

/**
 * The index connection as other modules see it: every statement they prepare (and every `exec`
 * or `pragma`) turns a corruption error into `onDamage(err)`, which moves the file aside and
 * says so, instead of an "unexpected error". (The build's own statements use the bare
 * connection and recover in place.)
 */
export function guardDb(db: DB, onDamage: (err: unknown) => Error): DB {
  const guard = <T>(fn: () => T): T => {
    try {
      return fn();
    } catch (err) {
      throw isDamage(err) ? onDamage(err) : err;
    }
  };
  const guardStatement = <S extends object>(stmt: S): S =>
    new Proxy(stmt, {
      get(target, prop, receiver) {
        const v = Reflect.get(target, prop, receiver) as unknown;
        if (typeof v !== 'function') return v;
        return (...args: unknown[]) => {
          const r = guard(() => (v as (...a: unknown[]) => unknown).apply(target, args));
          if (r === target) return guardStatement(target); // pluck(), raw(), bind()… chain
          if (prop === 'iterate') {
            const it = r as Iterator<unknown> & Iterable<unknown>;
            return {
              next: () => guard(() => it.next()),
              return: (value?: unknown) => (it.return ? it.return(value) : { done: true, value }),
              [Symbol.iterator]() {
                return this;
              },
            };
          }
          return r;
        };
      },
    });
  return new Proxy(db, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver) as unknown;
      if (prop === 'prepare') return (sql: string) => guardStatement(guard(() => target.prepare(sql)));
      if (prop === 'exec') return (sql: string) => guard(() => target.exec(sql));
      if (prop === 'pragma') return (...a: Parameters<DB['pragma']>) => guard(() => target.pragma(...a));
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

/** A damaged index found while a command was reading it: moved aside; the next run rebuilds it. */
export class IndexDamagedError extends IntegrityError {}
