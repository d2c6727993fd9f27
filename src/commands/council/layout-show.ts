import { resolveCouncilConfig } from '../../council/config.js';
import { federatingAgent, layoutReport, type AgentLayoutReport } from '../../council/layout-admin.js';
import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import { defineCommand } from '../types.js';
import { configFlags, LOCATION_KEYS, openExisting } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { layoutShow as spec } from './commands.js';

const options = optionsSchema(spec, {});

export interface LayoutShowResult {
  data_dir: string;
  agents: AgentLayoutReport[];
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<LayoutShowResult> {
    const { config } = resolveCouncilConfig(ctx, configFlags(opts, [...LOCATION_KEYS, 'layouts']));
    const only = opts.agent === undefined ? undefined : federatingAgent(opts.agent);
    const storage = await openExisting(config);
    try {
      return { data_dir: config.data_dir, agents: await layoutReport(storage, config, only) };
    } finally {
      await storage.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const status = (s: AgentLayoutReport['status']): string =>
      s === 'agrees'
        ? c.green(s)
        : s === 'differs' || s === 'not configured'
          ? c.red(s)
          : s === 'none'
            ? c.dim(s)
            : c.yellow(s);
    const shape = (l: AgentLayoutReport['configured']): string =>
      l ? `${l.tensors.length} tensors, ${l.coords} coords` : '-';
    const table = renderTable(r.agents, [
      { header: 'AGENT', get: (a) => a.agent },
      { header: 'STATUS', get: (a) => status(a.status) },
      { header: 'CONFIGURED', get: (a) => shape(a.configured) },
      {
        header: 'IN COUNCIL.DB',
        get: (a) => (a.in_force ? `${shape(a.in_force)} since round ${a.in_force.since_round}` : '-'),
      },
    ]).trimEnd();
    const details =
      r.agents.length === 1
        ? r.agents.flatMap((a) =>
            [a.configured, a.in_force].flatMap((l, i) =>
              l
                ? [
                    `${i === 0 ? 'configured' : 'in council.db'}:`,
                    ...l.tensors.map((t) => `  ${t.name} [${t.shape.join(', ')}]`),
                  ]
                : [],
            ),
          )
        : [];
    const bad = r.agents.filter((a) => a.status === 'differs' || a.status === 'not configured').map((a) => a.agent);
    return [
      table,
      ...details,
      ...(bad.length
        ? ['', c.yellow(`the council will not start until these agree: kourai council layout reset ${bad.join(' / ')}`)]
        : []),
    ].join('\n');
  },
});
