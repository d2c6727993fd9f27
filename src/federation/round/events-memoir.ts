/**
 * Where a forge's council_event entries go, and what they anchor. The federation memoir is a
 * session of its own, `council`, in the forge's project: it is found by `memoir` commands (and
 * `memoir replay`) like any session, and holds nothing but the federation's story.
 */
import { describeLocation, discoverMemoirs, memoirPathFor } from '../../memoir/file/discover.js';
import {
  councilEventEntry,
  readCouncilEvents,
  readLedgerHeads,
  type CouncilEvent,
  type CouncilEventDetails,
} from '../../memoir/derive/council-event.js';
import { Memoir } from '../../memoir/file/memoir.js';
import type { Anchors, LedgerHead } from '../../privacy/ledger-anchor.js';

export const COUNCIL_SESSION = 'council';

/** The council session of the first project under $KOURAI_HOME/projects, or of a `forge/council` project when there is none. */
export function defaultEventsMemoir(home: string): string {
  for (const path of discoverMemoirs(home)) {
    const loc = describeLocation(path);
    if (loc.player && loc.project) return memoirPathFor(home, loc.player, loc.project, COUNCIL_SESSION);
  }
  return memoirPathFor(home, 'forge', 'council', COUNCIL_SESSION);
}

/** This council's events, oldest first. */
export function councilEvents(path: string, councilKey: string): CouncilEvent[] {
  return readCouncilEvents(path).filter((e) => e.details.council === councilKey);
}

/** The newest ledger head any council_event in the memoir recorded (any council: the ledger is the forge's). */
export function memoirAnchor(path: string): { head: LedgerHead; where: string } | null {
  let best: { head: LedgerHead; where: string } | null = null;
  for (const h of readLedgerHeads(path)) {
    if (!best || h.releases >= best.head.releases)
      best = {
        head: { releases: h.releases, hash: h.hash },
        where: `the memoir's council_event${h.round !== null ? ` of round ${h.round}` : ''} (${h.entryId})`,
      };
  }
  return best;
}

/**
 * What the federation memoirs recorded that the ledger must still agree with: the newest ledger head
 * and, per round, who spoke and her ε after it, from the federation memoirs at `paths`.
 */
export function memoirLedgerAnchors(paths: readonly string[]): Pick<Anchors, 'memoir' | 'spoke'> {
  let memoir: { head: LedgerHead; where: string } | null = null;
  const spoke: NonNullable<Anchors['spoke']>[number][] = [];
  for (const path of new Set(paths)) {
    const m = memoirAnchor(path);
    if (m && (!memoir || m.head.releases >= memoir.head.releases)) memoir = m;
    for (const e of readCouncilEvents(path)) {
      for (const s of e.details.spoke)
        spoke.push({
          round: e.details.round_key,
          agent: s.agent,
          epsilonAfter: s.epsilon_after,
          where: `the memoir's council_event of round ${e.details.round} (${e.entryId})`,
        });
    }
  }
  return { memoir, spoke };
}

/** Appends council_event entries to the federation memoir (durably: one fsynced write each). */
export function memoirEventsWriter(
  path: string,
  now: () => Date,
): { path: string; append(d: CouncilEventDetails): string } {
  return {
    path,
    append(d) {
      const [e] = new Memoir(path, { now }).append([councilEventEntry(d)]);
      return (e as { entry_id: string }).entry_id;
    },
  };
}
