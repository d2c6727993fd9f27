import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { IntegrityError, KouraiError } from '../errors.js';
import { openDb, type DB } from './db.js';
import { STATE_MIGRATIONS } from './state-migrations.js';

export function statePath(home: string): string {
  return join(home, 'kourai.db');
}

/**
 * Opens the state database (`$KOURAI_HOME/kourai.db`). Commits are fully synchronous
 * (`synchronous = FULL`): a committed ledger row survives a power loss, not only a crash, so
 * spent privacy budget can never be rolled back by the operating system.
 */
export function openStateDb(home: string): DB {
  const path = statePath(home);
  let db: DB;
  try {
    db = openDb(path, STATE_MIGRATIONS);
  } catch (err) {
    if (err instanceof IntegrityError) {
      throw new IntegrityError(
        `the state database ${path} is unreadable (${err.message.replace(/^database .*? is unreadable: /, '')})`,
        'do not delete it: it records spent privacy budget and consent. Restore it from a backup, or move it aside and lower the budgets by what was spent',
      );
    }
    if (err instanceof KouraiError) throw err;
    throw err;
  }
  db.pragma('synchronous = FULL');
  return db;
}

/**
 * The state database for commands that only read it (`whisper`, `federate consent --show`,
 * `doctor`): opened read-only when it exists; otherwise an empty state in memory (nothing
 * consented, nothing released) — so a read creates no file, and works on a read-only home.
 */
export function openStateDbReadOnly(home: string): DB {
  const path = statePath(home);
  if (!existsSync(path)) return openDb(':memory:', STATE_MIGRATIONS);
  try {
    return openDb(path, STATE_MIGRATIONS, { readonly: true });
  } catch (err) {
    if (err instanceof IntegrityError) {
      throw new IntegrityError(`the state database ${path} is unreadable (${err.message.replace(/^database .*? is unreadable: /, '')})`, 'do not delete it: it records spent privacy budget and consent; restore it from a backup');
    }
    throw err;
  }
}
