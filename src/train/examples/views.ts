import { createHash } from 'node:crypto';
import { UsageError } from '../../errors.js';
import { isBondOnly, type Agent } from '../../memoir/format/agents.js';
import { AGENT_AUTHORED_SOURCES, councilFields } from '../../memoir/derive/council-fields.js';
import type { RevisionGraph } from '../../memoir/derive/revisions.js';
import { RowLoader } from '../../memoir/file/row-loader.js';
import type { MemoirEntry } from '../../memoir/format/schema.js';
import { SOURCES, type Source } from '../../memoir/format/sources.js';
import type { EntryFilter, EntryRow, MemoirIndex } from '../../memoir-index/memoir-index.js';
import { loadRevisionGraph, type IndexedRevisionNode } from '../../memoir-index/revision-queries.js';
import { rowsInScenes } from '../../memoir-index/scene-queries.js';
import { examplesOf, fromCouncilFields, fromEntry, testPairs } from './build.js';
import { routeTarget } from './route-text.js';
import { streamReplayBuffer, type StreamOptions } from './stream-buffer.js';
import type { DataView, Example } from './types.js';

/**
 * The data views: memoir -> labelled examples for one agent's adapter.
 *
 *   bondView(source, agent)    every entry of the agent, private ones included (the bond adapter
 *                              never leaves the machine); newest revisions only: superseded
 *                              lines never train; the replay buffer keeps load-bearing entries
 *                              in play and fills the rest of `bound` with the most informative.
 *   councilView(source, agent) only entries the strict split rule marks shareable (their chain
 *                              too), and of those only what the council field rule allows
 *                              (src/memoir/derive/council-fields.ts): never text the player wrote.
 *                              The federation round calls this.
 *
 * `source` is the memoir index (`kourai memoir index`; commands bring it up to date first) and
 * the memoir files to read. Examples come in memoir order; identical pairs of one scene (the
 * proposal entry and the player's revision entry carry the same pair) count once, with the
 * larger weight. Memory follows the buffer: the index is streamed, and only kept entries are
 * read from the memoirs.
 */

export interface ExampleSource {
  index: MemoirIndex;
  /** Index file ids of the memoirs to read (`openIndexed(...).fileIds`). */
  files: readonly number[];
}

export interface ViewOptions extends StreamOptions {
  /** Replay buffer bound: entries kept per agent beyond the load-bearing ones (with `strictBound`, in all). */
  bound?: number;
}

export const DEFAULT_VIEW_BOUND = 50_000;

class Collector {
  readonly examples: Example[] = [];
  readonly skipped: Record<string, number> = {};
  private readonly pairs = new Map<string, number>();

  skip = (reason: string, n = 1): void => {
    if (n > 0) this.skipped[reason] = (this.skipped[reason] ?? 0) + n;
  };

  add(list: readonly Example[]): void {
    for (const ex of list) {
      if (ex.kind === 'pair') {
        const key = createHash('sha256')
          .update(ex.scene)
          .update('\u0000')
          .update(ex.chosen)
          .update('\u0000')
          .update(ex.rejected)
          .digest('base64');
        const at = this.pairs.get(key);
        if (at !== undefined) {
          const prev = this.examples[at] as Example & { kind: 'pair' };
          this.examples[at] = {
            ...prev,
            weight: Math.max(prev.weight, ex.weight),
            chosenBy: prev.chosenBy === 'revision' || ex.chosenBy === 'revision' ? 'revision' : 'choice',
          };
          this.skip('duplicate_pair');
          continue;
        }
        this.pairs.set(key, this.examples.length);
      }
      this.examples.push(ex);
    }
  }
}

/**
 * The newest revisions of these scenes' rows, in one pass over the index (a query per scene would
 * make the views quadratic in the memoir), grouped by scene in memoir order.
 */
