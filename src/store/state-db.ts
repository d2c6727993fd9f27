import { accessSync, constants, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { EnvironmentError, IntegrityError } from '../errors.js';
import { openDb, type DB } from './db.js';
import { STATE_MIGRATIONS } from './state-migrations.js';

export function statePath(home: string): string {
  return join(home, 'kourai.db');
}

const LATEST = STATE_MIGRATIONS.reduce((m, x) => Math.max(m, x.version), 0);

/** Why the state database (or, before it exists, its directory) cannot be written; undefined when it can. */
export function stateUnwritable(home: string): string | undefined {
  const path = statePath(home);
  const dir = dirname(path);
  if (!existsSync(path)) {
    // The home is created when missing: judge the nearest directory that exists.
    let d = dir;
    while (!existsSync(d) && dirname(d) !== d) d = dirname(d);
    return writable(d) ? undefined : `${d} is not writable`;
  }
  if (!writable(dir)) return `${dir} is not writable`;
  if (!writable(path)) return `${path} is read-only`;
  return undefined;
}

function writable(p: string): boolean {
  try {
    accessSync(p, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

function unreadable(path: string, err: IntegrityError): IntegrityError {
  return new IntegrityError(
    `the state database ${path} is unreadable (${err.message.replace(/^database .*? is unreadable: /, '')})`,
    'do not delete it: it records spent privacy budget and consent. Restore it from a backup, or move it aside and lower the budgets by what was spent',
  );
}

/**
 * Opens the state database (`$KOURAI_HOME/kourai.db`) for a command that writes it. Commits are
 * fully synchronous (`synchronous = FULL`): a committed ledger row survives a power loss, not only a
 * crash, so spent privacy budget can never be rolled back by the operating system. A home it may
 * not write (read-only, another user's) is exit 3 naming what is not writable, before anything is
 * done: that is a place, not a damaged database.
 */
export function openStateDb(home: string): DB {
  const path = statePath(home);
  const why = stateUnwritable(home);
  if (why) throw cannotWrite(path, why);
  let db: DB;
  try {
    db = openDb(path, STATE_MIGRATIONS);
  } catch (err) {
    if (err instanceof IntegrityError) throw unreadable(path, err);
    throw err;
  }
  db.pragma('synchronous = FULL');
  return db;
}

export function cannotWrite(path: string, why: string): EnvironmentError {
  return new EnvironmentError(
    `cannot write the state database ${path}: ${why}`,
    'this command records consent, privacy budget or adapters there: run it where KOURAI_HOME is writable (commands that only read work as they are)',
  );
}

/**
 * The state database for commands that only read it (`whisper`, `privacy ledger`, `adapters list`,
 * `score`, `federate status`, a dry run): opened as a writer when it may be written (so a migration
 * of an older schema applies), otherwise read-only, in memory when SQLite could not read it in
 * place; a database that does not exist yet is an empty state in memory (nothing consented,
 * nothing released), so a read creates no file. Every write through it fails.
 */
export function openStateDbReadOnly(home: string): DB {
  const path = statePath(home);
  if (!existsSync(path)) return openDb(':memory:', STATE_MIGRATIONS);
  if (!stateUnwritable(home)) return openStateDb(home);
  let db: DB;
  try {
    db = openDb(path, STATE_MIGRATIONS, { readonly: true });
  } catch (err) {
    if (err instanceof IntegrityError) throw unreadable(path, err);
    throw err;
  }
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version < LATEST) {
    db.close();
    throw new EnvironmentError(
      `the state database ${path} has schema version ${version} and this kourai reads ${LATEST}: it must be upgraded, and ${stateUnwritable(home) ?? 'it'} cannot be written`,
      'run any kourai command once where KOURAI_HOME is writable (the upgrade is automatic), then read from here',
    );
  }
  return db;
}
