import { ConflictError } from '../errors.js';
import type { CouncilConfig } from './config.js';
import { configuredLayouts, describeLayout } from './layouts.js';
import { roundSettingsOf } from './round-settings.js';

/**
 * The settings every process of one council must share: two processes on one database with
 * different rules would close and aggregate rounds differently depending on which one a forge
 * reached. A process refuses to start beside a live one whose policy differs (`policyConflict`);
 * after every process has stopped, an operator may change them (the next round opens with the new
 * ones, as with a single process). Host, port, threads and upload limits may differ per process.
 */
export function councilPolicy(c: CouncilConfig): Record<string, unknown> {
  return {
    round: roundSettingsOf(c),
    min_forges: c.min_forges,
    round_deadline: c.round_deadline,
    cohort: c.cohort,
    base_fingerprints: [...c.base_fingerprints].sort(),
    layouts: Object.fromEntries(
      [...configuredLayouts(c.layouts)].map(([agent, l]) => [agent, describeLayout(l)]).sort(),
    ),
    trust: { alpha: c.trust_alpha, threshold: c.trust_threshold, warmup: c.trust_warmup, tolerance: c.trust_tolerance },
    aggregation_lease: c.aggregation_lease,
  };
}

/** Throws ConflictError (exit 7) naming the settings that differ from a live process's. */
export function policyConflict(
  mine: Record<string, unknown>,
  other: { id: string; url: string; policyJson: string },
): void {
  let theirs: Record<string, unknown>;
  try {
    theirs = JSON.parse(other.policyJson) as Record<string, unknown>;
  } catch {
    theirs = {};
  }
  const differ = Object.keys({ ...mine, ...theirs }).filter(
    (k) => JSON.stringify(mine[k]) !== JSON.stringify(theirs[k]),
  );
  if (differ.length === 0) return;
  throw new ConflictError(
    `another council process (${other.id} at ${other.url}) serves this database with other settings: ${differ.join(', ')} differ`,
    'give every process of one council the same configuration (one council.json), or stop the others before changing it',
  );
}
