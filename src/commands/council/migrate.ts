import { resolveCouncilConfig } from '../../council/config.js';
import { describeLocation } from '../../council/open-storage.js';
import { SqliteCouncilStorage } from '../../council/sqlite-storage.js';
import type { Ctx } from '../../context.js';
import { defineCommand } from '../types.js';
import { configFlags, LOCATION_KEYS } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { migrate as spec } from './commands.js';

const options = optionsSchema(spec, {});

export interface MigrateResult {
  backend: 'sqlite' | 'postgres';
  database: string;
  from_version: number;
  to_version: number;
}

/**
 * `kourai council migrate`: applies the schema migrations this kourai knows. PostgreSQL is never
 * migrated implicitly (several processes share it: the operator decides when); council.db is also
 * migrated by any command that writes it, as before. A database of a newer schema is refused (exit 3).
 */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<MigrateResult> {
    const { config } = resolveCouncilConfig(ctx, configFlags(opts, LOCATION_KEYS));
    const where = describeLocation(config);
    if (config.database) {
      const { PgCouncilStorage } = await import('../../council/pg-storage.js');
      const storage = await PgCouncilStorage.open(config.database, { anySchema: true, max: 1 });
      try {
        const { from, to } = await storage.migrate();
        return { backend: 'postgres', database: where, from_version: from, to_version: to };
      } finally {
        await storage.close();
      }
    }
    const { from, to } = SqliteCouncilStorage.migrate(config.data_dir);
    return { backend: 'sqlite', database: where, from_version: from, to_version: to };
  },
  render(r) {
    return r.from_version === r.to_version
      ? `${r.database}: schema is up to date (version ${r.to_version})`
      : `${r.database}: schema migrated from version ${r.from_version} to ${r.to_version}`;
  },
});
