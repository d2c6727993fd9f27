import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { writeNdjson } from '../../output/json.js';
import { oneLine, renderTable } from '../../output/table.js';
import { number } from '../fast-flags.js';
import { fastOptions } from '../spec.js';
import { inspect as spec } from './commands.js';
import { fastFilterChecks, toFilter } from '../filter.js';
import { defineCommand, type LazyOptions } from '../types.js';
import type { options as OptionsSchema } from './inspect-options.js';
import { entryView, loadRow, openIndexed } from './shared.js';
import { plural } from '../../format.js';

/** inspect-options.ts without zod (test/commands/fast-options.test.ts holds the two together). */
export const fastInspectOptions = fastOptions(spec, {
  ...fastFilterChecks,
  limit: (v) => (v === undefined ? 50 : number(v, { min: 0, int: true })),
});

const options: LazyOptions<typeof OptionsSchema> = {
  fast: fastInspectOptions,
  schema: async () => (await import('./inspect-options.js')).options,
};

/** Counting stops here: `total` is exact below it, and `total_capped` says when it is a floor. */
const COUNT_CAP = 1_000;

export interface InspectResult {
  total: number;
  total_capped: boolean;
  shown: number;
  entries: Record<string, unknown>[];
}

export default defineCommand({
  options,
  streams: (o) => o.ndjson,
  async run(opts, ctx: Ctx): Promise<InspectResult> {
    const { index, fileIds } = await openIndexed(ctx, opts.memoir, {
      quiet: opts.json || opts.ndjson,
      fullText: Boolean(opts.text),
    });
    try {
      const filter = { ...toFilter(opts), files: fileIds, latestOnly: !opts.allRevisions };
      const counted = index.count(filter, COUNT_CAP + 1);
      const total = Math.min(counted, COUNT_CAP);
      const total_capped = counted > COUNT_CAP;
      const limit = opts.limit === 0 ? undefined : opts.limit;
      if (opts.ndjson) {
        let shown = 0;
        for (const row of index.iterate({ ...filter, ...(limit !== undefined ? { limit } : {}) })) {
          writeNdjson(ctx.stdout, entryView(row, loadRow(row)));
          shown++;
        }
        return { total, total_capped, shown, entries: [] };
      }
      const rows = index.query({ ...filter, ...(limit !== undefined ? { limit } : {}) });
      return { total, total_capped, shown: rows.length, entries: rows.map((r) => entryView(r, loadRow(r))) };
    } finally {
      index.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const width = Math.max(40, (ctx.stdout.columns ?? 120) - 90);
    const table = renderTable(r.entries, [
      { header: 'ENTRY', get: (e) => String(e.entry_id) },
      { header: 'SCENE', get: (e) => String(e.scene_id) },
      { header: 'AGENT', get: (e) => String(e.agent) },
      { header: 'SOURCE', get: (e) => String(e.source) },
      {
        header: 'SPLIT',
        get: (e) => ((e._memoir as { shareable: boolean }).shareable ? c.green('shared') : c.dim('private')),
      },
      {
        header: 'WHAT',
        get: (e) => oneLine((e.narrative_beat as string | null) ?? (e.agent_proposed as string | null) ?? '', width),
      },
    ]);
    const total = `${r.total}${r.total_capped ? '+' : ''}`;
    const more =
      r.total > r.shown
        ? c.dim(`\n${r.shown} of ${total} entries shown (use --limit 0 for all)`)
        : c.dim(`\n${total} ${plural(r.total, 'entry', 'entries')}`);
    return table + more;
  },
});
