import { RevisionGraph, type RevisionNode } from '../memoir/derive/revisions.js';
import type { EntryRow, MemoirIndex } from './memoir-index.js';

/** A revision-chain node read from the index, with where it lives. */
export interface IndexedRevisionNode extends RevisionNode {
  row: EntryRow;
}

/**
 * Every indexed entry that takes part in a revision chain in these files: the revisions (rows
 * with `supersedes`) and the entries they name. Uses the partial index on `supersedes`, so it
 * costs nothing on a memoir without corrections.
 */
export function revisionRows(index: MemoirIndex, fileIds: readonly number[]): EntryRow[] {
  if (fileIds.length === 0) return [];
  const inFiles = fileIds.map(() => '?').join(',');
  return index.db
    .prepare(
      `SELECT e.*, f.path FROM entries e JOIN files f ON f.id = e.file_id
       WHERE e.file_id IN (${inFiles})
         AND (e.supersedes IS NOT NULL
              OR e.entry_id IN (SELECT r.supersedes FROM entries r WHERE r.supersedes IS NOT NULL AND r.file_id IN (${inFiles})))
       ORDER BY e.seq`,
    )
    .all(...fileIds, ...fileIds) as EntryRow[];
}

export function nodeOf(row: EntryRow): IndexedRevisionNode {
  return {
    entry_id: row.entry_id,
    supersedes: row.supersedes,
    recorded_at: row.recorded_at,
    order: row.seq,
    entry_type: row.entry_type,
    // The entry's own verdict: the index already narrows a revision of a private entry
    // ('private_original'), and the graph must still see what the line itself claims.
    shareable: row.shareable === 1 || row.split_reason === 'private_original',
    row,
  };
}

/** The revision graph of these files (only entries that take part in a chain). */
export function loadRevisionGraph(index: MemoirIndex, fileIds: readonly number[]): RevisionGraph<IndexedRevisionNode> {
  return new RevisionGraph(revisionRows(index, fileIds).map(nodeOf));
}
