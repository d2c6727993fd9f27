import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import { MemoirQueries } from '../../memoir-index/memoir-queries.js';
import { defineCommand } from '../types.js';
import { openIndexed } from './shared.js';
import { affinity as fmtAffinity, count } from '../../format.js';
import { optionsSchema } from '../spec-schema.js';
import { stats as spec } from './commands.js';

const options = optionsSchema(spec, {});

export interface StatsResult {
  memoirs: number;
  entries: number;
  shared: number;
  private: number;
  lenient_splits: number;
  invalid_lines: number;
  sessions: number;
  by_agent: { agent: string; entries: number; shared: number; private: number; affinity: number }[];
  by_source: { source: string; entries: number; shared: number; private: number }[];
  by_type: { entry_type: string; entries: number }[];
  by_split_reason: { reason: string; entries: number }[];
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<StatsResult> {
    const { index, fileIds } = await openIndexed(ctx, opts.memoir, { quiet: opts.json });
    try {
      const s = new MemoirQueries(index).stats(fileIds);
      return {
        memoirs: fileIds.length,
        entries: s.entries,
        shared: s.shared,
        private: s.entries - s.shared,
        lenient_splits: s.lenient,
        invalid_lines: s.invalid,
        sessions: s.sessions,
        by_agent: s.byAgent.map((a) => ({
          ...a,
          private: a.entries - a.shared,
          affinity: Math.round(a.affinity * 1e6) / 1e6,
        })),
        by_source: s.bySource.map((x) => ({ ...x, private: x.entries - x.shared })),
        by_type: s.byType,
        by_split_reason: s.byReason,
      };
    } finally {
      index.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const head =
      `${count(r.entries, 'entry', 'entries')} in ${count(r.memoirs, 'memoir')}, ${count(r.sessions, 'session')}: ${c.green(`${r.shared} shared`)}, ${r.private} private` +
      (r.lenient_splits
        ? c.yellow(`, ${count(r.lenient_splits, 'lenient upstream split')} (treated as private)`)
        : '') +
      (r.invalid_lines ? c.red(`, ${count(r.invalid_lines, 'invalid line')}`) : '');
    const agents = renderTable(r.by_agent, [
      { header: 'AGENT', get: (a) => a.agent },
      { header: 'ENTRIES', get: (a) => String(a.entries), align: 'right' },
      { header: 'SHARED', get: (a) => String(a.shared), align: 'right' },
      { header: 'PRIVATE', get: (a) => String(a.private), align: 'right' },
      { header: 'AFFINITY', get: (a) => fmtAffinity(a.affinity), align: 'right' },
    ]);
    const sources = renderTable(r.by_source, [
      { header: 'SOURCE', get: (s) => s.source },
      { header: 'ENTRIES', get: (s) => String(s.entries), align: 'right' },
      { header: 'SHARED', get: (s) => String(s.shared), align: 'right' },
      { header: 'PRIVATE', get: (s) => String(s.private), align: 'right' },
    ]);
    return `${head}\n\n${agents}\n${sources}`;
  },
});
