import { createHash } from 'node:crypto';
import { isBondOnly, type Agent } from '../format/agents.js';
import type { MemoirEntry } from '../format/schema.js';
import type { ReasonClass, ResponseKind } from '../format/sources.js';
import { entryTypeOf } from '../format/split-rule.js';

/**
 * Episodes: "what happened, what we learned", derived from the entries of one scene (default)
 * or one session (the scene id up to its first dot, e.g. `session-1a2b3c4d`). Pure.
 *
 * - goal: the task type(s) and what was asked (the `task_description` of the group or, for a
 *   scene, of its session); without a task, the first narrative beat; without one, the first
 *   entry's source, agent and text.
 * - approach: the agents that acted, in order of first appearance, and the interrupts.
 * - outcome: the player's responses (a player_revision entry restates a `modified` response and
 *   is not counted twice).
 * - quality, by this rule over the responses R:
 *     failure  R is not empty and nothing was accepted or modified (every proposal was
 *              rejected or deferred);
 *     success  every response in R was accepted and none felt "off"; or R is empty and the
 *              affinity of the group did not fall;
 *     partial  anything else (a mix, a rework, an acceptance that felt off, or no response
 *              while affinity fell).
 * - lessons: player revisions, disagreement resolutions, rejected proposals (and reworks that
 *   no player_revision entry records).
 * - tags and actors (agents in order, then `player` when the player responded).
 * - date: of the first entry; a corrected entry counts at its original's time (`originalTime`),
 *   and the caller passes corrected entries at their original's place in the memoir.
 * - content_hash: sha256 of the episode's canonical JSON (everything but the hash itself), so
 *   the same entries always give the same hash and `--write` can skip what it already wrote.
 *
 * An episode is private forge history: `episodeEntry` writes it as a `raw_transcript`
 * (an instance source) of entry type `episode` (an instance type), explicitly private_only.
 */

export type EpisodeQuality = 'success' | 'partial' | 'failure';
export type EpisodeGrouping = 'scene' | 'session';

export interface EpisodeResponse {
  entry_id: string;
  agent: Agent;
  source: string;
  kind: ResponseKind;
  felt: string | null;
}

export interface EpisodeInterrupt {
  by: Agent;
  target: Agent;
  reason_class: ReasonClass;
  visibility: string;
}

export interface Episode {
  by: EpisodeGrouping;
  /** The scene id, or the session prefix. */
  key: string;
  /** YYYY-MM-DD of the first dated entry (UTC), or null when no entry is dated (Python lines). */
  date: string | null;
  goal: string;
  context: {
    task_types: string[];
    asked: string | null;
    scenes: string[];
    entries: number;
    first_at: string | null;
    last_at: string | null;
  };
  approach: { agents: Agent[]; interrupts: EpisodeInterrupt[] };
  outcome: string;
  responses: EpisodeResponse[];
  quality: EpisodeQuality;
  /** Which clause of the quality rule decided. */
  quality_reason: string;
  lessons: string[];
  tags: string[];
  actors: string[];
  affinity: number;
  entry_ids: string[];
  content_hash: string;
}

export function sessionOf(sceneId: string): string {
  const dot = sceneId.indexOf('.');
  return dot < 0 ? sceneId : sceneId.slice(0, dot);
}

export function episodeKey(sceneId: string, by: EpisodeGrouping): string {
  return by === 'scene' ? sceneId : sessionOf(sceneId);
}

/** Free text on one line, at most `max` characters. */
export function flat(s: string, max = 160): string {
  const one = s.replace(/\s+/g, ' ').trim();
  return one.length <= max ? one : `${one.slice(0, max - 1)}…`;
}

const human = (s: string): string => s.replace(/_/g, ' ');

/** Canonical JSON: object keys sorted, so equal content always hashes the same. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .filter((k) => o[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v);
}

export function qualityOf(
  responses: readonly Pick<EpisodeResponse, 'kind' | 'felt'>[],
  affinity: number,
): { quality: EpisodeQuality; reason: string } {
  if (responses.length === 0) {
    return affinity < 0
      ? { quality: 'partial', reason: 'no player response, and affinity fell' }
      : { quality: 'success', reason: 'no player response needed, and affinity did not fall' };
  }
  const landed = responses.filter((r) => r.kind === 'accepted' || r.kind === 'modified').length;
  if (landed === 0) return { quality: 'failure', reason: 'nothing was accepted or modified' };
  if (responses.every((r) => r.kind === 'accepted' && r.felt !== 'off'))
    return { quality: 'success', reason: 'every response was an acceptance' };
  return { quality: 'partial', reason: 'some proposals were reworked, rejected, deferred or felt off' };
}

function taskOf(e: MemoirEntry): string {
  return e.context?.task_type && e.context.task_type !== 'session' ? e.context.task_type : 'work';
}

function describeResponse(r: EpisodeResponse): string {
  const felt = r.felt ? ` (felt ${r.felt})` : '';
  if (r.source === 'disagreement_resolution') return `sided with ${r.agent}${felt}`;
  return `${r.agent} ${r.kind}${felt}`;
}

export interface BuildOptions {
  /** What was asked, when the group has no task_description of its own (its session's). */
  asked?: string | null;
  /**
   * For corrected entries (newest revisions): when the original happened. A correction does not
   * move an episode in time: its dates come from the originals.
   */
  originalTime?: ReadonlyMap<string, string | null>;
}

