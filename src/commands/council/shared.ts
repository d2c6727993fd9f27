import { z } from 'zod';
import type { ConfigKey, CouncilConfig } from '../../council/config.js';
import { openCouncilStorage } from '../../council/open-storage.js';
import type { CouncilStorage } from '../../council/storage.js';

/** Flags every council command shares: where the council keeps its state. */
export const locationOptions = {
  config: z.string().optional(),
  dataDir: z.string().optional(),
  database: z.string().optional(),
};

/** The config keys every council command resolves: where the state is. */
export const LOCATION_KEYS: readonly ConfigKey[] = ['data_dir', 'database'];

/** Commander's camelCase option names -> config keys (only the ones given). */
export function configFlags(
  opts: Record<string, unknown>,
  keys: readonly ConfigKey[],
): Partial<Record<ConfigKey, unknown>> & { config?: string } {
  const out: Partial<Record<ConfigKey, unknown>> & { config?: string } = {};
  for (const key of keys) {
    const camel = key.replace(/_([a-z])/g, (_, ch: string) => ch.toUpperCase());
    const v = opts[camel];
    if (v !== undefined) out[key] = v;
  }
  if (typeof opts.config === 'string') out.config = opts.config;
  return out;
}

/** Opens an existing council database to change it (forge and layout management): never creates an SQLite one. */
export function openForWriting(config: Pick<CouncilConfig, 'database' | 'data_dir'>): Promise<CouncilStorage> {
  return openCouncilStorage(config, 'write');
}

/** Opens an existing council database to read it (reporting commands; read-only where the backend allows). */
export function openExisting(config: Pick<CouncilConfig, 'database' | 'data_dir'>): Promise<CouncilStorage> {
  return openCouncilStorage(config, 'read');
}
