import type { EntryType, ReasonClass, ResponseKind, Source } from '../format/sources.js';

/**
 * Load-bearing entries: what a bounded replay buffer (and any future compaction) may never drop.
 *
 * One pure predicate, decided by two explicit tables — one verdict for every source, one for
 * every entry type — plus the entry's place in a revision chain. The tables are
 * `Record<Source, …>` and `Record<EntryType, …>`, so adding a source or an entry type fails the
 * typecheck (and test/memoir/derive/load-bearing.test.ts) until someone decides its verdict; nothing
 * inherits a default.
 *
 * Verdicts:
 * - `always`: load-bearing whatever else the entry says.
 * - `when`: load-bearing when the entry passes the row's test (e.g. a proposal the player
 *   rejected or reworked: a rejected path).
 * - `routine`: not load-bearing by this table; the other table or the chain may still make it so.
 * - `never`: not load-bearing, whatever the other table or the chain says.
 *
 * The decision, in order:
 *   1. a superseded entry (an older revision) is never load-bearing: its newest revision carries it;
 *   2. a `never` in either table: not load-bearing;
 *   3. an `always`, or a `when` whose test passes, in either table: load-bearing;
 *   4. the head of a revision chain (an entry someone corrected): load-bearing;
 *   5. otherwise routine.
 */

/** What the predicate reads: a memoir entry, or the same facts from an index row. */
export interface LoadBearingFacts {
  source: Source;
  /** Explicit or inferred (`entryTypeOf`). */
  entry_type: EntryType;
  player_response?: { kind: ResponseKind } | null | undefined;
  /** Only the reason class matters; unknown (a Python line, or not loaded) counts as routine. */
  interrupt?: { reason_class: ReasonClass } | null | undefined;
}

export interface LoadBearingContext {
  /**
   * The entry's place in revision chains: `none` (never corrected, not a correction), `head`
   * (the newest revision of a chain: a correction), `superseded` (an older revision).
   */
  chain: 'none' | 'head' | 'superseded';
}

export type LoadBearingReason =
  | 'superseded'
  | `source:${Source}`
  | `type:${EntryType}`
  | 'rejected_path'
  | 'reworked_proposal'
  | 'safety_or_correction_interrupt'
  | 'revision_head'
  | 'routine'
  | 'derived_episode';

export type Verdict<F> =
  | { verdict: 'always'; why: string }
  | { verdict: 'routine'; why: string }
  | { verdict: 'never'; why: string; reason: LoadBearingReason }
  | { verdict: 'when'; why: string; test: (e: F) => LoadBearingReason | null };

const pushedBack = (e: LoadBearingFacts): LoadBearingReason | null => {
  const kind = e.player_response?.kind;
  if (kind === 'rejected') return 'rejected_path';
  if (kind === 'modified') return 'reworked_proposal';
  return null;
};

const safetyOrCorrection = (e: LoadBearingFacts): LoadBearingReason | null =>
  e.interrupt?.reason_class === 'safety' || e.interrupt?.reason_class === 'correction'
    ? 'safety_or_correction_interrupt'
    : null;

/** One verdict per source. */
export const SOURCE_VERDICTS: Readonly<Record<Source, Verdict<LoadBearingFacts>>> = {
  specialist_proposed: {
    verdict: 'when',
    why: 'a proposal the player rejected (a rejected path) or reworked is a lesson; a routine accepted or deferred proposal is not',
    test: pushedBack,
  },
  player_revision: { verdict: 'always', why: "the player's own correction: the strongest signal the forge has" },
  agent_interrupt: {
    verdict: 'when',
    why: 'a safety stop or a correction (slop call, citation flag) is a lesson; gossip, care and disagreement calls are routine (disagreements are settled by their resolution)',
    test: safetyOrCorrection,
  },
  disagreement_resolution: {
    verdict: 'always',
    why: 'which side the player took settles a disagreement between agents',
  },
  cupid_scene: { verdict: 'routine', why: 'bond scenes repeat; the loyalty beats among them are kept by entry type' },
  puck_engagement: { verdict: 'routine', why: 'minigames and tutorials are engagement, not decisions' },
  affinity_change: {
    verdict: 'routine',
    why: 'affinity moves are many and small; loyalty beats are kept by entry type',
  },
  player_profile: {
    verdict: 'always',
    why: 'who the player is (memory moments, relationship state) must never be forgotten',
  },
  raw_transcript: { verdict: 'routine', why: 'bulk text; the labelled entries carry its signal' },
  task_description: { verdict: 'routine', why: 'what was asked is context for the turns that answer it' },
};

/** One verdict per entry type. */
export const ENTRY_TYPE_VERDICTS: Readonly<Record<EntryType, Verdict<LoadBearingFacts>>> = {
  pipeline_turn: { verdict: 'routine', why: 'turns are decided by their source' },
  interrupt: { verdict: 'routine', why: 'interrupts are decided by their source (reason class)' },
  council_event: {
    verdict: 'always',
    why: 'federation decisions (the Sovereignty Moment, consent) are what the forge agreed to',
  },
  loyalty_beat: { verdict: 'always', why: 'a step of a bonding arc cannot be replayed out of order or lost' },
  episode: {
    verdict: 'never',
    why: 'an episode is derived from its entries and re-derived whenever they change; keeping the entries keeps the episode',
    reason: 'derived_episode',
  },
};

export interface LoadBearingVerdict {
  load_bearing: boolean;
  /** Every rule that applied, most decisive first; `routine` when none did. */
  reasons: LoadBearingReason[];
}

function apply(
  v: Verdict<LoadBearingFacts>,
  e: LoadBearingFacts,
  tableReason: LoadBearingReason,
): LoadBearingReason | null {
  if (v.verdict === 'always') return tableReason;
  if (v.verdict === 'when') return v.test(e);
  return null;
}

/** The verdict with its reasons (the replay buffer reports them). */
export function loadBearingVerdict(e: LoadBearingFacts, ctx: LoadBearingContext): LoadBearingVerdict {
  if (ctx.chain === 'superseded') return { load_bearing: false, reasons: ['superseded'] };
  const bySource = SOURCE_VERDICTS[e.source];
  const byType = ENTRY_TYPE_VERDICTS[e.entry_type];
  for (const v of [byType, bySource]) if (v.verdict === 'never') return { load_bearing: false, reasons: [v.reason] };
  const reasons: LoadBearingReason[] = [];
  const s = apply(bySource, e, `source:${e.source}`);
  if (s) reasons.push(s);
  const t = apply(byType, e, `type:${e.entry_type}`);
  if (t) reasons.push(t);
  if (ctx.chain === 'head') reasons.push('revision_head');
  return reasons.length > 0 ? { load_bearing: true, reasons } : { load_bearing: false, reasons: ['routine'] };
}

export function isLoadBearing(e: LoadBearingFacts, ctx: LoadBearingContext): boolean {
  return loadBearingVerdict(e, ctx).load_bearing;
}
