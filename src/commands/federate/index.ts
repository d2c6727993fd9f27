/**
 * `kourai federate …`: the forge's side of federation:
 *   commands.ts  the group's declarations
 *   join.ts      `federate join`: checks a council, then stores the membership
 *   leave.ts     `federate leave`: forgets the council's URL and token
 *   consent.ts   `federate consent`: the Sovereignty Moment, or --allow/--deny
 *   round.ts     `federate round`: one round, or its plan with --dry-run
 *   scene.ts     `federate scene`: a round's Council of Sisters and Stoa Falls, from the memoir
 *   status.ts    `federate status`: the council, consent, whisper capacity, the last rounds
 *   simulate.ts  `federate simulate`: a simulated federation with the real trainer, privacy and council
 *   shared.ts    the council token from a flag, a file, stdin or the environment
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