function rowsOfScenes(
  source: ExampleSource,
  graph: RevisionGraph<IndexedRevisionNode>,
  scenes: ReadonlySet<string>,
  filter: Parameters<typeof rowsInScenes>[3],
): Map<string, EntryRow[]> {
  const out = new Map<string, EntryRow[]>();
  const all = [...scenes].sort();
  // Scenes by the hundred, through the scene index: the cost follows the scenes asked for.
  for (let i = 0; i < all.length; i += 100) {
    for (const row of rowsInScenes(source.index, source.files, all.slice(i, i + 100), filter)) {
      if (graph.isSuperseded(row.entry_id)) continue;
      const list = out.get(row.scene_id);
      if (list) list.push(row);
      else out.set(row.scene_id, [row]);
    }
  }
  // Each scene's rows in memoir order, whatever batch they came in.
  for (const list of out.values()) list.sort((a, b) => a.file_id - b.file_id || a.line - b.line);
  return out;
}

/** The newest task description of each of these scenes (bond only: it is the player's words). */
function describer(
  source: ExampleSource,
  graph: RevisionGraph<IndexedRevisionNode>,
  loader: RowLoader,
  scenes: ReadonlySet<string>,
): (scene: string) => string | null {
  const rows = rowsOfScenes(source, graph, scenes, { sources: ['task_description'] });
  const cache = new Map<string, string | null>();
  return (scene) => {
    const hit = cache.get(scene);
    if (hit !== undefined) return hit;
    let text: string | null = null;
    for (const row of rows.get(scene) ?? []) {
      const e = loader.load(row);
      if (e.agent_proposed !== null && e.agent_proposed.trim() !== '') text = e.agent_proposed;
    }
    cache.set(scene, text);
    return text;
  };
}

/** The task description of each of these scenes, for prompts (`memoir export --include-private`). */
export function sceneDescriptions(
  source: ExampleSource,
  scenes: Iterable<string>,
): { describe: (scene: string) => string | null; close: () => void } {
  const loader = new RowLoader();
  return {
    describe: describer(source, loadRevisionGraph(source.index, source.files), loader, new Set(scenes)),
    close: () => loader.close(),
  };
}

/**
 * The sources an agent's examples can come from (build.ts): the buffer's room goes to entries
 * that can teach the adapter, not to task descriptions, transcripts or affinity moves of a
 * federating agent. Cupid and Puck learn from any entry with a beat and an outcome or affinity.
 */
export function labelledSources(agent: Agent): readonly Source[] | null {
  if (isBondOnly(agent)) return null;
  if (agent === 'hephaestus') return ['specialist_proposed'];
  return ['specialist_proposed', 'agent_interrupt', 'disagreement_resolution', 'player_revision'];
}

/** The buffer's filter for an agent, and how many of its entries that leaves out. */
function candidatesOf(
  source: ExampleSource,
  agent: Agent,
  split?: 'shared',
): { filter: EntryFilter & { files: readonly number[] }; unlabelled: number } {
  const sources = labelledSources(agent);
  const filter = { files: source.files, agents: [agent], ...(sources ? { sources } : {}), ...(split ? { split } : {}) };
  const others = sources ? SOURCES.filter((x) => !sources.includes(x)) : [];
  return {
    filter,
    unlabelled:
      others.length > 0
        ? source.index.count({ files: source.files, agents: [agent], sources: others, ...(split ? { split } : {}) })
        : 0,
  };
}

function bound(opts: ViewOptions): number {
  const b = opts.bound ?? DEFAULT_VIEW_BOUND;
  if (!Number.isInteger(b) || b < 0)
    throw new UsageError(`the replay buffer bound must be a whole number ≥ 0, got ${b}`);
  return b;
}

