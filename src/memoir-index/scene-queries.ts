import type { EntryRow, MemoirIndex } from './memoir-index.js';

/**
 * Every row of exactly these scenes in these memoirs, through the scene index. The general
 * filtered query orders by (file, line) and so walks a whole memoir; the data views ask for a few
 * scenes at a time and must cost what those scenes hold, not what the memoir holds. No order:
 * callers sort what they keep.
 */
export function rowsInScenes(
  index: MemoirIndex,
  files: readonly number[],
  scenes: readonly string[],
  filter: { sources?: readonly string[]; split?: 'shared' | 'private' } = {},
): EntryRow[] {
  if (scenes.length === 0 || files.length === 0) return [];
  const params: unknown[] = [...scenes, ...files];
  let sql = `SELECT e.*, f.path FROM entries e INDEXED BY entries_scene JOIN files f ON f.id = e.file_id
    WHERE e.scene_id IN (${scenes.map(() => '?').join(',')}) AND e.file_id IN (${files.map(() => '?').join(',')})`;
  if (filter.sources && filter.sources.length > 0) {
    sql += ` AND e.source IN (${filter.sources.map(() => '?').join(',')})`;
    params.push(...filter.sources);
  }
  if (filter.split) sql += ` AND e.shareable = ${filter.split === 'shared' ? 1 : 0}`;
  return index.db.prepare(sql).all(...params) as EntryRow[];
}
