import { resolveCouncilConfig } from '../../council/config.js';
import { addForge } from '../../council/forges.js';
import { openCouncilStorage } from '../../council/open-storage.js';
import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { defineCommand } from '../types.js';
import { configFlags, LOCATION_KEYS } from './shared.js';
import { note } from '../../output/notice.js';
import { optionsSchema } from '../spec-schema.js';
import { forgeAdd as spec } from './commands.js';

const options = optionsSchema(spec, {});

export interface ForgeAddResult {
  forge: string;
  id: number;
  /** Shown once: the council keeps only its sha256. */
  token: string;
  created_at: string;
  data_dir: string;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<ForgeAddResult> {
    const { config } = resolveCouncilConfig(ctx, configFlags(opts, LOCATION_KEYS));
    const storage = await openCouncilStorage(config, 'create');
    try {
      const { forge, token } = await addForge(storage, opts.name, ctx.secureRandom, ctx.now());
      note(
        ctx,
        `the token is shown only now: give it to the operator of forge "${forge.name}" over a private channel (the council keeps only its hash)`,
      );
      return { forge: forge.name, id: forge.id, token, created_at: forge.createdAt, data_dir: config.data_dir };
    } finally {
      await storage.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    return `forge ${c.bold(r.forge)} added (id ${r.id})\ntoken: ${r.token}`;
  },
});
