import { resolveCouncilConfig } from '../../council/config.js';
import { federatingAgent, resetLayout, type LayoutResetOutcome } from '../../council/layout-admin.js';
import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { defineCommand } from '../types.js';
import { configFlags, LOCATION_KEYS, openForWriting } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { layoutReset as spec } from './commands.js';

const options = optionsSchema(spec, {});

export interface LayoutResetResult extends LayoutResetOutcome {
  data_dir: string;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<LayoutResetResult> {
    const { config } = resolveCouncilConfig(ctx, configFlags(opts, [...LOCATION_KEYS, 'layouts']));
    const agent = federatingAgent(opts.agent);
    const storage = await openForWriting(config);
    try {
      return { data_dir: config.data_dir, ...(await resetLayout(storage, config, agent, ctx.now())) };
    } finally {
      await storage.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const lines = [
      r.layout
        ? `${c.bold(r.agent)}: the configured layout (${r.layout.tensors.length} tensors, ${r.layout.coords} coordinates) is in force from round ${r.since_round}`
        : `${c.bold(r.agent)}: no layout from round ${r.since_round}: the council no longer accepts ${r.agent} updates`,
    ];
    if (r.retired_global_round !== null)
      lines.push(`the global from round ${r.retired_global_round} is retired: forges start ${r.agent} afresh`);
    if (r.removed.length)
      lines.push(
        c.yellow(
          `dropped ${r.removed.length} update${r.removed.length === 1 ? '' : 's'} in the old layout: ${r.removed.map((x) => `${x.forge} (round ${x.round})`).join(', ')}`,
        ),
      );
    return lines.join('\n');
  },
});
