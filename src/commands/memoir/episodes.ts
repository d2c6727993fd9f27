import type { Ctx } from '../../context.js';
import { appendLines, prepareEntries } from '../../memoir/file/append.js';
import { ulidGenerator } from '../../memoir/format/entry-id.js';
import { RowLoader } from '../../memoir/file/row-loader.js';
import {
  buildEpisode,
  episodeEntry,
  episodeKey,
  renderEpisode,
  sessionOf,
  storedEpisode,
  type Episode,
  type EpisodeGrouping,
} from '../../memoir/derive/episodes.js';
import type { MemoirEntry } from '../../memoir/format/schema.js';
import { ENTRY_TYPES } from '../../memoir/format/sources.js';
import { colors } from '../../output/color.js';
import type { EntryFilter, EntryRow, MemoirIndex } from '../../memoir-index/memoir-index.js';
import { MemoirQueries } from '../../memoir-index/memoir-queries.js';
import { loadRevisionGraph } from '../../memoir-index/revision-queries.js';
import { defineCommand } from '../types.js';
import { loadRow, openIndexed } from './shared.js';
import { optionsSchema } from '../spec-schema.js';
import { episodes as spec } from './commands.js';

const options = optionsSchema(spec, {});

export type EpisodeWriteStatus = 'written' | 'unchanged' | 'updated';

export interface EpisodeView extends Episode {
  /** The memoir the episode belongs to (where --write puts it). */
  memoir: string;
  /** With --write: what happened to it, and the id of its entry. */
  stored: { status: EpisodeWriteStatus; entry_id: string; supersedes: string | null } | null;
}

export interface EpisodesResult {
  by: EpisodeGrouping;
  written: number;
  unchanged: number;
  updated: number;
  episodes: EpisodeView[];
}

const NOT_EPISODES = ENTRY_TYPES.filter((t) => t !== 'episode');

/**
 * Entries (newest revisions only, episodes excluded) ordered so that each scene or session is
 * contiguous: one group in memory at a time, whatever the memoir's size.
 */
function* groups(
  index: MemoirIndex,
  filter: EntryFilter,
  by: EpisodeGrouping,
): Generator<{ key: string; rows: EntryRow[] }> {
  const it = new MemoirQueries(index).groupedRows(filter, by);
  let key: string | undefined;
  let rows: EntryRow[] = [];
  for (const row of it) {
    const k = episodeKey(row.scene_id, by);
    if (k !== key && rows.length > 0) {
      yield { key: key as string, rows };
      rows = [];
    }
    key = k;
    rows.push(row);
  }
  if (rows.length > 0) yield { key: key as string, rows };
}

/** What each session asked for (its first task_description), for per-scene goals. */
function askedBySession(index: MemoirIndex, fileIds: readonly number[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const row of index.iterate({ files: fileIds, sources: ['task_description'], latestOnly: true })) {
    const s = sessionOf(row.scene_id);
    if (out.has(s)) continue;
    const text = loadRow(row).agent_proposed;
    if (text) out.set(s, text.replace(/\s+/g, ' ').trim());
  }
  return out;
}

/** The newest stored episode entry per (grouping, key). */
function storedEpisodes(
  index: MemoirIndex,
  fileIds: readonly number[],
): Map<string, { entry_id: string; hash: string }> {
  const out = new Map<string, { entry_id: string; hash: string }>();
  for (const row of index.iterate({ files: fileIds, types: ['episode'], latestOnly: true })) {
    const ep = storedEpisode(loadRow(row));
    if (ep) out.set(`${ep.by}\u0000${ep.key}`, { entry_id: row.entry_id, hash: ep.content_hash });
  }
  return out;
}

