import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { EnvironmentError, IntegrityError } from '../errors.js';

export type DB = Database.Database;

export interface Migration {
  version: number;
  up: string | ((db: DB) => void);
}

/**
 * One connection per process and file: WAL, foreign keys on, an explicit busy timeout, and
 * numbered migrations applied in one transaction each (tracked by `PRAGMA user_version`).
 */
export function openDb(path: string, migrations: readonly Migration[], opts: { readonly?: boolean; private?: boolean } = {}): DB {
  let db: DB;
  try {
    // Read-only opens create nothing: not the directory, not the file (read-only commands on a fresh home).
    if (!opts.readonly) mkdirSync(dirname(path), { recursive: true });
    db = opts.readonly ? openReadOnly(path) : new Database(path);
  } catch (err) {
    throw new EnvironmentError(`cannot open database ${path}: ${(err as Error).message}`, 'check that the directory exists and is writable (see `kourai doctor`)', err);
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
    if (opts.readonly) checkNotNewer(db, migrations.reduce((m, x) => Math.max(m, x.version), 0));
    else migrate(db, migrations);
  } catch (err) {
    db.close();
    if (err instanceof Error && 'exitCode' in err) throw err;
    throw new IntegrityError(`database ${path} is unreadable: ${(err as Error).message}`, `move it aside; an index can be rebuilt with \`kourai memoir index --rebuild\``);
  }
  return db;
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
    throw new EnvironmentError(`database schema version ${current} is newer than this kourai understands (${latest})`, 'upgrade kourai');
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
 * in a directory it may not write to (a read-only home) and with no `-wal` file left (every
 * commit already in the main file), the file is read into memory instead: the same content,
 * and nothing written anywhere.
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
    if (existsSync(wal) && statSync(wal).size > 0) throw err;
    const image = readFileSync(path);
    // Bytes 18 and 19 say "WAL" (2); an in-memory image must say "rollback journal" (1).
    if (image.length > 19 && image[18] === 2 && image[19] === 2) image[18] = image[19] = 1;
    return new Database(image);
  }
}
