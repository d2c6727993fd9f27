import { kouraiHome } from '../context.js';
import { appliedText } from '../output/applied-text.js';
import { colors } from '../output/color.js';
import { renderTable } from '../output/table.js';
import { Scorer, type RouteResult } from '../train/scorer.js';
import { lean, use } from './score-options.js';
import { optionsSchema } from './spec-schema.js';
import { routeCommand as spec } from './top-level.js';
import { defineCommand } from './types.js';

const options = optionsSchema(spec, { use, lean: lean.optional() });

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
