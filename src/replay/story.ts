import type { Agent } from '../memoir/format/agents.js';
import type { MemoirEntry } from '../memoir/format/schema.js';
import type { EntryType, Felt, ReasonClass, ResponseKind, Source, Visibility } from '../memoir/format/sources.js';

/**
 * The memoir as a story: sessions (one memoir file each) in the order they began, scenes in
 * memoir order within a session (a scene is a run of consecutive entries with the same
 * `scene_id`), and beats (one entry each).
 *
 * Session order: by the earliest `recorded_at` in each memoir; memoirs with no timestamps at all
 * (lines written by Python hosts) follow, by path. Within a memoir, line order is the truth.
 * Superseded entries are left out; their newest revision appears where it was appended.
 */
import type { SessionInfo } from '../memoir-index/story-queries.js';
export type { SessionInfo };

/** Where a beat is: its session's rank and its line in that memoir. Ordered by (session, line). */
export interface BeatRef {
  session: number;
  line: number;
}

export function compareRefs(a: BeatRef, b: BeatRef): number {
  return a.session - b.session || a.line - b.line;
}

export function sameRef(a: BeatRef | null, b: BeatRef | null): boolean {
  return a === b || (a !== null && b !== null && a.session === b.session && a.line === b.line);
}

/** Which beats a view shows: empty `agents` means everyone. */
export interface StoryFilter {
  agents: readonly Agent[];
}

export const NO_FILTER: StoryFilter = { agents: [] };

export interface BeatInterrupt {
  by: Agent;
  target: Agent;
  target_turn: string;
  reason: ReasonClass;
  visibility: Visibility;
  /** False for `silent` interrupts: logged, never shown to the player. */
  shown_to_player: boolean;
}

/** One beat as the replay shows it. */
export interface Beat {
  ref: BeatRef;
  entry_id: string;
  scene_id: string;
  session: string;
  recorded_at: string | null;
  agent: Agent;
  source: Source;
  entry_type: EntryType;
  narrative_beat: string | null;
  proposed: string | null;
  response: { kind: ResponseKind; felt: Felt | null; delta: string | null } | null;
  affinity_delta: number;
  interrupt: BeatInterrupt | null;
  likert: number | null;
  comment: string | null;
  supersedes: string | null;
  shared: boolean;
}

export function toBeat(ref: BeatRef, session: string, entry: MemoirEntry, shared: boolean): Beat {
  const it = entry.interrupt ?? null;
  return {
    ref,
    entry_id: entry.entry_id,
    scene_id: entry.scene_id,
    session,
    recorded_at: typeof entry.recorded_at === 'string' ? entry.recorded_at : null,
    agent: entry.agent,
    source: entry.source,
    entry_type: entry.entry_type ?? (entry.source === 'agent_interrupt' ? 'interrupt' : 'pipeline_turn'),
    narrative_beat: entry.narrative_beat,
    proposed: entry.agent_proposed,
    response: entry.player_response
      ? { kind: entry.player_response.kind, felt: entry.player_response.felt, delta: entry.player_response.delta }
      : null,
    affinity_delta: entry.affinity_delta,
    interrupt: it
      ? {
          by: it.interrupting_agent,
          target: it.target_agent,
          target_turn: it.target_turn,
          reason: it.reason_class,
          visibility: it.visibility,
          shown_to_player: it.visibility !== 'silent',
        }
      : null,
    likert: typeof entry.likert === 'number' ? entry.likert : null,
    comment: typeof entry.comment === 'string' ? entry.comment : null,
    supersedes: typeof entry.supersedes === 'string' ? entry.supersedes : null,
    shared,
  };
}

/** Affinity per agent (agents with no change are absent). */
export type AffinityTotals = Partial<Record<Agent, number>>;

/** The beats of one scene around a beat, for the scene panel. */
export interface SceneWindow {
  beats: Beat[];
  /** Index of the current beat in `beats`. */
  current: number;
  /** Beats of the scene before `beats[0]` and after the last one (not loaded). */
  before: number;
  after: number;
}

/**
 * Navigation over a story without loading it: every method fetches what it needs. Implemented
 * over the SQLite index (StoryCursor, keyset pages) and in memory (MemoryStory, in test/replay, the tests' reference).
 * All methods are synchronous and read-only.
 */
export interface StoryNav {
  readonly sessions: readonly SessionInfo[];
  /** Agents with at least one beat. */
  agents(): Agent[];
  count(filter: StoryFilter): number;
  edge(which: 'first' | 'last', filter: StoryFilter): BeatRef | null;
  /** The next (dir 1) or previous (dir -1) beat, or null at the end. */
  step(from: BeatRef, dir: 1 | -1, filter: StoryFilter): BeatRef | null;
  /** dir 1: first beat of the next scene; dir -1: first beat of this scene, or of the previous one when already there. */
  sceneStart(from: BeatRef, dir: 1 | -1, filter: StoryFilter): BeatRef | null;
  /** The beat with this entry id (or unique id prefix, at least 6 characters), ignoring any filter. */
  find(entryId: string): BeatRef | null;
  /** The next/previous beat after/before `from` (or from an end when null) whose text matches every word. */
  search(query: string, from: BeatRef | null, dir: 1 | -1, filter: StoryFilter): BeatRef | null;
  /** How many beats passing the filter match the query. */
  searchCount(query: string, filter: StoryFilter): number;
  /** Which match a beat is (1-based, in story order) among the beats passing the filter that match the query. */
  searchRank(ref: BeatRef, query: string, filter: StoryFilter): number;
  /** Does the beat pass the filter? */
  matches(ref: BeatRef, filter: StoryFilter): boolean;
  /** 0-based position of the beat among the filtered beats. */
  position(ref: BeatRef, filter: StoryFilter): number;
  beat(ref: BeatRef): Beat;
  scene(ref: BeatRef, filter: StoryFilter, max: number): SceneWindow;
  /** Affinity per agent after this beat (all agents, whatever the filter). */
  affinityAt(ref: BeatRef): AffinityTotals;
}

/** First beat at or after `from` passing the filter, else the last one before it. */
export function nearest(nav: StoryNav, from: BeatRef | null, filter: StoryFilter): BeatRef | null {
  if (!from) return nav.edge('first', filter);
  if (nav.matches(from, filter)) return from;
  return nav.step(from, 1, filter) ?? nav.step(from, -1, filter);
}
