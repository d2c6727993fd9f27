import { existsSync } from 'node:fs';
import { NotFoundError } from '../errors.js';
import type { CouncilConfig } from './config.js';
import { councilDbPath, SqliteCouncilStorage } from './sqlite-storage.js';
import type { CouncilStorage } from './storage.js';

/**
 * The council's storage as the configuration says: PostgreSQL when `database` is a URL (the
 * driver is loaded only then), else council.db in `data_dir`.
 *
 * - 'create': serve and `forge add` (a fresh SQLite file is made; PostgreSQL must be migrated);
 * - 'write': an existing council, to change it;
 * - 'read': an existing council, read-only where the backend allows it (reports while serving).
 */
export type OpenMode = 'create' | 'write' | 'read';

export async function openCouncilStorage(
  config: Pick<CouncilConfig, 'database' | 'data_dir'> & Partial<Pick<CouncilConfig, 'max_in_flight'>>,
  mode: OpenMode,
  log?: (line: string) => void,
): Promise<CouncilStorage> {
  if (config.database) {
    const { PgCouncilStorage } = await import('./pg-storage.js');
    // An upload holds a connection while its body arrives (its chunks go in as they come): a
    // serving process has one per upload slot and a few for everything else.
    const max = mode === 'create' ? Math.max(10, (config.max_in_flight ?? 0) + 4) : 2;
    return PgCouncilStorage.open(config.database, { ...(log ? { log } : {}), max });
  }
  const path = councilDbPath(config.data_dir);
  if (mode !== 'create' && !existsSync(path)) {
    throw new NotFoundError(
      `no council database at ${path}`,
      `\`kourai council serve --data-dir ${config.data_dir}\` or \`kourai council forge add NAME --data-dir ${config.data_dir}\` creates it (or pass --database postgres://…)`,
    );
  }
  return new SqliteCouncilStorage(config.data_dir, { readonly: mode === 'read' });
}

/** Where the state is, for command output: the SQLite directory, or the URL without its password. */
export function describeLocation(config: Pick<CouncilConfig, 'database' | 'data_dir'>): string {
  if (!config.database) return config.data_dir;
  try {
    const u = new URL(config.database);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}
