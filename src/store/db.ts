import Database from 'better-sqlite3';
import { chmodSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ConflictError, EnvironmentError, IntegrityError, type KouraiError } from '../errors.js';

export type DB = Database.Database;

export interface Migration {
  version: number;
  up: string | ((db: DB) => void);
}

/**
 * One connection per process and file: WAL, foreign keys on, an explicit busy timeout, and
 * numbered migrations applied in one transaction each (tracked by `PRAGMA user_version`).
 */
export function openDb(
  path: string,
  migrations: readonly Migration[],
  opts: { readonly?: boolean; private?: boolean } = {},
): DB {
  let db: DB;
  try {
    // Read-only opens create nothing: not the directory, not the file (read-only commands on a fresh home).
    if (!opts.readonly) mkdirSync(dirname(path), { recursive: true });
    db = opts.readonly ? openReadOnly(path) : new Database(path);
  } catch (err) {
    throw new EnvironmentError(
      `cannot open database ${path}: ${(err as Error).message}`,
      'check that the directory exists and is writable (see `kourai doctor`)',
      err,
    );
  }
  try {
    // The busy timeout first: switching to WAL and migrating both take locks other processes may hold.
    db.pragma('busy_timeout = 5000');
    if (opts.private) {
      // A new file no other process can see yet (store/index-staging.ts): written once, no WAL, no fsync
      // until the owner publishes it; the journal in memory keeps ROLLBACK working.
      db.pragma('locking_mode = EXCLUSIVE');
      db.pragma('journal_mode = MEMORY');
      db.pragma('synchronous = OFF');
    } else {
      if (!opts.readonly) db.pragma('journal_mode = WAL');
      db.pragma('synchronous = NORMAL');
    }
    db.pragma('foreign_keys = ON');
    if (opts.readonly)
      checkNotNewer(
        db,
        migrations.reduce((m, x) => Math.max(m, x.version), 0),
      );
    else migrate(db, migrations);
  } catch (err) {
    db.close();
    if (err instanceof Error && 'exitCode' in err) throw err;
    throw (
      outsideCause(err, path) ??
      new IntegrityError(
        `database ${path} is unreadable: ${(err as Error).message}`,
        `move it aside; an index can be rebuilt with \`kourai memoir index --rebuild\``,
      )
    );
  }
  return db;
}

/** The SQLite result code or errno code of an error (or of its causes), '' when it has none. */
export function sqliteCode(err: unknown): string {
  for (let e: unknown = err; e && typeof e === 'object'; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (code.startsWith('SQLITE_') || code.startsWith('E'))) return code;
  }
  return '';
}

export const isPermissionCode = (code: string): boolean =>
  code.startsWith('SQLITE_READONLY') ||
  code.startsWith('SQLITE_CANTOPEN') ||
  ['SQLITE_AUTH', 'SQLITE_PERM', 'EACCES', 'EPERM', 'EROFS'].includes(code);
export const isFullCode = (code: string): boolean => code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT';
const isBusyCode = (code: string): boolean => code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
/** An I/O error reading or writing the database or its `-wal`/`-shm` (on a full tmpfs, growing `-shm` is one). */
export const isIoCode = (code: string): boolean => code.startsWith('SQLITE_IOERR') || code === 'EIO';

/**
 * A failure to open that says nothing about the file's health: it may not be written (permissions, a
 * read-only filesystem), the disk is full, another process holds it. Undefined for anything else
 * (then the file itself is suspect). A healthy database is never called damaged for these.
 */
export function outsideCause(err: unknown, path: string): KouraiError | undefined {
  const code = sqliteCode(err);
  const msg = (err as Error).message;
  if (isFullCode(code))
    return new EnvironmentError(
      `no space left on device for database ${path} (${msg})`,
      'free some space, then run the command again; the database was not changed',
      err,
    );
  if (isPermissionCode(code))
    return new EnvironmentError(
      `cannot write database ${path} (${msg})`,
      'check the permissions of the file and its directory',
      err,
    );
  if (isIoCode(code))
    return new EnvironmentError(
      `an I/O error (${code}) on database ${path}: ${msg}`,
      'check the disk: is it full, or failing? The database was not changed',
      err,
    );
  if (isBusyCode(code))
    return new ConflictError(
      `database ${path} is locked by another process (${msg})`,
      'run the command again once the other kourai command has finished',
    );
  return undefined;
}

function migrate(db: DB, migrations: readonly Migration[]): void {
  const latest = migrations.reduce((m, x) => Math.max(m, x.version), 0);
  if ((db.pragma('user_version', { simple: true }) as number) >= latest) return checkNotNewer(db, latest);
  // IMMEDIATE: take the write lock before reading the version, so two processes never both migrate.
  db.transaction(() => applyMigrations(db, migrations, latest)).immediate();
}

function checkNotNewer(db: DB, latest: number): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > latest) {
    throw new EnvironmentError(
      `database schema version ${current} is newer than this kourai understands (${latest})`,
      'upgrade kourai',
    );
  }
}

function applyMigrations(db: DB, migrations: readonly Migration[], latest: number): void {
  checkNotNewer(db, latest);
  const current = db.pragma('user_version', { simple: true }) as number;
  for (const m of [...migrations].sort((a, b) => a.version - b.version)) {
    if (m.version <= current) continue;
    if (typeof m.up === 'string') db.exec(m.up);
    else m.up(db);
    db.pragma(`user_version = ${m.version}`);
  }
}

/**
 * A database opened for reading only. SQLite must create the `-shm` file to read a WAL database;
 * in a directory it may not write to (a read-only home, one owned by another user) the file is
 * read into memory instead, read-only: with no `-wal` file left (every commit already in the main
 * file) the file itself; else a private copy of both files, its WAL checkpointed there. The same
 * content, and nothing written beside the database.
 */
function openReadOnly(path: string): DB {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  try {
    db.prepare('SELECT count(*) FROM sqlite_master').get();
    return db;
  } catch (err) {
    db.close();
    const code = (err as { code?: string }).code ?? '';
    const wal = `${path}-wal`;
    if (!code.startsWith('SQLITE_READONLY') && !code.startsWith('SQLITE_CANTOPEN')) throw err;
    const image = existsSync(wal) && statSync(wal).size > 0 ? checkpointedCopy(path) : readFileSync(path);
    // Bytes 18 and 19 say "WAL" (2); an in-memory image must say "rollback journal" (1).
    if (image.length > 19 && image[18] === 2 && image[19] === 2) image[18] = image[19] = 1;
    return new Database(image, { readonly: true });
  }
}

/** The content of a WAL database and its `-wal` file, as one file image (made in a private temporary directory). */
function checkpointedCopy(path: string): Buffer {
  const dir = mkdtempSync(join(tmpdir(), 'kourai-db-'));
  try {
    const copy = join(dir, 'copy.db');
    copyFileSync(path, copy);
    copyFileSync(`${path}-wal`, `${copy}-wal`);
    chmodSync(copy, 0o600); // copies keep the original's mode: make them ours
    chmodSync(`${copy}-wal`, 0o600);
    const db = new Database(copy);
    try {
      db.pragma('wal_checkpoint(TRUNCATE)');
      return db.serialize();
    } finally {
      db.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
