import type { EntryFilter, EntryRow, MemoirIndex } from './memoir-index.js';
import { whereClause } from './memoir-index.js';

/**
 * Ranked full-text search over the memoir index (SQLite FTS5, `entries_fts`).
 *
 * Query: the words of the query, any of which may match (an entry matching more of them, or
 * rarer ones, ranks higher); the last word also matches as a prefix (`nam` finds `naming`).
 * Words are quoted, so FTS5 syntax in user text is matched literally.
 *
 * Ranking: FTS5 `bm25()` (term frequency, inverse document frequency, damped by entry length);
 * equal scores go to the newer entry (`recorded_at`; undated Python lines after dated ones),
 * then to the smaller entry id. Deterministic.
 */

export const SEARCH_MAX_LIMIT = 200;

export interface SearchHit {
  row: EntryRow;
  /** Relevance: −bm25, so higher is better. */
  score: number;
}

export interface SearchResults {
  hits: SearchHit[];
  /** How many entries match (before the limit). */
  total: number;
  /** The FTS5 query that was run. */
  fts: string;
}

/** Words of a query (letters, digits and anything the tokenizer keeps), for FTS5 and highlighting. */
export function queryWords(text: string): string[] {
  return text.split(/\s+/).filter((w) => w.length > 0);
}

/** The FTS5 query: every word quoted, OR-ed; the last one also as a prefix. */
export function searchFtsQuery(text: string): string {
  const words = queryWords(text).map((w) => `"${w.replace(/"/g, '""')}"`);
  if (words.length === 0) return '""';
  words[words.length - 1] += '*';
  return words.join(' OR ');
}

export function searchEntries(
  index: MemoirIndex,
  query: string,
  filter: Omit<EntryFilter, 'text' | 'limit'>,
  limit: number,
): SearchResults {
  index.requireFullText(filter.files);
  const fts = searchFtsQuery(query);
  const { where, params } = whereClause(filter);
  const extra = where ? ` AND ${where.replace(/^WHERE /, '')}` : '';
  const from = `FROM entries_fts JOIN entries e ON e.seq = entries_fts.rowid JOIN files f ON f.id = e.file_id WHERE entries_fts MATCH ?${extra}`;
  const rows = index.db
    .prepare(
      `SELECT e.*, f.path, bm25(entries_fts) AS bm25 ${from}
       ORDER BY bm25 ASC, (e.recorded_at IS NULL) ASC, e.recorded_at DESC, e.entry_id ASC
       LIMIT ?`,
    )
    .all(fts, ...params, Math.max(0, Math.floor(limit))) as (EntryRow & { bm25: number })[];
  const total = (index.db.prepare(`SELECT count(*) AS n ${from}`).get(fts, ...params) as { n: number }).n;
  return {
    hits: rows.map(({ bm25, ...row }) => ({ row: row as EntryRow, score: bm25 === 0 ? 0 : -bm25 })),
    total,
    fts,
  };
}

/** A short excerpt of `text` around the first query word it contains (case-insensitive). */
export function excerpt(text: string, words: readonly string[], width = 80): string {
  const flatText = text.replace(/\s+/g, ' ').trim();
  const lower = flatText.toLowerCase();
  let at = -1;
  for (const w of words) {
    const i = lower.indexOf(w.toLowerCase());
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  if (at < 0 || flatText.length <= width)
    return flatText.length <= width ? flatText : `${flatText.slice(0, width - 1)}…`;
  let start = Math.max(0, at - Math.floor(width / 3));
  const space = flatText.lastIndexOf(' ', start);
  if (start > 0 && space >= 0 && at - space < width) start = space + 1; // start on a word
  const piece = flatText.slice(start, start + width);
  return `${start > 0 ? '…' : ''}${piece}${start + width < flatText.length ? '…' : ''}`;
}
