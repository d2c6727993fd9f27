import { existsSync } from 'node:fs';
import { z } from 'zod';
import type { ConfigKey } from '../../council/config.js';
import { councilDbPath, SqliteCouncilStorage } from '../../council/sqlite-storage.js';
import { NotFoundError } from '../../errors.js';

/** Flags every council command shares: where the council keeps its state. */
export const locationOptions = {
  config: z.string().optional(),
  dataDir: z.string().optional(),
};

/** Commander's camelCase option names -> config keys (only the ones given). */
export function configFlags(opts: Record<string, unknown>, keys: readonly ConfigKey[]): Partial<Record<ConfigKey, unknown>> & { config?: string } {
  const out: Partial<Record<ConfigKey, unknown>> & { config?: string } = {};
  for (const key of keys) {
    const camel = key.replace(/_([a-z])/g, (_, ch: string) => ch.toUpperCase());
    const v = opts[camel];
    if (v !== undefined) out[key] = v;
  }
  if (typeof opts.config === 'string') out.config = opts.config;
  return out;
}

/** Opens an existing council database to change it (forge and layout management): never creates one. */
export function openForWriting(dataDir: string): SqliteCouncilStorage {
  const path = councilDbPath(dataDir);
  if (!existsSync(path)) throw new NotFoundError(`no council database at ${path}`, `\`kourai council forge add NAME --data-dir ${dataDir}\` creates it`);
  return new SqliteCouncilStorage(dataDir);
}

/** Opens an existing council database read-only (reporting commands). */
export function openExisting(dataDir: string): SqliteCouncilStorage {
  const path = councilDbPath(dataDir);
  if (!existsSync(path)) throw new NotFoundError(`no council database at ${path}`, `\`kourai council serve --data-dir ${dataDir}\` or \`kourai council forge add NAME --data-dir ${dataDir}\` creates it`);
  return new SqliteCouncilStorage(dataDir, { readonly: true });
}
