import { resolveCouncilConfig } from '../../council/config.js';
import { forgeListView, type ForgeListEntry } from '../../council/views.js';
import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import { defineCommand } from '../types.js';
import { configFlags, LOCATION_KEYS, openExisting } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { forgeList as spec } from './commands.js';

const options = optionsSchema(spec, {});

export interface ForgeListResult {
  data_dir: string;
  forges: ForgeListEntry[];
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<ForgeListResult> {
    const { config } = resolveCouncilConfig(ctx, configFlags(opts, LOCATION_KEYS));
    const storage = await openExisting(config);
    try {
      return { data_dir: config.data_dir, forges: await forgeListView(storage) };
    } finally {
      await storage.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    if (r.forges.length === 0) return `no forges yet in ${r.data_dir} (kourai council forge add NAME)`;
    const status = (f: ForgeListEntry): string =>
      f.status === 'active'
        ? 'active'
        : f.status === 'revoked'
          ? c.yellow(`revoked ${f.revoked_at?.slice(0, 16).replace('T', ' ')}`)
          : c.red(`exiled after round ${f.exiled_round}`);
    return renderTable(r.forges, [
      { header: 'ID', get: (f) => String(f.id), align: 'right' },
      { header: 'FORGE', get: (f) => f.forge },
      { header: 'STATUS', get: status },
      { header: 'TRUST', get: (f) => f.trust.toFixed(3), align: 'right' },
      { header: 'UPDATES', get: (f) => String(f.updates), align: 'right' },
      { header: 'LAST UPDATE', get: (f) => f.last_update?.slice(0, 16).replace('T', ' ') ?? '-' },
      { header: 'ADDED', get: (f) => f.created_at.slice(0, 16).replace('T', ' ') },
    ]).trimEnd();
  },
});
