/**
 * One federation round from the forge's side, and what it keeps:
 *   run-round.ts         the round as a function over small interfaces (transport, learner, gate, memoir)
 *   forge-round.ts       the round with this forge's real parts (`federate round`, `whisper --next-round`)
 *   plan.ts              the plan, decided before anything is trained or sent
 *   learner.ts           the local step over the real trainer: council view, training, held-out probes
 *   transport.ts         what a round needs from a council: HTTP or any other carrier
 *   retry.ts             riding out a slow, down or restarting council within one time budget
 *   adapter-check.ts     what the council sends back, checked before it is used or stored
 *   council-adapters.ts  each aggregate brought home stored as a council adapter version
 *   events-memoir.ts     where a forge's council_event entries go, and what they anchor
 *   ledger-anchors.ts    the anchors the privacy ledger is checked against before it is trusted
 *   join.ts              joining a council: the checks, then the membership stored
 *   membership.ts        the forge's membership of a council (URL and token, 0600)
 *   known-policy.ts      the council's privacy policy as this forge last saw it
 *   round-key.ts         round keys (they belong to src/protocol/round-key.ts)
 *   scenes.ts            the Council of Sisters and the Stoa Falls as lines of a scene
 *   status.ts            `federate status` as data
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