export default defineCommand({
  options,
  async run(opts, ctx: Ctx): Promise<EpisodesResult> {
    const { index, fileIds } = await openIndexed(ctx, opts.memoir, { quiet: opts.json });
    const found: { ep: Episode; path: string; seq: number }[] = [];
    let stored = new Map<string, { entry_id: string; hash: string }>();
    const loader = new RowLoader();
    try {
      const asked = askedBySession(index, fileIds);
      // A corrected entry stands where and when its original stood.
      const graph = loadRevisionGraph(index, fileIds);
      const original = (row: EntryRow): EntryRow =>
        graph.has(row.entry_id) ? (graph.get(graph.root(row.entry_id))?.row ?? row) : row;
      const filter: EntryFilter = {
        files: fileIds,
        types: NOT_EPISODES,
        latestOnly: true,
        ...(opts.scene ? { scenePrefix: opts.scene } : {}),
      };
      for (const g of groups(index, filter, opts.by)) {
        const placed = g.rows.map((row) => ({ row, at: original(row) })).sort((a, b) => a.at.seq - b.at.seq);
        const entries: MemoirEntry[] = placed.map((p) => loader.load(p.row));
        const originalTime = new Map(
          placed.filter((p) => p.at !== p.row).map((p) => [p.row.entry_id, p.at.recorded_at] as const),
        );
        const ep = buildEpisode(opts.by, g.key, entries, { asked: asked.get(sessionOf(g.key)) ?? null, originalTime });
        const first = (placed[0] as { at: EntryRow }).at;
        if (ep) found.push({ ep, path: first.path, seq: first.seq });
      }
      if (opts.write) stored = storedEpisodes(index, fileIds);
    } finally {
      loader.close();
      index.close();
    }
    // Chronological: first dated entry, undated (Python) episodes after, then memoir order.
    found.sort((a, b) => {
      const ta = a.ep.context.first_at;
      const tb = b.ep.context.first_at;
      if (ta !== tb) return ta === null ? 1 : tb === null ? -1 : ta < tb ? -1 : 1;
      return a.seq - b.seq;
    });
    const views: EpisodeView[] = found.map(({ ep, path }) => ({ ...ep, memoir: path, stored: null }));
    let written = 0;
    let unchanged = 0;
    let updated = 0;
    if (opts.write) {
      const ids = ulidGenerator(() => ctx.now().getTime(), ctx.secureRandom);
      const byFile = new Map<string, { view: EpisodeView; input: Record<string, unknown> }[]>();
      for (const v of views) {
        const prev = stored.get(`${v.by}\u0000${v.key}`);
        if (prev && prev.hash === v.content_hash) {
          v.stored = { status: 'unchanged', entry_id: prev.entry_id, supersedes: null };
          unchanged++;
          continue;
        }
        const { memoir: _m, stored: _s, ...ep } = v;
        const input = episodeEntry(
          ep,
          prev ? { entry_id: prev.entry_id, reason: 'the entries it summarises changed' } : undefined,
        );
        const list = byFile.get(v.memoir) ?? [];
        list.push({ view: v, input });
        byFile.set(v.memoir, list);
      }
      // Everything is validated before anything is written.
      const batches = [...byFile].map(([path, items]) => ({
        path,
        items,
        prepared: prepareEntries(
          items.map((it) => ({ value: it.input, where: `episode ${it.view.key}` })),
          ids,
          ctx.now,
        ),
      }));
      for (const b of batches) {
        appendLines(
          b.path,
          b.prepared.map((p) => p.line),
          { fsync: opts.fsync, now: ctx.now },
        );
        b.items.forEach((it, i) => {
          const supersedes = typeof it.input.supersedes === 'string' ? it.input.supersedes : null;
          it.view.stored = {
            status: supersedes ? 'updated' : 'written',
            entry_id: (b.prepared[i] as { entry: { entry_id: string } }).entry.entry_id,
            supersedes,
          };
          if (supersedes) updated++;
          else written++;
        });
      }
    }
    return { by: opts.by, written, unchanged, updated, episodes: views };
  },
  render(r, ctx) {
    const c = colors(ctx.colorLevel);
    if (r.episodes.length === 0) return c.dim('no episodes: no entries match');
    const lines = r.episodes.map((e) => {
      const text = renderEpisode(e);
      const q =
        e.quality === 'success' ? c.green(e.quality) : e.quality === 'failure' ? c.red(e.quality) : c.yellow(e.quality);
      const mark = e.stored ? c.dim(`  [${e.stored.status} ${e.stored.entry_id}]`) : '';
      const [head, ...rest] = text.split('\n');
      return [`${(head ?? '').replace(`, ${e.quality})`, `, ${q})`)}${mark}`, ...rest.map((l) => c.dim(l))].join('\n');
    });
    const summary =
      `${r.episodes.length} episode${r.episodes.length === 1 ? '' : 's'} by ${r.by}` +
      (r.written + r.unchanged + r.updated > 0
        ? `; written ${r.written}, updated ${r.updated}, already written ${r.unchanged}`
        : '; not written (--write stores them as private episode entries)');
    return `${lines.join('\n')}\n${c.dim(summary)}`;
  },
});
