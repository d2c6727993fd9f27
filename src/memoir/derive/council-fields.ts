import type { Agent } from '../format/agents.js';
import type { MemoirEntry } from '../format/schema.js';
import type { EntryType, Felt, ResponseKind, Source } from '../format/sources.js';
import { understoodPair } from '../format/preference.js';
import { decideSplit, entryTypeOf } from '../format/split-rule.js';

/**
 * The council field rule: what of a shareable entry may reach a council batch.
 *
 * The split rule (split-rule.ts) decides whether an entry may leave the forge at all. This rule
 * decides which of its fields may: **a council batch never sees text the player wrote.** Patterns
 * leave the forge; instances do not, and the player's own words are instances even inside a
 * shareable `specialist_proposed` entry (the revision in `player_response.delta` and in the
 * preference pair, written there by `kourai feedback` and by hosts).
 *
 * From a shareable entry the council may use:
 *   - agent-authored text: `agent_proposed` of a source an agent speaks in (a proposal, an
 *     interrupt, the side the player took in a disagreement);
 *   - a preference pair only when both sides are agent-authored: both sides of a
 *     `disagreement_resolution` (two agents' positions), or sides that are the `agent_proposed`
 *     of shareable entries in the same scene (the player picked one of two candidates);
 *   - the outcome: `player_response.kind` and `felt` (never `delta`), a Likert rating (a number);
 *   - `context.task_type` and `training_label.weight`.
 * Never: `player_response.delta`, `comment`, `revision_reason`, `narrative_beat`, the transcript
 * hash, affinity, or any text of a revision that differs from the original it replaces (a
 * correction made with `memoir supersede` is the player's text).
 */

/** Sources whose `agent_proposed` an agent wrote. */
export const AGENT_AUTHORED_SOURCES: ReadonlySet<Source> = new Set<Source>([
  'specialist_proposed',
  'agent_interrupt',
  'disagreement_resolution',
]);

export interface CouncilFields {
  entry_id: string;
  scene_id: string;
  agent: Agent;
  source: Source;
  entry_type: EntryType;
  /** `agent_proposed` when an agent wrote it; otherwise null. */
  agent_text: string | null;
  /** The player's answer without their words. */
  outcome: { kind: ResponseKind; felt: Felt | null } | null;
  /** A preference pair both of whose sides agents wrote (score 1 = chosen); otherwise null. */
  agent_pair: { chosen: string; rejected: string } | null;
  likert: number | null;
  task_type: string | null;
  /** `training_label.weight`, or null when the entry has no training label. */
  weight: number | null;
}

export interface CouncilFieldContext {
  /**
   * For a revision (an entry with `supersedes`): every entry it replaces, the original first.
   * A revision is never more shareable than any of them; text that differs from the
   * original's is the player's correction and is left out. A revision whose chain is not
   * given (or does not reach an original) cannot be checked and stays in the forge.
   */
  ancestors?: readonly MemoirEntry[];
  /** Whether a shareable entry of this scene has this text as its agent-authored text. */
  isAgentTextInScene?: (text: string) => boolean;
}

function pairOf(e: MemoirEntry): { chosen: string; rejected: string } | null {
  const pair = understoodPair(e.training_label?.preference_pair);
  return pair === null || pair.chosen === pair.rejected ? null : pair;
}

function samePair(a: MemoirEntry, b: MemoirEntry): boolean {
  if (a === b) return true;
  return (
    JSON.stringify(a.training_label?.preference_pair ?? null) ===
    JSON.stringify(b.training_label?.preference_pair ?? null)
  );
}

/**
 * The fields of `entry` a council batch may see, or null when the strict split rule keeps the
 * entry in the forge. (The index additionally keeps a revision of a private entry private; the
 * council view honours both.)
 */
const shareable = (e: MemoirEntry): boolean => decideSplit({ ...e, entry_type: entryTypeOf(e) }).shareable;

export function councilFields(entry: MemoirEntry, ctx: CouncilFieldContext = {}): CouncilFields | null {
  if (!shareable(entry)) return null;
  let original = entry;
  if (typeof entry.supersedes === 'string') {
    const chain = ctx.ancestors ?? [];
    const root = chain[0];
    if (!root || typeof root.supersedes === 'string' || !chain.every(shareable)) return null;
    original = root;
  }
  const authored = AGENT_AUTHORED_SOURCES.has(entry.source);

  let agentText: string | null = null;
  if (authored && entry.agent_proposed !== null && original.agent_proposed === entry.agent_proposed)
    agentText = entry.agent_proposed;

  let agentPair: CouncilFields['agent_pair'] = null;
  const pair = pairOf(entry);
  if (pair && authored && samePair(entry, original)) {
    if (entry.source === 'disagreement_resolution') agentPair = pair;
    else {
      const agentWrote = (t: string): boolean => t === agentText || (ctx.isAgentTextInScene?.(t) ?? false);
      if (agentWrote(pair.chosen) && agentWrote(pair.rejected)) agentPair = pair;
    }
  }

  return {
    entry_id: entry.entry_id,
    scene_id: entry.scene_id,
    agent: entry.agent,
    source: entry.source,
    entry_type: entryTypeOf(entry),
    agent_text: agentText,
    outcome: entry.player_response ? { kind: entry.player_response.kind, felt: entry.player_response.felt } : null,
    agent_pair: agentPair,
    likert: typeof entry.likert === 'number' ? entry.likert : null,
    task_type: entry.context?.task_type ?? null,
    weight: entry.training_label ? entry.training_label.weight : null,
  };
}