/**
 * The episode of one group of entries (same scene or session), in memoir order. Episode
 * entries themselves are ignored. Returns null when nothing is left.
 */
export function buildEpisode(
  by: EpisodeGrouping,
  key: string,
  all: readonly MemoirEntry[],
  opts: BuildOptions = {},
): Episode | null {
  const entries = all.filter((e) => entryTypeOf(e) !== 'episode');
  if (entries.length === 0) return null;

  const taskTypes: string[] = [];
  const agents: Agent[] = [];
  const scenes: string[] = [];
  const interrupts: EpisodeInterrupt[] = [];
  const responses: EpisodeResponse[] = [];
  const lessons: string[] = [];
  const tags = new Set<string>();
  let asked: string | null = null;
  let beat: string | null = null;
  let affinity = 0;
  const timeOf = (e: MemoirEntry): string | null | undefined =>
    opts.originalTime?.has(e.entry_id) ? opts.originalTime.get(e.entry_id) : e.recorded_at;
  const dated = entries
    .map(timeOf)
    .filter((t): t is string => typeof t === 'string')
    .map((t) => new Date(t).toISOString())
    .sort();
  const revisionTexts = new Set<string>();

  for (const e of entries) {
    const type = entryTypeOf(e);
    if (!agents.includes(e.agent)) agents.push(e.agent);
    if (!scenes.includes(e.scene_id)) scenes.push(e.scene_id);
    const tt = e.context?.task_type;
    if (tt && tt !== 'session' && !taskTypes.includes(tt)) taskTypes.push(tt);
    if (e.source === 'task_description' && asked === null && e.agent_proposed) asked = flat(e.agent_proposed, 200);
    if (beat === null && e.narrative_beat) beat = e.narrative_beat;
    affinity += e.affinity_delta;
    if (typeof e.supersedes === 'string') tags.add('corrected');
    if (type === 'council_event') tags.add('council');
    if (type === 'loyalty_beat') tags.add('loyalty');
    if (isBondOnly(e.agent)) tags.add('bond');
    if (e.interrupt) {
      interrupts.push({
        by: e.interrupt.interrupting_agent,
        target: e.interrupt.target_agent,
        reason_class: e.interrupt.reason_class,
        visibility: e.interrupt.visibility,
      });
      tags.add(`interrupt:${e.interrupt.reason_class}`);
    } else if (type === 'interrupt') tags.add('interrupt');
    if (e.source === 'player_revision') {
      const text = e.player_response?.delta ?? e.agent_proposed ?? '';
      revisionTexts.add(text);
      lessons.push(`player revised ${e.agent}'s ${taskOf(e)}: "${flat(text)}"`);
      tags.add('revision');
      continue; // restates the `modified` response of the proposal it revises
    }
    if (e.source === 'disagreement_resolution') {
      lessons.push(
        `player sided with ${e.agent} (${taskOf(e)})${e.agent_proposed ? `: "${flat(e.agent_proposed)}"` : ''}`,
      );
      tags.add('disagreement');
    }
    if (e.player_response) {
      responses.push({
        entry_id: e.entry_id,
        agent: e.agent,
        source: e.source,
        kind: e.player_response.kind,
        felt: e.player_response.felt,
      });
      if (e.player_response.kind === 'rejected' && e.source !== 'disagreement_resolution') {
        lessons.push(
          `${e.agent}'s ${taskOf(e)} proposal was rejected${e.player_response.felt ? ` (felt ${e.player_response.felt})` : ''}${e.agent_proposed ? `: "${flat(e.agent_proposed)}"` : ''}`,
        );
        tags.add('rejected');
      }
    }
  }
  // Reworks with no player_revision entry of their own (e.g. written by an older host).
  for (const e of entries) {
    const delta = e.player_response?.delta;
    if (
      e.source !== 'player_revision' &&
      e.player_response?.kind === 'modified' &&
      delta &&
      !revisionTexts.has(delta)
    ) {
      lessons.push(`player reworked ${e.agent}'s ${taskOf(e)} proposal: "${flat(delta)}"`);
      tags.add('revision');
    }
  }
  for (const t of taskTypes) tags.add(t);

  const first = entries[0] as MemoirEntry;
  let goal: string;
  const askedHere = asked ?? opts.asked ?? null;
  if (taskTypes.length > 0) goal = `${taskTypes.join('/')} — ${askedHere ?? 'no task description'}`;
  else if (asked) goal = asked;
  else if (beat) goal = human(beat);
  else
    goal = `${human(first.source)} (${first.agent})${first.agent_proposed ? `: ${flat(first.agent_proposed, 120)}` : ''}`;
  goal = goal.replace(/[.\s]+$/, '');

  const { quality, reason } = qualityOf(responses, affinity);
  const outcome =
    responses.length === 0
      ? 'no player response'
      : responses.length <= 3
        ? responses.map(describeResponse).join('; ')
        : `${responses.length} responses: ${(['accepted', 'modified', 'rejected', 'deferred'] as const)
            .map((k) => [k, responses.filter((r) => r.kind === k).length] as const)
            .filter(([, n]) => n > 0)
            .map(([k, n]) => `${n} ${k}`)
            .join(', ')}`;
  const actors: string[] = [...agents];
  if (responses.length > 0 || lessons.length > 0) actors.push('player');

  const body: Omit<Episode, 'content_hash'> = {
    by,
    key,
    date: dated[0]?.slice(0, 10) ?? null,
    goal,
    context: {
      task_types: taskTypes,
      asked: askedHere,
      scenes,
      entries: entries.length,
      first_at: dated[0] ?? null,
      last_at: dated[dated.length - 1] ?? null,
    },
    approach: { agents, interrupts },
    outcome,
    responses,
    quality,
    quality_reason: reason,
    lessons,
    tags: [...tags].sort(),
    actors,
    affinity: Math.round(affinity * 1e6) / 1e6,
    entry_ids: entries.map((e) => e.entry_id),
  };
  return { ...body, content_hash: `sha256:${createHash('sha256').update(canonicalJson(body)).digest('hex')}` };
}

