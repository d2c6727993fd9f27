/**
 * What the council records about one agent's aggregation in a round (aggregates.outcome_json):
 * who sent updates, who was used, why nothing was produced, and the rule's details (selection,
 * scores, similarities). Written by aggregate-round.ts, read by the views.
 */
export interface AgentOutcome {
  strategy: string;
  byzantine: number;
  /** Forge names, in the order their updates were aggregated. */
  forges: string[];
  used: string[];
  /** Groups of identical (echoing) updates, each counted once by the robust rule. */
  echoes: string[][];
  non_finite: string[];
  /** Forges whose stored update no longer matched its digest: left out, and reported. */
  damaged: string[];
  /** Why no new global came out of the round (too few updates, a refused aggregate, …). */
  skipped_reason: string | null;
  details: Record<string, unknown>;
}

export function parseOutcome(json: string): AgentOutcome {
  const o = JSON.parse(json) as Partial<AgentOutcome>;
  return {
    strategy: o.strategy ?? 'unknown',
    byzantine: o.byzantine ?? 0,
    forges: o.forges ?? [],
    used: o.used ?? [],
    echoes: o.echoes ?? [],
    non_finite: o.non_finite ?? [],
    damaged: o.damaged ?? [],
    skipped_reason: o.skipped_reason ?? null,
    details: o.details ?? {},
  };
}
