import type { ChalkInstance } from 'chalk';
import type { MemoirEntry } from '../../memoir/format/schema.js';
import { oneLine } from '../../output/table.js';
import type { EntryRow, MemoirIndex } from '../../memoir-index/memoir-index.js';
import { loadRevisionGraph } from '../../memoir-index/revision-queries.js';
import { entryView, loadRow } from './shared.js';

/** One entry of a revision chain as `memoir show --history` reports it. */
export interface HistoryEntry {
  entry_id: string;
  /** 0 for the original, 1 for its first revision… */
  depth: number;
  supersedes: string | null;
  recorded_at: string | null;
  revision_reason: string | null;
  /** Top-level fields that differ from the entry it supersedes. */
  changed: string[];
  /** The newest revision: what reads of any id of the chain resolve to. */
  head: boolean;
  entry: Record<string, unknown>;
}

export interface Resolved {
  row: EntryRow;
  /** Set when the id asked for was superseded: the id asked for (`row` is its newest revision). */
  resolvedFrom: string | null;
  /** Set when the chain forks or loops: what verify will say. */
  warning: string | null;
  history: HistoryEntry[] | null;
}

const IGNORED = new Set(['entry_id', 'recorded_at', 'supersedes', 'revision_reason', '_memoir']);

function changedFields(prev: MemoirEntry | undefined, cur: MemoirEntry): string[] {
  if (!prev) return [];
  const a = prev as Record<string, unknown>;
  const b = cur as Record<string, unknown>;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].filter((k) => !IGNORED.has(k) && JSON.stringify(a[k] ?? null) !== JSON.stringify(b[k] ?? null));
}

/**
 * Reads resolve to the newest revision: the row of the newest revision of `row`'s chain and,
 * when asked, the whole chain (original first) with what each revision changed.
 */
export function resolveRevisions(
  index: MemoirIndex,
  fileIds: readonly number[],
  row: EntryRow,
  wantHistory: boolean,
): Resolved {
  const graph = loadRevisionGraph(index, fileIds);
  if (!graph.has(row.entry_id)) {
    return {
      row,
      resolvedFrom: null,
      warning: null,
      history: wantHistory
        ? [
            {
              entry_id: row.entry_id,
              depth: 0,
              supersedes: null,
              recorded_at: row.recorded_at,
              revision_reason: null,
              changed: [],
              head: true,
              entry: entryView(row, loadRow(row)),
            },
          ]
        : null,
    };
  }
  const res = graph.resolve(row.entry_id);
  const headRow = graph.get(res.head)?.row ?? row;
  const warning = res.cycle
    ? `the revision chain loops (${res.path.join(' -> ')}); see \`kourai memoir verify\``
    : res.forked
      ? `the revision chain forks (two revisions of one entry); the newest branch is shown; see \`kourai memoir verify\``
      : null;
  let history: HistoryEntry[] | null = null;
  if (wantHistory) {
    const loaded = new Map<string, MemoirEntry>();
    history = graph.history(row.entry_id).map((h) => {
      const entry = loadRow(h.node.row);
      loaded.set(h.node.entry_id, entry);
      const prev = h.node.supersedes === null ? undefined : loaded.get(h.node.supersedes);
      return {
        entry_id: h.node.entry_id,
        depth: h.depth,
        supersedes: h.node.supersedes,
        recorded_at: h.node.recorded_at,
        revision_reason: typeof entry.revision_reason === 'string' ? entry.revision_reason : null,
        changed: changedFields(prev, entry),
        head: h.head,
        entry: entryView(h.node.row, entry),
      };
    });
  }
  return { row: headRow, resolvedFrom: res.head === row.entry_id ? null : row.entry_id, warning, history };
}

export function renderHistory(history: readonly HistoryEntry[], c: ChalkInstance): string {
  const root = history[0];
  if (!root) return '';
  const head = history.find((h) => h.head);
  const lines = [
    c.bold(
      `history of ${root.entry_id}: ${history.length} entr${history.length === 1 ? 'y' : 'ies'}${head ? `; reads resolve to ${head.entry_id}` : ''}`,
    ),
  ];
  for (const h of history) {
    const m = h.entry._memoir as { shareable: boolean };
    const indent = '  '.repeat(h.depth);
    const mark = h.head ? c.green('● current') : c.dim('○ superseded');
    const what =
      h.depth === 0
        ? 'original'
        : `${c.dim('reason:')} ${oneLine(h.revision_reason ?? '(none)', 80)}; ${c.dim('changed:')} ${h.changed.join(', ') || '(nothing)'}`;
    lines.push(
      `${indent}${h.depth > 0 ? '└ ' : ''}${h.entry_id}  ${h.recorded_at ?? 'undated'}  ${m.shareable ? 'shared' : 'private'}  ${mark}  ${what}`,
    );
  }
  return lines.join('\n');
}
