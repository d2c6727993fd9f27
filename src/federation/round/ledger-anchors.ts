/**
 * The anchors every command that reads or spends privacy budget checks the ledger against before it
 * trusts it (src/privacy/ledger-anchor.ts says what each catches): the memoir's, always; the
 * council's, when the command asks the council (`federate round`, `federate status`).
 */
import type { Anchors } from '../../privacy/ledger-anchor.js';
import type { ReleaseRow } from '../../store/privacy-ledger.js';
import type { RoundStatus, Trust } from '../../protocol/wire.js';
import { defaultEventsMemoir, memoirLedgerAnchors } from './events-memoir.js';
import { readMembership, type Membership } from './membership.js';
import { parseRoundKey, roundKey } from './round-key.js';

/** The memoir's anchors for this home: its joined council's events memoir, and the default one (a forge that left its council keeps its story there). */
export function localAnchors(
  home: string,
  membership: Pick<Membership, 'events_memoir'> | null = readMembership(home),
): Anchors {
  return memoirLedgerAnchors([...(membership ? [membership.events_memoir] : []), defaultEventsMemoir(home)]);
}

/** At most this many past rounds' statuses are asked for their policy and receipts (the newest ones the ledger spent in). */
export const POLICY_ROUNDS = 8;

/**
 * What the council holds, as anchors: per round status given (the current one and past rounds the
 * ledger spent in), the agents this forge submitted and the privacy policy their updates were
 * checked against; every round its trust history scored this forge in.
 */
export function councilAnchors(
  councilKey: string,
  rounds: readonly (RoundStatus | null)[],
  trust: Trust | null,
): Required<Pick<Anchors, 'council' | 'policies'>> {
  const council: NonNullable<Anchors['council']>[number][] = [];
  const policies: NonNullable<Anchors['policies']>[number][] = [];
  for (const round of rounds) {
    if (!round) continue;
    const key = roundKey(councilKey, round.round);
    for (const agent of round.you.submitted) {
      // The round key of the release the council holds, when it says: a release accepted into another
      // round than it was drawn for is anchored to the round it was drawn for (the ledger's).
      const held = round.you.round_keys?.[agent];
      if (held !== undefined && parseRoundKey(held)?.councilKey !== councilKey) continue; // not a release this forge drew
      council.push({ round: held ?? key, agent, where: `the council (round ${round.round} status)` });
    }
    const a = round.privacy_policy.accepted;
    policies.push({
      round: key,
      noiseMultiplier: a.noise_multiplier,
      clipNorm: a.clip_norm,
      where: `the council's round ${round.round} policy`,
    });
  }
  if (trust)
    for (const h of trust.history)
      council.push({
        round: roundKey(councilKey, h.round),
        agent: null,
        where: `the council (trust history, round ${h.round})`,
      });
  return { council, policies };
}

/** The newest past rounds of this council the ledger spent in (besides `current`), newest first. */
export function spentRounds(rows: readonly ReleaseRow[], councilKey: string, current: number | null): number[] {
  const rounds = new Set<number>();
  for (const r of rows) {
    const k = parseRoundKey(r.round);
    if (k && k.councilKey === councilKey && k.round !== current) rounds.add(k.round);
  }
  return [...rounds].sort((a, b) => b - a).slice(0, POLICY_ROUNDS);
}
