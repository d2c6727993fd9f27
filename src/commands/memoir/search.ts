import { z } from 'zod';
import type { Ctx } from '../../context.js';
import { UsageError } from '../../errors.js';
import { colors } from '../../output/color.js';
import { renderTable } from '../../output/table.js';
import { searchText } from '../../memoir-index/memoir-index.js';
import { excerpt, queryWords, SEARCH_MAX_LIMIT, searchEntries } from '../../memoir-index/search.js';
import { defineCommand } from '../types.js';
import { filterChecks, toFilter } from '../options.js';
import { entryView, loadRow, openIndexed } from './shared.js';
import { note } from '../../output/notice.js';
import { optionsSchema } from '../spec-schema.js';
import { search as spec } from './commands.js';

const options = optionsSchema(spec, {
  query: z.union([z.string(), z.array(z.string())]).transform((q) => (Array.isArray(q) ? q.join(' ') : q)),
  ...filterChecks,
  limit: z.coerce.number().int().min(1).default(20),
});

export interface SearchHitView {
  rank: number;
  /** Relevance (−bm25): higher is better. Comparable within one search only. */
  score: number;
  excerpt: string;
  entry: Record<string, unknown>;
}

export interface SearchResult {
  query: string;
  /** The SQLite FTS5 query that ran. */
  fts_query: string;
  total: number;
  shown: number;
  limit: number;
  /** True when --limit asked for more than the cap and was lowered to it. */
  capped: boolean;
  hits: SearchHitView[];
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<SearchResult> {
    const words = queryWords(opts.query);
    if (words.length === 0) throw new UsageError('search needs at least one word', 'e.g. kourai memoir search naming');
    const capped = opts.limit > SEARCH_MAX_LIMIT;
    const limit = Math.min(opts.limit, SEARCH_MAX_LIMIT);
    if (capped && !opts.json) note(ctx, `--limit ${opts.limit} is above the cap; showing at most ${SEARCH_MAX_LIMIT}`);
    const { index, fileIds } = await openIndexed(ctx, opts.memoir, { quiet: opts.json, fullText: true });
    try {
      const filter = { ...toFilter({ ...opts, text: undefined }), files: fileIds, latestOnly: !opts.allRevisions };
      const res = searchEntries(index, opts.query, filter, limit);
      const hits = res.hits.map((h, i) => {
        const entry = loadRow(h.row);
        return {
          rank: i + 1,
          score: Math.round(h.score * 1e9) / 1e9,
          excerpt: excerpt(searchText(entry), words),
          entry: entryView(h.row, entry),
        };
      });
      return { query: opts.query, fts_query: res.fts, total: res.total, shown: hits.length, limit, capped, hits };
    } finally {
      index.close();
    }
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    if (r.hits.length === 0) return c.dim(`no entries match "${r.query}"`);
    const width = Math.max(40, (ctx.stdout.columns ?? 120) - 80);
    const words = queryWords(r.query);
    const table = renderTable(r.hits, [
      { header: '#', get: (h) => String(h.rank), align: 'right' },
      { header: 'ENTRY', get: (h) => String(h.entry.entry_id) },
      { header: 'SCENE', get: (h) => String(h.entry.scene_id) },
      { header: 'AGENT', get: (h) => String(h.entry.agent) },
      { header: 'SOURCE', get: (h) => String(h.entry.source) },
      {
        header: 'SPLIT',
        get: (h) => ((h.entry._memoir as { shareable: boolean }).shareable ? c.green('shared') : c.dim('private')),
      },
      { header: 'MATCH', get: (h) => excerpt(h.excerpt, words, width) },
    ]);
    const more =
      r.total > r.shown
        ? `${r.shown} of ${r.total} matches, best first (--limit N, at most ${SEARCH_MAX_LIMIT})`
        : `${r.total} match${r.total === 1 ? '' : 'es'}, best first`;
    return `${table}${c.dim(more)}`;
  },
});
