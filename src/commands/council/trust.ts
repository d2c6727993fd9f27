import { z } from 'zod';
import { resolveCouncilConfig } from '../../council/config.js';
import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import { defineCommand } from '../types.js';
import { configFlags, locationOptions, openExisting } from './shared.js';

const options = z.object({ ...locationOptions, json: z.boolean().default(false) });

export interface TrustResult {
  data_dir: string;
  alpha: number;
  threshold: number;
  warmup: number;
  forges: { forge: string; id: number; trust: number; rounds_scored: number; last_similarity: number | null; exiled: boolean; exiled_round: number | null; created_at: string }[];
  /** Exiles, newest first (the Stoa Falls). */
  stoa_falls: { at: string; round: number | null; forge: string; trust: number }[];
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<TrustResult> {
    const { config } = resolveCouncilConfig(ctx, configFlags(opts, ['data_dir']));
    const storage = openExisting(config.data_dir);
    try {
      const forges: TrustResult['forges'] = [];
      for (const f of await storage.listForges()) {
        const history = await storage.trustHistory(f.id);
        forges.push({
          forge: f.name,
          id: f.id,
          trust: f.trust,
          rounds_scored: f.roundsScored,
          last_similarity: history.at(-1)?.similarity ?? null,
          exiled: f.exiledAt !== null,
          exiled_round: f.exiledRound,
          created_at: f.createdAt,
        });
      }
      const falls = (await storage.events(10_000))
        .filter((e) => e.kind === 'stoa_falls')
        .map((e) => {
          const d = JSON.parse(e.detailJson) as { forge: string; trust: number };
          return { at: e.at, round: e.round, forge: d.forge, trust: d.trust };
        });
      return { data_dir: config.data_dir, alpha: config.trust_alpha, threshold: config.trust_threshold, warmup: config.trust_warmup, forges, stoa_falls: falls };
    } finally {
      storage.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    if (r.forges.length === 0) return `no forges yet in ${r.data_dir} (kourai council forge add NAME)`;
    const table = renderTable(r.forges, [
      { header: 'FORGE', get: (f) => f.forge },
      { header: 'TRUST', get: (f) => (f.trust < r.threshold ? c.red(f.trust.toFixed(3)) : f.trust.toFixed(3)), align: 'right' },
      { header: 'ROUNDS', get: (f) => String(f.rounds_scored), align: 'right' },
      { header: 'LAST SIM', get: (f) => (f.last_similarity === null ? '-' : f.last_similarity.toFixed(3)), align: 'right' },
      { header: 'STATUS', get: (f) => (f.exiled ? c.red(`exiled after round ${f.exiled_round}`) : 'active') },
    ]);
    const foot = `trust ← ${(1 - r.alpha).toFixed(2)}·trust + ${r.alpha}·similarity; exile below ${r.threshold} after ${r.warmup} scored rounds`;
    const falls = r.stoa_falls.map((s) => c.red(`the Stoa falls: ${s.forge} exiled after round ${s.round} (trust ${s.trust.toFixed(3)}, ${s.at})`));
    return [table.trimEnd(), '', foot, ...falls].join('\n');
  },
});
