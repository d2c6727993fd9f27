import { resolveCouncilConfig } from '../../council/config.js';
import { rotateForgeToken } from '../../council/forges.js';
import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { defineCommand } from '../types.js';
import { configFlags, LOCATION_KEYS, openForWriting } from './shared.js';
import { warn } from '../../output/notice.js';
import { optionsSchema } from '../spec-schema.js';
import { forgeRotate as spec } from './commands.js';

const options = optionsSchema(spec, {});

export interface ForgeRotateResult {
  forge: string;
  id: number;
  /** Shown once: the council keeps only its sha256. */
  token: string;
  data_dir: string;
}

/** The old token stops working at once (also for a council that is serving). */
export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<ForgeRotateResult> {
    const { config } = resolveCouncilConfig(ctx, configFlags(opts, LOCATION_KEYS));
    const storage = await openForWriting(config);
    try {
      const { forge, token } = await rotateForgeToken(storage, opts.name, ctx.secureRandom, ctx.now());
      warn(
        ctx,
        `the new token is shown only now: give it to the operator of forge "${forge.name}" over a private channel; the old token no longer works`,
      );
      return { forge: forge.name, id: forge.id, token, data_dir: config.data_dir };
    } finally {
      await storage.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    return `forge ${c.bold(r.forge)}: new token\ntoken: ${r.token}`;
  },
});
