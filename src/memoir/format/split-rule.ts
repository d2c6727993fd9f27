import { isBondOnly, type Agent } from './agents.js';
import type { EntryType, Source } from './sources.js';
import { UNREAD, type Unread } from './unread.js';

/**
 * The split rule: may this entry ever leave the forge (train the council adapter)?
 *
 * Stricter than upstream, which checks the agent only for interrupts and trusts any explicit
 * split. Here policy decides and the line can only narrow it:
 *   shareable = policy(source, agent, type, interrupt) allows it
 *               AND the line says shared_eligible AND NOT private_only.
 * Patterns leave the forge; instances do not.
 */

/** Per source: does the design's split table let it leave (pattern) or not (instance)? */
export const SOURCE_POLICY: Readonly<Record<Source, 'pattern' | 'instance'>> = {
  specialist_proposed: 'pattern', // a specialist's proposal, learned at pattern level
  agent_interrupt: 'pattern', // a federating agent's slop call, citation flag, disagreement
  disagreement_resolution: 'pattern', // which side the player took, anonymised
  player_revision: 'instance', // the player's own code and style
  cupid_scene: 'instance', // never
  puck_engagement: 'instance', // never
  affinity_change: 'instance', // relationship state
  player_profile: 'instance', // memory moments, relationship state
  raw_transcript: 'instance', // only labelled tuples leave
  task_description: 'instance', // the player's free text
};

/** Per entry type: only turns and interrupts carry craft; the rest is the forge's own story. */
export const ENTRY_TYPE_POLICY: Readonly<Record<EntryType, 'pattern' | 'instance'>> = {
  pipeline_turn: 'pattern',
  interrupt: 'pattern',
  council_event: 'instance', // federation scenes are about this forge's choices
  loyalty_beat: 'instance', // a bonding arc step is relationship state
  episode: 'instance', // a summary of this forge's sessions
};

export type SplitReason =
  | 'shareable'
  | 'bond_only_agent'
  | 'private_source'
  | 'private_entry_type'
  | 'bond_only_interrupt_party'
  | 'private_interrupt'
  | 'marked_private'
  /** An extension value kourai cannot read (unread.ts): what it meant is unknown, it may have meant private. */
  | 'unread_extension'
  /** Decided where chains are known (the index): a revision of a private entry stays private. */
  | 'private_original';

export interface SplitInput {
  agent: Agent;
  source: Source;
  entry_type?: EntryType | undefined;
  interrupt?: { interrupting_agent: Agent; target_agent: Agent; visibility: string } | null | undefined;
  split?: { shared_eligible: boolean; private_only: boolean } | undefined;
  [UNREAD]?: Unread | undefined;
}

export interface SplitVerdict {
  shareable: boolean;
  reason: SplitReason;
  /** The line claims shared but policy says private: an upstream lenient split. */
  lenient: boolean;
}

/** What policy alone allows, before the line's own split is consulted. */
export function policyVerdict(e: Omit<SplitInput, 'split'>): SplitReason {
  if (isBondOnly(e.agent)) return 'bond_only_agent';
  if (SOURCE_POLICY[e.source] === 'instance') return 'private_source';
  if (ENTRY_TYPE_POLICY[entryTypeOf(e)] === 'instance') return 'private_entry_type';
  if (e.interrupt) {
    if (isBondOnly(e.interrupt.interrupting_agent) || isBondOnly(e.interrupt.target_agent))
      return 'bond_only_interrupt_party';
    if (e.interrupt.visibility === 'private') return 'private_interrupt';
  }
  return 'shareable';
}

export function decideSplit(e: SplitInput): SplitVerdict {
  const policy = policyVerdict(e);
  const claimsShared = e.split ? e.split.shared_eligible && !e.split.private_only : true;
  if (policy !== 'shareable')
    return { shareable: false, reason: policy, lenient: e.split !== undefined && claimsShared };
  if (!claimsShared) return { shareable: false, reason: 'marked_private', lenient: false };
  if (e[UNREAD] !== undefined) return { shareable: false, reason: 'unread_extension', lenient: false };
  return { shareable: true, reason: 'shareable', lenient: false };
}

/**
 * The verdict for a stored entry, its type derived when the line has none. Copies only the six
 * fields the rule reads: spreading the whole entry per line cost readers ~1 µs an entry.
 */
export function entryVerdict(e: SplitInput & { entry_type?: EntryType | undefined }): SplitVerdict {
  return decideSplit({
    agent: e.agent,
    source: e.source,
    entry_type: entryTypeOf(e),
    interrupt: e.interrupt,
    split: e.split,
    [UNREAD]: e[UNREAD],
  });
}

export function isShareable(e: SplitInput): boolean {
  return decideSplit(e).shareable;
}

/** The split kourai writes for a new entry: policy, narrowed by what the caller asked for. */
export function strictSplit(e: SplitInput): { shared_eligible: boolean; private_only: boolean } {
  const shareable = isShareable(e);
  return { shared_eligible: shareable, private_only: !shareable };
}

/** Entry type of a line: explicit, or inferred for Python lines (interrupt source -> interrupt). */
export function entryTypeOf(e: { source: Source; entry_type?: EntryType | undefined }): EntryType {
  if (e.entry_type) return e.entry_type;
  return e.source === 'agent_interrupt' ? 'interrupt' : 'pipeline_turn';
}

export const SPLIT_REASON_TEXT: Readonly<Record<SplitReason, string>> = {
  shareable: 'shareable (pattern level)',
  bond_only_agent: 'bond-only agent (Cupid and Puck never leave the forge)',
  private_source: 'private source (an instance, not a pattern)',
  private_entry_type: 'private entry type',
  bond_only_interrupt_party: 'interrupt involves a bond-only agent',
  private_interrupt: 'private interrupt (player only)',
  marked_private: 'marked private by its writer',
  unread_extension: 'holds a kourai extension value kourai cannot read (what it meant is unknown)',
  private_original: 'a revision of a private entry (revisions never widen privacy)',
};
