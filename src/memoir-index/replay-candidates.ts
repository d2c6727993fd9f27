import { RowLoader } from '../memoir/file/row-loader.js';
import { selectReplayBuffer, type BufferCandidate, type ReplayBuffer } from '../memoir/derive/replay-buffer.js';
import type { EntryType, ReasonClass, ResponseKind, Source } from '../memoir/format/sources.js';
import type { EntryFilter, EntryRow, MemoirIndex } from './memoir-index.js';
import type { RevisionGraph } from '../memoir/derive/revisions.js';
import { loadRevisionGraph, type IndexedRevisionNode } from './revision-queries.js';

/** Where a row stands in the revision chains of its files. */
export function chainOf(graph: RevisionGraph<IndexedRevisionNode>, row: EntryRow): BufferCandidate['chain'] {
  if (!graph.has(row.entry_id)) return 'none';
  if (graph.isSuperseded(row.entry_id)) return 'superseded';
  return row.supersedes !== null ? 'head' : 'none';
}

/** An indexed row as the replay buffer weighs it; interrupts are read from the memoir for their reason class. */
export function candidateOf(row: EntryRow, chain: BufferCandidate['chain'], loader: RowLoader): BufferCandidate {
  let interrupt: { reason_class: ReasonClass } | null = null;
  if (row.entry_type === 'interrupt') interrupt = loader.load(row).interrupt ?? null;
  return {
    entry_id: row.entry_id,
    source: row.source as Source,
    entry_type: row.entry_type as EntryType,
    player_response: row.response_kind ? { kind: row.response_kind as ResponseKind } : null,
    interrupt,
    chain,
    has_preference: row.has_preference === 1,
    affinity_delta: row.affinity_delta,
    recorded_at: row.recorded_at,
  };
}

/**
 * The buffer candidates of these files: every indexed entry passing the filters, with its place
 * in revision chains; interrupts are read from the memoir for their reason class.
 */
export function bufferCandidates(
  index: MemoirIndex,
  filter: EntryFilter & { files: readonly number[] },
): { candidates: BufferCandidate[]; rows: Map<string, EntryRow> } {
  const graph = loadRevisionGraph(index, filter.files);
  const rows = new Map<string, EntryRow>();
  const candidates: BufferCandidate[] = [];
  const loader = new RowLoader();
  try {
    for (const row of index.iterate({ ...filter, latestOnly: false })) {
      // A revision is never more shareable than what it replaces: --split shared honours the chain.
      if (filter.split === 'shared' && graph.has(row.entry_id) && !graph.effectiveShareable(row.entry_id)) continue;
      if (rows.has(row.entry_id)) continue; // duplicate ids are verify's problem; one decision each
      rows.set(row.entry_id, row);
      candidates.push(candidateOf(row, chainOf(graph, row), loader));
    }
  } finally {
    loader.close();
  }
  return { candidates, rows };
}

/**
 * The replay buffer of these memoirs, as the trainer asks for it:
 *   const { buffer, rows } = replayBufferFromIndex(index, { files, agents: ['techne'], split: 'shared' }, 5000);
 * `rows` maps each entry id to where it lives (load entries with RowLoader).
 */
export function replayBufferFromIndex(
  index: MemoirIndex,
  filter: EntryFilter & { files: readonly number[] },
  bound: number,
): { buffer: ReplayBuffer; rows: Map<string, EntryRow> } {
  const { candidates, rows } = bufferCandidates(index, filter);
  return { buffer: selectReplayBuffer(candidates, bound), rows };
}
