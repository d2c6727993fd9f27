import { z } from 'zod';
import { kouraiHome } from '../context.js';
import { appliedText } from '../output/applied-text.js';
import { colors } from '../output/color.js';
import { renderTable } from '../output/table.js';
import { Scorer, type RouteResult } from '../train/scorer.js';
import { defineCommand } from './types.js';

const options = z.object({
  task: z.string().optional(),
  taskType: z.string().optional(),
  use: z.enum(['both', 'bond', 'council'], { error: 'must be both, bond or council' }).default('both'),
  lean: z.coerce
    .number({ error: 'must be a number from 0 (personal) to 1 (federated)' })
    .min(0, { error: 'must be ≥ 0 (personal)' })
    .max(1, { error: 'must be ≤ 1 (federated)' })
    .optional(),
  json: z.boolean().default(false),
});

/**
 * Hephaestus's routing head: which specialist should take this task, as a distribution. It works
 * from the first session (the specialists' written roles are its prior); the player's routing
 * history, once `train bond` has learned from it, adapts it.
 */
export default defineCommand({
  options,
  async run(opts, ctx): Promise<RouteResult> {
    const scorer = await Scorer.open({
      home: kouraiHome(ctx),
      env: ctx.env,
      signal: ctx.signal,
      agent: 'hephaestus',
      use: opts.use,
      ...(opts.lean !== undefined ? { lean: opts.lean } : {}),
    });
    try {
      return await scorer.route(opts.task ?? null, { taskType: opts.taskType ?? null });
    } finally {
      scorer.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const bar = (p: number): string => '█'.repeat(Math.round(p * 30));
    const table = renderTable(r.distribution, [
      { header: 'SPECIALIST', get: (d) => (d === r.distribution[0] ? c.bold(d.agent) : d.agent) },
      { header: 'P', get: (d) => d.p.toFixed(3), align: 'right' },
      { header: '', get: (d) => c.cyan(bar(d.p)) },
    ]);
    const cues = r.prior.cues.slice(0, 4).map((h) => `${h.cue} → ${h.agent}`);
    const prior = `\n  prior: the specialists' written roles${cues.length ? `; cues in the task: ${cues.join(', ')}` : ', no cue in the task'}`;
    return `${table}${c.dim(appliedText('hephaestus', r.applied))}${c.dim(prior)}`;
  },
});
