import { z } from 'zod';
import type { Ctx } from '../../context.js';
import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import { defineCommand } from '../types.js';
import { memoirOpt, openIndexed } from './shared.js';

const options = z.object({ memoir: memoirOpt, json: z.boolean().default(false) });

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
    const { index, fileIds } = openIndexed(ctx, opts.memoir, { quiet: opts.json });
    try {
      const inFiles = `file_id IN (${fileIds.map(() => '?').join(',') || 'NULL'})`;
      const q = <T>(sql: string): T[] => index.db.prepare(sql).all(...fileIds) as T[];
      const totals = q<{ n: number; shared: number; lenient: number; sessions: number }>(
        `SELECT count(*) AS n, coalesce(sum(shareable), 0) AS shared, coalesce(sum(lenient), 0) AS lenient,
                count(DISTINCT substr(scene_id, 1, instr(scene_id || '.', '.') - 1)) AS sessions FROM entries WHERE ${inFiles}`,
      )[0] ?? { n: 0, shared: 0, lenient: 0, sessions: 0 };
      const invalid = q<{ n: number }>(`SELECT count(*) AS n FROM problems WHERE ${inFiles}`)[0]?.n ?? 0;
      const byAgent = q<{ agent: string; entries: number; shared: number; affinity: number }>(
        `SELECT agent, count(*) AS entries, sum(shareable) AS shared, sum(affinity_delta) AS affinity FROM entries WHERE ${inFiles} GROUP BY agent ORDER BY entries DESC, agent`,
      );
      const bySource = q<{ source: string; entries: number; shared: number }>(
        `SELECT source, count(*) AS entries, sum(shareable) AS shared FROM entries WHERE ${inFiles} GROUP BY source ORDER BY entries DESC, source`,
      );
      const byType = q<{ entry_type: string; entries: number }>(`SELECT entry_type, count(*) AS entries FROM entries WHERE ${inFiles} GROUP BY entry_type ORDER BY entries DESC`);
      const byReason = q<{ reason: string; entries: number }>(`SELECT split_reason AS reason, count(*) AS entries FROM entries WHERE ${inFiles} GROUP BY split_reason ORDER BY entries DESC`);
      return {
        memoirs: fileIds.length,
        entries: totals.n,
        shared: totals.shared,
        private: totals.n - totals.shared,
        lenient_splits: totals.lenient,
        invalid_lines: invalid,
        sessions: totals.sessions,
        by_agent: byAgent.map((a) => ({ ...a, private: a.entries - a.shared, affinity: Math.round(a.affinity * 1e6) / 1e6 })),
        by_source: bySource.map((s) => ({ ...s, private: s.entries - s.shared })),
        by_type: byType,
        by_split_reason: byReason,
      };
    } finally {
      index.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    const head = `${r.entries} entries in ${r.memoirs} memoir${r.memoirs === 1 ? '' : 's'}, ${r.sessions} sessions: ${c.green(`${r.shared} shared`)}, ${r.private} private` +
      (r.lenient_splits ? c.yellow(`, ${r.lenient_splits} lenient upstream splits (treated as private)`) : '') +
      (r.invalid_lines ? c.red(`, ${r.invalid_lines} invalid lines`) : '');
    const agents = renderTable(r.by_agent, [
      { header: 'AGENT', get: (a) => a.agent },
      { header: 'ENTRIES', get: (a) => String(a.entries), align: 'right' },
      { header: 'SHARED', get: (a) => String(a.shared), align: 'right' },
      { header: 'PRIVATE', get: (a) => String(a.private), align: 'right' },
      { header: 'AFFINITY', get: (a) => a.affinity.toFixed(3), align: 'right' },
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
