import {
  loadBearingVerdict,
  type LoadBearingContext,
  type LoadBearingFacts,
  type LoadBearingReason,
} from './load-bearing.js';

/**
 * The bounded replay buffer: which memoir entries a trainer replays when it cannot replay all.
 *
 *   selectReplayBuffer(candidates, bound) -> { kept, dropped, warnings }
 *
 * 1. Superseded entries (older revisions) are dropped (listed last, by id): their newest
 *    revision replaces them.
 * 2. Every load-bearing entry (load-bearing.ts) is kept, even when they alone exceed the bound:
 *    then the buffer is larger than the bound and a warning says so. Nothing load-bearing is
 *    ever dropped to honour a bound.
 * 3. The remaining room (bound − load-bearing) is filled with the most informative of the
 *    other entries, in this order (INFORMATIVENESS_ORDER):
 *      a preference pair (a chosen and a rejected text) > a rejected proposal > a modified one >
 *      an interrupt > a larger |affinity delta| > newer (recorded_at; undated lines count as
 *      oldest) > entry id (ascending), so the selection is deterministic and does not depend on
 *      the order the candidates come in.
 * Pure: no I/O. The trainer and `kourai memoir buffer` call the same function.
 */

export interface BufferCandidate extends LoadBearingFacts, LoadBearingContext {
  entry_id: string;
  has_preference: boolean;
  affinity_delta: number;
  /** ISO 8601 (UTC, as the index stores it) or null for undated lines. */
  recorded_at: string | null;
}

export interface BufferDecision {
  entry_id: string;
  kept: boolean;
  load_bearing: boolean;
  /** Position in the buffer's order (1 = most important); null for superseded entries. */
  rank: number | null;
  /** Machine-readable: the load-bearing reasons, or the informativeness features. */
  reasons: string[];
  /** One line for people. */
  why: string;
}

export interface ReplayBuffer {
  bound: number;
  candidates: number;
  load_bearing: number;
  /** Entries kept, most important first. Its length is max(bound, load-bearing), at most the candidates left. */
  kept: BufferDecision[];
  dropped: BufferDecision[];
  /** True when the load-bearing entries alone exceed the bound. */
  over_bound: boolean;
  warnings: string[];
}

/** The fill order for entries that are not load-bearing, most informative first. */
export const INFORMATIVENESS_ORDER = [
  'preference_pair',
  'rejected',
  'modified',
  'interrupt',
  'affinity_magnitude',
  'recency',
  'entry_id',
] as const;

export type Feature = 'preference_pair' | 'rejected' | 'modified' | 'interrupt';

/** The informativeness features an entry has, in INFORMATIVENESS_ORDER. */
export function features(c: BufferCandidate): Feature[] {
  const out: Feature[] = [];
  if (c.has_preference) out.push('preference_pair');
  if (c.player_response?.kind === 'rejected') out.push('rejected');
  if (c.player_response?.kind === 'modified') out.push('modified');
  if (c.entry_type === 'interrupt') out.push('interrupt');
  return out;
}

/** The flags of INFORMATIVENESS_ORDER's first four criteria as one number (higher first). */
function flagBits(c: BufferCandidate): number {
  return (
    (c.has_preference ? 8 : 0) |
    (c.player_response?.kind === 'rejected' ? 4 : 0) |
    (c.player_response?.kind === 'modified' ? 2 : 0) |
    (c.entry_type === 'interrupt' ? 1 : 0)
  );
}

/** An entry's place in the fill order, computed once (the trainer's streaming selection sorts by it too). */
export interface Keyed {
  c: BufferCandidate;
  bits: number;
  magnitude: number;
  /** recorded_at in ms; undated lines count as oldest. */
  time: number;
}

export function compareKeyed(a: Keyed, b: Keyed): number {
  if (a.bits !== b.bits) return b.bits - a.bits;
  if (a.magnitude !== b.magnitude) return b.magnitude - a.magnitude;
  if (a.time !== b.time) return a.time > b.time ? -1 : 1;
  return a.c.entry_id < b.c.entry_id ? -1 : a.c.entry_id > b.c.entry_id ? 1 : 0;
}

