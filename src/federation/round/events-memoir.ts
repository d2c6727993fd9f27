/**
 * Where a forge's council_event entries go, and what they anchor. The federation memoir is a
 * session of its own, `council`, in the forge's project: it is found by `memoir` commands (and
 * `memoir replay`) like any session, and holds nothing but the federation's story.
 */
import { describeLocation, discoverMemoirs, memoirPathFor } from '../../memoir/discover.js';
import { readCouncilEvents, type CouncilEvent } from '../../memoir/council-event.js';
import type { LedgerHead } from '../../privacy/ledger-anchor.js';

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
  for (const e of readCouncilEvents(path)) {
    const h = e.details.ledger_head;
    if (!best || h.releases >= best.head.releases) best = { head: h, where: `the memoir's council_event of round ${e.details.round} (${e.entryId})` };
  }
  return best;
}
