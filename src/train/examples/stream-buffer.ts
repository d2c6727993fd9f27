import { CancelledError } from '../../errors.js';
import { IdSet } from '../../memoir/verify/id-set.js';
import { loadBearingVerdict } from '../../memoir/derive/load-bearing.js';
import { compareKeyed, keyed, type Keyed } from '../../memoir/derive/replay-buffer.js';
import type { RevisionGraph } from '../../memoir/derive/revisions.js';
import { RowLoader } from '../../memoir/file/row-loader.js';
import type { EntryFilter, EntryRow, MemoirIndex } from '../../memoir-index/memoir-index.js';
import { candidateOf, chainOf } from '../../memoir-index/replay-candidates.js';
import { loadRevisionGraph, type IndexedRevisionNode } from '../../memoir-index/revision-queries.js';

/**
 * The replay buffer, selected while streaming the index: the same entries as
 * `selectReplayBuffer` over `bufferCandidates` (superseded dropped, every load-bearing entry
 * kept, the rest filled most-informative-first up to the bound), but holding only the
 * load-bearing entries and the `bound` best of the rest at any time, never one object per
 * entry of the memoir. Memory follows the buffer, not the memoir.
 */

/** What the views need of a kept row: where it lives and what it is (one small object each). */
export type KeptRow = Pick<
  EntryRow,
  'file_id' | 'line' | 'path' | 'offset' | 'length' | 'entry_id' | 'scene_id' | 'has_preference'
>;

export interface StreamedBuffer {
  /** The kept rows, in memoir order (file, line). */
  kept: KeptRow[];
  /** Rows looked at (after the split filter). */
  candidates: number;
  superseded: number;
  loadBearing: number;
  /** Not superseded, but below the bound. */
  belowBound: number;
  /** Load-bearing entries left out by a strict bound. */
  bearingOverBound: number;
  /** Rows the split filter let through but whose chain is private (a revision of a private entry). */
  chainPrivate: number;
  overBound: boolean;
  graph: RevisionGraph<IndexedRevisionNode>;
}

export interface StreamOptions {
  signal?: AbortSignal | undefined;
  /**
   * A hard bound: at most `bound` entries in all, load-bearing ones first (best ranked, as
   * `selectReplayBuffer` ranks them), so memory follows the bound even when a long memoir holds
   * more load-bearing entries than that. Without it every load-bearing entry is kept.
   */
  strictBound?: boolean | undefined;
  /** Called every few thousand rows with the number looked at so far. */
  onProgress?: ((rows: number) => void) | undefined;
}

interface Item {
  row: KeptRow;
  key: Keyed;
}

/** Keeps the `cap` smallest items by `cmp` (a max-heap: the worst kept item on top). */
class BoundedHeap {
  private readonly items: Item[] = [];
  constructor(private readonly cap: number) {}

  push(it: Item): void {
    if (this.cap === 0) return;
    const h = this.items;
    if (h.length < this.cap) {
      h.push(it);
      let i = h.length - 1;
      while (i > 0) {
        const p = (i - 1) >> 1;
        if (compareKeyed((h[p] as Item).key, (h[i] as Item).key) >= 0) break;
        [h[p], h[i]] = [h[i] as Item, h[p] as Item];
        i = p;
      }
      return;
    }
    if (compareKeyed(it.key, (h[0] as Item).key) >= 0) return;
    h[0] = it;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && compareKeyed((h[l] as Item).key, (h[m] as Item).key) > 0) m = l;
      if (r < h.length && compareKeyed((h[r] as Item).key, (h[m] as Item).key) > 0) m = r;
      if (m === i) break;
      [h[m], h[i]] = [h[i] as Item, h[m] as Item];
      i = m;
    }
  }

  get size(): number {
    return this.items.length;
  }

  /** Best first. */
  sorted(): Item[] {
    return [...this.items].sort((a, b) => compareKeyed(a.key, b.key));
  }
}

/** Whether an earlier row (in iteration order) of these files has exactly this id. */
function seenBefore(index: MemoirIndex, row: EntryRow, files: ReadonlySet<number>): boolean {
  return index
    .byEntryId(row.entry_id)
    .some((r) => files.has(r.file_id) && (r.file_id < row.file_id || (r.file_id === row.file_id && r.line < row.line)));
}

export function streamReplayBuffer(
  index: MemoirIndex,
  filter: EntryFilter & { files: readonly number[] },
  bound: number,
  opts: StreamOptions = {},
): StreamedBuffer {
  if (!Number.isInteger(bound) || bound < 0)
    throw new RangeError(`replay buffer bound must be a non-negative integer, got ${bound}`);
  if (opts.signal?.aborted) throw new CancelledError();
  const graph = loadRevisionGraph(index, filter.files);
  const files = new Set(filter.files);
  const ids = new IdSet(1 << 12);
  const loader = new RowLoader();
  const strict = opts.strictBound === true;
  const bearing: Item[] = [];
  const strictBearing = new BoundedHeap(bound);
  let bearingSeen = 0;
  const rest = new BoundedHeap(bound);
  const paths = new Map<string, string>();
  const compact = (r: EntryRow): KeptRow => {
    let path = paths.get(r.path);
    if (path === undefined) paths.set(r.path, (path = r.path));
    return {
      file_id: r.file_id,
      line: r.line,
      path,
      offset: r.offset,
      length: r.length,
      entry_id: r.entry_id,
      scene_id: r.scene_id,
      has_preference: r.has_preference,
    };
  };
  let candidates = 0;
  let superseded = 0;
  let chainPrivate = 0;
  let restSeen = 0;
  let n = 0;
  try {
    for (const row of index.iterate({ ...filter, latestOnly: false })) {
      if (++n % 4096 === 0) {
        if (opts.signal?.aborted) throw new CancelledError();
        opts.onProgress?.(n);
      }
      // A revision is never more shareable than what it replaces.
      if (filter.split === 'shared' && graph.has(row.entry_id) && !graph.effectiveShareable(row.entry_id)) {
        chainPrivate++;
        continue;
      }
      if (ids.addOrGet(row.entry_id, row.seq) !== undefined && seenBefore(index, row, files)) continue; // duplicate ids: verify's problem
      candidates++;
      const chain = chainOf(graph, row);
      if (chain === 'superseded') {
        superseded++;
        continue;
      }
      const c = candidateOf(row, chain, loader);
      const item = { row: compact(row), key: keyed(c) };
      if (loadBearingVerdict(c, c).load_bearing) {
        bearingSeen++;
        if (strict) strictBearing.push(item);
        else bearing.push(item);
      } else {
        restSeen++;
        rest.push(item);
      }
    }
  } finally {
    loader.close();
  }
  const kBearing = strict ? strictBearing.sorted() : bearing;
  const room = Math.max(0, bound - kBearing.length);
  const filled = rest.sorted().slice(0, room);
  const kept = [...kBearing, ...filled].map((it) => it.row).sort((a, b) => a.file_id - b.file_id || a.line - b.line);
  return {
    kept,
    candidates,
    superseded,
    loadBearing: bearingSeen,
    belowBound: restSeen - filled.length,
    bearingOverBound: bearingSeen - kBearing.length,
    chainPrivate,
    overBound: bearingSeen > bound,
    graph,
  };
}