export function keyed(c: BufferCandidate): Keyed {
  const t = c.recorded_at === null ? Number.NEGATIVE_INFINITY : Date.parse(c.recorded_at);
  return {
    c,
    bits: flagBits(c),
    magnitude: Math.abs(c.affinity_delta),
    time: Number.isNaN(t) ? Number.NEGATIVE_INFINITY : t,
  };
}

/** Negative when `a` is more informative than `b` (sorts first). Total: ties end on entry id. */
export function compareInformativeness(a: BufferCandidate, b: BufferCandidate): number {
  return compareKeyed(keyed(a), keyed(b));
}

const REASON_TEXT: Partial<Record<LoadBearingReason, string>> = {
  rejected_path: 'a rejected path',
  reworked_proposal: 'a proposal the player reworked',
  safety_or_correction_interrupt: 'a safety or correction interrupt',
  revision_head: 'a corrected entry (newest revision)',
};

function describeFeatures(c: BufferCandidate, fs: readonly Feature[]): string {
  const parts: string[] = fs.map((f) => f.replace('_', ' '));
  if (c.affinity_delta !== 0) parts.push(`|affinity| ${Math.abs(c.affinity_delta)}`);
  return parts.length > 0 ? parts.join(', ') : 'no training signal; recency only';
}

export function selectReplayBuffer(candidates: Iterable<BufferCandidate>, bound: number): ReplayBuffer {
  if (!Number.isInteger(bound) || bound < 0)
    throw new RangeError(`replay buffer bound must be a non-negative integer, got ${bound}`);
  const superseded: BufferDecision[] = [];
  const bearing: (Keyed & { reasons: LoadBearingReason[] })[] = [];
  const rest: Keyed[] = [];
  let total = 0;
  for (const c of candidates) {
    total++;
    if (c.chain === 'superseded') {
      superseded.push({
        entry_id: c.entry_id,
        kept: false,
        load_bearing: false,
        rank: null,
        reasons: ['superseded'],
        why: 'superseded by a newer revision',
      });
      continue;
    }
    const v = loadBearingVerdict(c, c);
    if (v.load_bearing) bearing.push({ ...keyed(c), reasons: v.reasons });
    else rest.push(keyed(c));
  }
  bearing.sort(compareKeyed);
  rest.sort(compareKeyed);
  const kept: BufferDecision[] = bearing.map(({ c, reasons }, i) => ({
    entry_id: c.entry_id,
    kept: true,
    load_bearing: true,
    rank: i + 1,
    reasons,
    why: `load-bearing: ${reasons.map((r) => REASON_TEXT[r] ?? r.replace(':', ' ')).join('; ')}`,
  }));
  const room = Math.max(0, bound - bearing.length);
  const dropped: BufferDecision[] = [];
  rest.forEach(({ c }, i) => {
    const fs = features(c);
    const rank = bearing.length + i + 1;
    const inside = i < room;
    const d: BufferDecision = {
      entry_id: c.entry_id,
      kept: inside,
      load_bearing: false,
      rank,
      reasons: fs.length > 0 ? [...fs] : ['recency'],
      why: `${inside ? 'informative' : 'below the bound'} (rank ${rank}): ${describeFeatures(c, fs)}`,
    };
    (inside ? kept : dropped).push(d);
  });
  superseded.sort((a, b) => (a.entry_id < b.entry_id ? -1 : a.entry_id > b.entry_id ? 1 : 0));
  dropped.push(...superseded);
  const warnings: string[] = [];
  const over = bearing.length > bound;
  if (over) {
    warnings.push(
      `load-bearing entries alone (${bearing.length}) exceed the bound (${bound}): all of them are kept, so the buffer holds ${bearing.length} entries and nothing else`,
    );
  }
  return { bound, candidates: total, load_bearing: bearing.length, kept, dropped, over_bound: over, warnings };
}
