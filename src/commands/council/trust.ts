import { resolveCouncilConfig } from '../../council/config.js';
import { trustListView, type TrustListView } from '../../council/views.js';
import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import { defineCommand } from '../types.js';
import { configFlags, LOCATION_KEYS, openExisting } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { trust as spec } from './commands.js';

const options = optionsSchema(spec, {});

const EVIDENCE_TEXT: Record<string, string> = {
  echo: 'an echo of another forge’s',
  structureless: 'no structure (noise)',
};

export interface TrustResult extends TrustListView {
  data_dir: string;
  alpha: number;
  threshold: number;
  warmup: number;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<TrustResult> {
    const { config } = resolveCouncilConfig(ctx, configFlags(opts, LOCATION_KEYS));
    const storage = await openExisting(config);
    try {
      const view = await trustListView(storage);
      return {
        data_dir: config.data_dir,
        alpha: config.trust_alpha,
        threshold: config.trust_threshold,
        warmup: config.trust_warmup,
        ...view,
      };
    } finally {
      await storage.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    if (r.forges.length === 0) return `no forges yet in ${r.data_dir} (kourai council forge add NAME)`;
    const table = renderTable(r.forges, [
      { header: 'FORGE', get: (f) => f.forge },
      {
        header: 'TRUST',
        get: (f) => (f.trust < r.threshold ? c.red(f.trust.toFixed(3)) : f.trust.toFixed(3)),
        align: 'right',
      },
      { header: 'ROUNDS', get: (f) => String(f.rounds_scored), align: 'right' },
      {
        header: 'LAST SIM',
        get: (f) => (f.last_similarity === null ? '-' : f.last_similarity.toFixed(3)),
        align: 'right',
      },
      { header: 'STATUS', get: (f) => (f.exiled ? c.red(`exiled after round ${f.exiled_round}`) : 'active') },
    ]);
    const foot = `trust ← ${(1 - r.alpha).toFixed(2)}·trust + ${r.alpha}·similarity; exile below ${r.threshold} after ${r.warmup} scored rounds`;
    const falls = r.stoa_falls.map((s) =>
      c.red(
        `the Stoa falls: ${s.forge} exiled after round ${s.round} (trust ${s.trust.toFixed(3)}${s.evidence.length ? `; its last update: ${s.evidence.map((e) => EVIDENCE_TEXT[e] ?? e).join(', ')}` : ''}, ${s.at})`,
      ),
    );
    return [table.trimEnd(), '', foot, ...falls].join('\n');
  },
});