export function bondView(source: ExampleSource, agent: Agent, opts: ViewOptions = {}): DataView {
  const { filter, unlabelled } = candidatesOf(source, agent);
  const buf = streamReplayBuffer(source.index, filter, bound(opts), opts);
  const out = new Collector();
  out.skip('unlabelled_source', unlabelled);
  out.skip('superseded', buf.superseded);
  out.skip('below_bound', buf.belowBound);
  out.skip('load_bearing_over_bound', buf.bearingOverBound);
  const loader = new RowLoader();
  try {
    // The scene's task description: what Hephaestus routes, and the prompt every other agent's texts answer.
    const describe = describer(
      source,
      buf.graph,
      loader,
      isBondOnly(agent) ? new Set() : new Set(buf.kept.map((r) => r.scene_id)),
    );
    const tested: Parameters<typeof testPairs>[0][number][] = [];
    for (const row of buf.kept) {
      const e = loader.load(row);
      const description =
        agent === 'hephaestus'
          ? routeTarget(e.agent_proposed) !== null
            ? describe(row.scene_id)
            : null
          : isBondOnly(agent)
            ? null
            : describe(row.scene_id);
      const fields = fromEntry(e, description);
      out.add(examplesOf(fields, out.skip));
      if (
        fields.signals.testsPassed !== null &&
        fields.text &&
        (fields.source === 'specialist_proposed' || fields.source === 'agent_interrupt')
      )
        tested.push({ fields, text: fields.text, passed: fields.signals.testsPassed, weight: fields.weight ?? 1 });
    }
    out.add(testPairs(tested));
  } finally {
    loader.close();
  }
  return { view: 'bond', agent, examples: out.examples, skipped: out.skipped };
}

/** The entries a revision replaces, the original first (as far as these memoirs hold them). */
function ancestorsOf(graph: RevisionGraph<IndexedRevisionNode>, loader: RowLoader, entry: MemoirEntry): MemoirEntry[] {
  const out: MemoirEntry[] = [];
  const seen = new Set<string>([entry.entry_id]);
  let id = entry.supersedes ?? null;
  while (typeof id === 'string' && !seen.has(id)) {
    seen.add(id);
    const node = graph.get(id);
    if (!node) break;
    const e = loader.load(node.row);
    out.unshift(e);
    id = e.supersedes ?? null;
  }
  return out;
}

/** The agent-authored texts of these scenes' shareable entries, as the council field rule sees them (one pass over the index). */
function sceneAgentTexts(
  source: ExampleSource,
  graph: RevisionGraph<IndexedRevisionNode>,
  loader: RowLoader,
  scenes: ReadonlySet<string>,
): (scene: string) => ReadonlySet<string> {
  const rows = rowsOfScenes(source, graph, scenes, { split: 'shared', sources: [...AGENT_AUTHORED_SOURCES] });
  const cache = new Map<string, Set<string>>();
  return (scene) => {
    const hit = cache.get(scene);
    if (hit) return hit;
    const texts = new Set<string>();
    for (const row of rows.get(scene) ?? []) {
      if (graph.has(row.entry_id) && !graph.effectiveShareable(row.entry_id)) continue;
      const e = loader.load(row);
      const f = councilFields(e, { ancestors: ancestorsOf(graph, loader, e) });
      if (f?.agent_text) texts.add(f.agent_text);
    }
    cache.set(scene, texts);
    return texts;
  };
}

export function councilView(source: ExampleSource, agent: Agent, opts: ViewOptions = {}): DataView {
  if (isBondOnly(agent))
    throw new UsageError(
      `${agent} is bond-only: Cupid and Puck have no council adapter, so there is no council view of ${agent}`,
    );
  const { filter, unlabelled } = candidatesOf(source, agent, 'shared');
  const buf = streamReplayBuffer(source.index, filter, bound(opts), opts);
  const out = new Collector();
  out.skip('unlabelled_source', unlabelled);
  out.skip(
    'private',
    source.index.count({ files: source.files, agents: [agent], split: 'private' }) + buf.chainPrivate,
  );
  out.skip('superseded', buf.superseded);
  out.skip('below_bound', buf.belowBound);
  const loader = new RowLoader();
  try {
    // Only a pair can need the scene's other proposals (to show both its sides are an agent's).
    const agentTexts = sceneAgentTexts(
      source,
      buf.graph,
      loader,
      new Set(buf.kept.filter((r) => r.has_preference === 1).map((r) => r.scene_id)),
    );
    for (const row of buf.kept) {
      const e = loader.load(row);
      const fields = councilFields(e, {
        ancestors: ancestorsOf(buf.graph, loader, e),
        isAgentTextInScene: (t) => agentTexts(row.scene_id).has(t),
      });
      if (!fields) {
        out.skip('private');
        continue;
      }
      out.add(examplesOf(fromCouncilFields(fields), out.skip));
    }
  } finally {
    loader.close();
  }
  return { view: 'council', agent, examples: out.examples, skipped: out.skipped };
}
