import { resolveCouncilConfig } from '../../council/config.js';
import { revokeForge } from '../../council/forges.js';
import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { defineCommand } from '../types.js';
import { configFlags, LOCATION_KEYS, openForWriting } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { forgeRevoke as spec } from './commands.js';

const options = optionsSchema(spec, {});

export interface ForgeRevokeResult {
  forge: string;
  id: number;
  revoked_at: string;
  data_dir: string;
}

/** Takes effect at once, also for a council that is serving: every request looks the token up. */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<ForgeRevokeResult> {
    const { config } = resolveCouncilConfig(ctx, configFlags(opts, LOCATION_KEYS));
    const storage = await openForWriting(config);
    try {
      const f = await revokeForge(storage, opts.name, ctx.now());
      return { forge: f.name, id: f.id, revoked_at: f.revokedAt ?? ctx.now().toISOString(), data_dir: config.data_dir };
    } finally {
      await storage.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    return `forge ${c.bold(r.forge)} revoked (since ${r.revoked_at}): its token is refused with 403 forge_revoked; \`kourai council forge rotate ${r.forge}\` issues a new one`;
  },
});
