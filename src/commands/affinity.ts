import { AffinityAccumulator, TIERS, type AgentAffinity } from '../affinity/affinity.js';
import type { Ctx } from '../context.js';
import { affinity as fmtAffinity, signedAffinity as signed } from '../format.js';
import { colors } from '../output/color.js';
import { sparkline } from '../output/sparkline.js';
import { renderTable } from '../output/table.js';
import { StoryIndex } from '../memoir-index/story-queries.js';
import { AGENT_COLOR, TIER_COLOR } from '../output/theme.js';
import { indexFeedback } from '../output/index-feedback.js';
import { openIndexed } from '../memoir-index/indexed.js';
import { filterShape } from './options.js';
import { defineCommand } from './types.js';
import { optionsSchema } from './spec-schema.js';
import { affinityCommand as spec } from './top-level.js';

const options = optionsSchema(spec, { agent: filterShape.agent });

export interface AffinityRow extends AgentAffinity {
  /** `player/project`, or the memoir's path for a memoir outside the usual layout. */
  forge: string;
  sparkline: string;
}

export interface AffinityResult {
  memoirs: number;
  forges: string[];
  tiers: { name: string; min: number | null }[];
  agents: AffinityRow[];
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<AffinityResult> {
    const { index, fileIds } = await openIndexed(ctx, opts.memoir, { feedback: indexFeedback(ctx, opts.json) });
    try {
      const all = new StoryIndex(index, fileIds);
      // Affinity is a relationship within one forge: memoirs of different forges are not summed.
      const byForge = new Map<string, number[]>();
      for (const s of all.sessions) {
        const forge = s.player && s.project ? `${s.player}/${s.project}` : s.path;
        byForge.set(forge, [...(byForge.get(forge) ?? []), s.fileId]);
      }
      const rows: AffinityRow[] = [];
      for (const [forge, ids] of byForge) {
        const q = new StoryIndex(index, ids);
        const acc = new AffinityAccumulator();
        for (const c of q.affinityChanges(opts.agent))
          acc.add({
            agent: c.agent,
            delta: c.affinity_delta,
            entry_id: c.entry_id,
            scene_id: c.scene_id,
            recorded_at: c.recorded_at,
          });
        const present = q.agentsPresent().filter((a) => opts.agent.length === 0 || opts.agent.includes(a));
        for (const a of acc.result(present)) rows.push({ forge, ...a, sparkline: sparkline(a.trend) });
      }
      return {
        memoirs: fileIds.length,
        forges: [...byForge.keys()],
        tiers: TIERS.map((t) => ({ name: t.name, min: Number.isFinite(t.min) ? t.min : null })),
        agents: rows,
      };
    } finally {
      index.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    if (r.agents.length === 0) return c.dim('no agents in these memoirs');
    const many = r.forges.length > 1;
    const table = renderTable(r.agents, [
      ...(many ? [{ header: 'FORGE', get: (a: AffinityRow) => a.forge }] : []),
      { header: 'AGENT', get: (a) => c[AGENT_COLOR[a.agent]](a.agent) },
      { header: 'AFFINITY', get: (a) => fmtAffinity(a.affinity), align: 'right' },
      { header: 'TIER', get: (a) => c[TIER_COLOR[a.tier]](a.tier) },
      {
        header: 'NEXT',
        get: (a) => (a.next_tier ? `${a.next_tier} in ${fmtAffinity(a.to_next_tier ?? 0)}` : c.dim('top tier')),
      },
      { header: 'TREND', get: (a) => (a.changes ? a.sparkline : c.dim('—')) },
      {
        header: 'LAST CHANGE',
        get: (a) =>
          a.last_change
            ? `${signed(a.last_change.delta)} ${c.dim(`${a.last_change.scene_id}${a.last_change.recorded_at ? ` ${a.last_change.recorded_at.slice(0, 10)}` : ''}`)}`
            : c.dim('none'),
      },
    ]);
    const tiers = TIERS.slice(1)
      .map((t) => `${c[TIER_COLOR[t.name]](t.name)} ≥ ${t.min}`)
      .join(c.dim(' · '));
    return `${table}${c.dim(`tiers: ${c.reset(tiers)} (below: stranger) · ${r.memoirs} memoir${r.memoirs === 1 ? '' : 's'}`)}`;
  },
});
