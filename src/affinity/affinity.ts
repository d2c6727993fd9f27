import { AGENTS, type Agent } from '../memoir/format/agents.js';

/**
 * Affinity: how far the player's relationship with each agent has grown.
 *
 * An agent's affinity is the plain sum of the `affinity_delta` of its entries (newest revision of
 * each chain), in story order. It is not clamped: a run of refusals can take it below zero. Each
 * good interaction adds about 0.02, a refusal takes 0.05 away.
 *
 * Tiers (the lower bound is inclusive):
 *   stranger   below 0.15  a new relationship: Kourai does not ask for ratings yet
 *   familiar   0.15        the first tier: enough history for feedback to be welcome
 *   trusted    0.40
 *   bonded     0.70
 */
export const TIERS = [
  { name: 'stranger', min: Number.NEGATIVE_INFINITY },
  { name: 'familiar', min: 0.15 },
  { name: 'trusted', min: 0.4 },
  { name: 'bonded', min: 0.7 },
] as const;

export type TierName = (typeof TIERS)[number]['name'];
export const TIER_NAMES = TIERS.map((t) => t.name) as unknown as readonly [TierName, ...TierName[]];

/** Sums are rounded to this many decimals, so 0.1 + 0.05 is 0.15 and reaches `familiar`. */
const DECIMALS = 1e9;
export function roundAffinity(x: number): number {
  return Math.round(x * DECIMALS) / DECIMALS + 0; // + 0 turns -0 into 0
}

export function tierOf(affinity: number): TierName {
  const a = roundAffinity(affinity);
  let name: TierName = 'stranger';
  for (const t of TIERS) if (a >= t.min) name = t.name;
  return name;
}

export function tierRank(name: TierName): number {
  return TIERS.findIndex((t) => t.name === name);
}

export function tierMin(name: TierName): number {
  return TIERS[tierRank(name)]?.min ?? Number.NEGATIVE_INFINITY;
}

/** The next tier above `affinity` and how much is still missing, or null at the top. */
export function nextTier(affinity: number): { name: TierName; min: number; missing: number } | null {
  const rank = tierRank(tierOf(affinity));
  const next = TIERS[rank + 1];
  if (!next) return null;
  return { name: next.name, min: next.min, missing: roundAffinity(next.min - affinity) };
}

/** One entry that changed an affinity (a non-zero delta), in story order. */
export interface AffinityChange {
  agent: Agent;
  delta: number;
  entry_id: string;
  scene_id: string;
  recorded_at: string | null;
}

export interface AgentAffinity {
  agent: Agent;
  affinity: number;
  tier: TierName;
  next_tier: TierName | null;
  to_next_tier: number | null;
  /** Entries that changed this affinity. */
  changes: number;
  last_change: { entry_id: string; scene_id: string; delta: number; recorded_at: string | null } | null;
  /** The running affinity sampled across the whole history (at most TREND_POINTS values, oldest first). */
  trend: number[];
}

export const TREND_POINTS = 24;

/**
 * Accumulates affinity changes in story order, in bounded memory per agent: the trend keeps at
 * most 2 × TREND_POINTS running values and halves its resolution when full, so a 100k-entry
 * history costs the same as a short one.
 */
export class AffinityAccumulator {
  private readonly totals = new Map<Agent, number>();
  private readonly counts = new Map<Agent, number>();
  private readonly last = new Map<Agent, AgentAffinity['last_change']>();
  /** Running values sampled every `stride` changes; `current` says whether the last one is the latest total. */
  private readonly samples = new Map<Agent, { values: number[]; stride: number; pending: number; current: boolean }>();

  add(c: AffinityChange): void {
    if (c.delta === 0 || !Number.isFinite(c.delta)) return;
    const total = roundAffinity((this.totals.get(c.agent) ?? 0) + c.delta);
    this.totals.set(c.agent, total);
    this.counts.set(c.agent, (this.counts.get(c.agent) ?? 0) + 1);
    this.last.set(c.agent, { entry_id: c.entry_id, scene_id: c.scene_id, delta: c.delta, recorded_at: c.recorded_at });
    let s = this.samples.get(c.agent);
    if (!s) {
      s = { values: [0], stride: 1, pending: 0, current: true };
      this.samples.set(c.agent, s);
    }
    s.pending++;
    s.current = false;
    if (s.pending >= s.stride) {
      s.pending = 0;
      s.values.push(total);
      s.current = true;
      if (s.values.length >= 2 * TREND_POINTS) {
        s.current = (s.values.length - 1) % 2 === 0;
        s.values = s.values.filter((_, i) => i % 2 === 0);
        s.stride *= 2;
      }
    }
  }

  total(agent: Agent): number {
    return this.totals.get(agent) ?? 0;
  }

  /** Every agent, in the forge's agent order (agents with no change have affinity 0). */
  result(agents: readonly Agent[] = AGENTS): AgentAffinity[] {
    return agents.map((agent) => {
      const affinity = this.total(agent);
      const s = this.samples.get(agent);
      const values = s ? [...s.values] : [0];
      if (s && !s.current) values.push(affinity);
      const next = nextTier(affinity);
      return {
        agent,
        affinity,
        tier: tierOf(affinity),
        next_tier: next?.name ?? null,
        to_next_tier: next?.missing ?? null,
        changes: this.counts.get(agent) ?? 0,
        last_change: this.last.get(agent) ?? null,
        trend: downsample(values, TREND_POINTS),
      };
    });
  }
}

/** At most `n` values, evenly spaced, always keeping the first and the last. */
export function downsample(values: readonly number[], n: number): number[] {
  if (values.length <= n) return [...values];
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(values[Math.round((i * (values.length - 1)) / (n - 1))] as number);
  return out;
}

export function computeAffinity(changes: Iterable<AffinityChange>, agents?: readonly Agent[]): AgentAffinity[] {
  const acc = new AffinityAccumulator();
  for (const c of changes) acc.add(c);
  return acc.result(agents);
}
