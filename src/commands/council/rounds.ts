import { z } from 'zod';
import { resolveCouncilConfig } from '../../council/config.js';
import { privacyPolicyOf } from '../../council/round-settings.js';
import { roundListView, type RoundListEntry } from '../../council/views.js';
import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import { defineCommand } from '../types.js';
import { configFlags, LOCATION_KEYS, openExisting } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { rounds as spec } from './commands.js';

const options = optionsSchema(spec, { limit: z.coerce.number().int().min(1).default(20) });

export interface RoundsResult {
  data_dir: string;
  rounds: RoundListEntry[];
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<RoundsResult> {
    const { config } = resolveCouncilConfig(ctx, configFlags(opts, LOCATION_KEYS));
    const storage = await openExisting(config);
    try {
      return { data_dir: config.data_dir, rounds: await roundListView(storage, opts.limit, privacyPolicyOf(config)) };
    } finally {
      await storage.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    if (r.rounds.length === 0) return `no rounds yet in ${r.data_dir}`;
    const state = (s: string): string => (s === 'open' ? c.green(s) : s === 'closing' ? c.yellow(s) : s);
    const table = renderTable(r.rounds, [
      { header: 'ROUND', get: (x) => String(x.round), align: 'right' },
      { header: 'STATE', get: (x) => state(x.state) },
      { header: 'STRATEGY', get: (x) => (x.byzantine ? `${x.strategy} f=${x.byzantine}` : x.strategy) },
      { header: 'FORGES', get: (x) => `${x.forges_sealed}/${x.forges_submitted}`, align: 'right' },
      { header: 'OPENED', get: (x) => x.opened_at.slice(0, 16).replace('T', ' ') },
      {
        header: 'CLOSED',
        get: (x) =>
          x.closed_at
            ? `${x.closed_at.slice(0, 16).replace('T', ' ')} (${x.close_reason})`
            : `deadline ${x.deadline.slice(0, 16).replace('T', ' ')}`,
      },
      {
        header: 'AGENTS (used/updates)',
        get: (x) =>
          x.agents
            .map((a) => (a.aggregated ? `${a.agent} ${a.used}/${a.updates}` : c.yellow(`${a.agent} skipped`)))
            .join(', ') || '-',
      },
    ]);
    const echoes = r.rounds.flatMap((x) =>
      x.agents.flatMap((a) =>
        a.echoes.map((g) =>
          c.yellow(`round ${x.round}, ${a.agent}: ${g.length} identical updates counted once (${g.join(', ')})`),
        ),
      ),
    );
    return echoes.length ? [table.trimEnd(), '', ...echoes].join('\n') : table;
  },
});
