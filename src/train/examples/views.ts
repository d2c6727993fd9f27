import { UsageError } from '../../errors.js';
import { isBondOnly, type Agent } from '../../memoir/agents.js';
import { AGENT_AUTHORED_SOURCES, councilFields } from '../../memoir/council-fields.js';
import type { RevisionGraph } from '../../memoir/revisions.js';
import { RowLoader } from '../../memoir/row-loader.js';
import type { MemoirEntry } from '../../memoir/schema.js';
import type { EntryRow, MemoirIndex } from '../../store/memoir-index.js';
import type { IndexedRevisionNode } from '../../store/revision-queries.js';
import { examplesOf, fromCouncilFields, fromEntry } from './build.js';
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
 *                              (src/memoir/council-fields.ts): never text the player wrote.
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
  /** Replay buffer bound: entries kept per agent beyond the load-bearing ones. */
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
        const key = `${ex.scene}\u0000${ex.chosen}\u0000${ex.rejected}`;
        const at = this.pairs.get(key);
        if (at !== undefined) {
          const prev = this.examples[at] as Example & { kind: 'pair' };
          this.examples[at] = { ...prev, weight: Math.max(prev.weight, ex.weight), chosenBy: prev.chosenBy === 'revision' || ex.chosenBy === 'revision' ? 'revision' : 'choice' };
          this.skip('duplicate_pair');
          continue;
        }
        this.pairs.set(key, this.examples.length);
      }
      this.examples.push(ex);
    }
  }
}

/** The newest task description of a scene (bond only: it is the player's words); cached per scene. */
function describer(source: ExampleSource, loader: RowLoader): (scene: string) => string | null {
  const cache = new Map<string, string | null>();
  return (scene) => {
    const hit = cache.get(scene);
    if (hit !== undefined) return hit;
    let text: string | null = null;
    for (const row of source.index.iterate({ files: source.files, scenePrefix: scene, sources: ['task_description'], latestOnly: true })) {
      if (row.scene_id !== scene) continue;
      const e = loader.load(row);
      if (e.agent_proposed !== null && e.agent_proposed.trim() !== '') text = e.agent_proposed;
    }
    if (cache.size > 256) cache.clear();
    cache.set(scene, text);
    return text;
  };
}

/** The task description of each scene, for prompts (`memoir export --include-private`). */
export function sceneDescriptions(source: ExampleSource): { describe: (scene: string) => string | null; close: () => void } {
  const loader = new RowLoader();
  return { describe: describer(source, loader), close: () => loader.close() };
}

function bound(opts: ViewOptions): number {
  const b = opts.bound ?? DEFAULT_VIEW_BOUND;
  if (!Number.isInteger(b) || b < 0) throw new UsageError(`the replay buffer bound must be a whole number ≥ 0, got ${b}`);
  return b;
}

export function bondView(source: ExampleSource, agent: Agent, opts: ViewOptions = {}): DataView {
  const buf = streamReplayBuffer(source.index, { files: source.files, agents: [agent] }, bound(opts), opts);
  const out = new Collector();
  out.skip('superseded', buf.superseded);
  out.skip('below_bound', buf.belowBound);
  const loader = new RowLoader();
  try {
    const describe = describer(source, loader);
    for (const row of buf.kept) {
      const e = loader.load(row);
      const description = agent === 'hephaestus' && routeTarget(e.agent_proposed) !== null ? describe(row.scene_id) : null;
      out.add(examplesOf(fromEntry(e, description), out.skip));
    }
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

/** The agent-authored texts of a scene's shareable entries, as the council field rule sees them; cached for the last scene. */
function sceneAgentTexts(source: ExampleSource, graph: RevisionGraph<IndexedRevisionNode>, loader: RowLoader): (scene: string) => ReadonlySet<string> {
  let lastScene: string | null = null;
  let last: Set<string> = new Set();
  return (scene) => {
    if (scene === lastScene) return last;
    const texts = new Set<string>();
    const rows: EntryRow[] = [];
    for (const row of source.index.iterate({ files: source.files, scenePrefix: scene, split: 'shared', sources: [...AGENT_AUTHORED_SOURCES], latestOnly: true })) {
      if (row.scene_id === scene && (!graph.has(row.entry_id) || graph.effectiveShareable(row.entry_id))) rows.push(row);
    }
    for (const row of rows) {
      const e = loader.load(row);
      const f = councilFields(e, { ancestors: ancestorsOf(graph, loader, e) });
      if (f?.agent_text) texts.add(f.agent_text);
    }
    lastScene = scene;
    last = texts;
    return texts;
  };
}

export function councilView(source: ExampleSource, agent: Agent, opts: ViewOptions = {}): DataView {
  if (isBondOnly(agent)) throw new UsageError(`${agent} is bond-only: Cupid and Puck have no council adapter, so there is no council view of ${agent}`);
  const buf = streamReplayBuffer(source.index, { files: source.files, agents: [agent], split: 'shared' }, bound(opts), opts);
  const out = new Collector();
  out.skip('private', source.index.count({ files: source.files, agents: [agent], split: 'private' }) + buf.chainPrivate);
  out.skip('superseded', buf.superseded);
  out.skip('below_bound', buf.belowBound);
  const loader = new RowLoader();
  try {
    const agentTexts = sceneAgentTexts(source, buf.graph, loader);
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
