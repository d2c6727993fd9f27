import { NotFoundError, UsageError } from '../../errors.js';
import type { EntryRow, MemoirIndex } from '../../memoir-index/memoir-index.js';
import { MemoirQueries } from '../../memoir-index/memoir-queries.js';

/**
 * The one indexed entry an id names in these files: an exact id (ULID or derived `py_…`), or
 * an unambiguous prefix of at least 6 characters. The same id in two memoirs (identical
 * Python lines copied between sessions) is ambiguous: `--memoir` chooses.
 */
export function findEntryRow(
  index: MemoirIndex,
  fileIds: readonly number[],
  id: string,
  opts: { firstOfSeveral?: boolean } = {},
): EntryRow {
  const files = new Set(fileIds);
  let rows = index.byEntryId(id).filter((r) => files.has(r.file_id));
  if (rows.length === 0 && id.length >= 6) {
    rows = new MemoirQueries(index).byIdPrefix(id, 50).filter((r) => files.has(r.file_id));
    const distinct = [...new Set(rows.map((r) => r.entry_id))];
    if (distinct.length > 1)
      throw new UsageError(
        `entry id prefix "${id}" is ambiguous (${distinct.slice(0, 3).join(', ')}…)`,
        'give more characters of the id',
      );
  }
  if (rows.length > 1 && !opts.firstOfSeveral) {
    throw new UsageError(
      `entry id "${id}" is in ${rows.length} memoirs (${rows.map((r) => r.path).join(', ')})`,
      'choose one with --memoir PATH',
    );
  }
  const row = rows[0];
  if (!row) {
    throw new NotFoundError(
      `no entry with id "${id}" in ${fileIds.length} memoir${fileIds.length === 1 ? '' : 's'}`,
      'list ids with `kourai memoir inspect`',
    );
  }
  return row;
}

/** The row of an id known to be in these files (a chain member found through the index). */
export function rowOf(index: MemoirIndex, fileIds: readonly number[], id: string): EntryRow | undefined {
  const files = new Set(fileIds);
  return index.byEntryId(id).find((r) => files.has(r.file_id));
}