/** Groups entries (in memoir order) by scene or session and builds one episode per group. */
export function deriveEpisodes(
  entries: Iterable<MemoirEntry>,
  by: EpisodeGrouping,
  opts: { askedBySession?: ReadonlyMap<string, string> } = {},
): Episode[] {
  const groups = new Map<string, MemoirEntry[]>();
  for (const e of entries) {
    const k = episodeKey(e.scene_id, by);
    const g = groups.get(k);
    if (g) g.push(e);
    else groups.set(k, [e]);
  }
  const out: Episode[] = [];
  for (const [k, g] of groups) {
    const ep = buildEpisode(by, k, g, { asked: opts.askedBySession?.get(sessionOf(k)) ?? null });
    if (ep) out.push(ep);
  }
  return out;
}

/** `- (YYYY-MM-DD, episode, <quality>) <goal>. Outcome: <outcome>` and the lessons under it. */
export function renderEpisode(ep: Episode, opts: { lessons?: boolean } = {}): string {
  const head = `- (${ep.date ?? 'undated'}, episode, ${ep.quality}) ${ep.goal}. Outcome: ${ep.outcome}`;
  if (opts.lessons === false || ep.lessons.length === 0) return head;
  return [head, ...ep.lessons.map((l) => `    - lesson: ${l}`)].join('\n');
}

/** Who an episode entry is attributed to: Hephaestus (he routes the forge), unless only bond-only agents acted. */
export function episodeAgent(ep: Episode): Agent {
  const agents = ep.approach.agents;
  return agents.length > 0 && agents.every(isBondOnly) ? (agents[0] as Agent) : 'hephaestus';
}

/** The memoir entry that stores an episode (input for `prepareEntries`): always private. */
export function episodeEntry(ep: Episode, supersedes?: { entry_id: string; reason: string }): Record<string, unknown> {
  return {
    scene_id: ep.key,
    agent: episodeAgent(ep),
    source: 'raw_transcript',
    entry_type: 'episode',
    agent_proposed: renderEpisode(ep),
    split: { shared_eligible: false, private_only: true },
    episode: ep,
    ...(supersedes ? { supersedes: supersedes.entry_id, revision_reason: supersedes.reason } : {}),
  };
}

/** The structured episode an `episode` entry stores, when it is one this module wrote. */
export function storedEpisode(e: MemoirEntry): Episode | undefined {
  const ep = e.episode as Partial<Episode> | undefined;
  if (
    !ep ||
    typeof ep.content_hash !== 'string' ||
    typeof ep.key !== 'string' ||
    (ep.by !== 'scene' && ep.by !== 'session')
  )
    return undefined;
  return ep as Episode;
}
