/**
 * `kourai council …`: the council, operated:
 *   commands.ts      the group's declarations
 *   shared.ts        the flags every council command shares: where the council keeps its state
 *   serve.ts         `council serve`: the server, until SIGINT/SIGTERM
 *   migrate.ts       `council migrate`: the database schema brought up to date
 *   status.ts        `council status`: the processes sharing the database, and the current round
 *   rounds.ts        `council rounds`: the rounds, newest first
 *   trust.ts         `council trust`: trust of every forge, and the exiles
 *   aggregate.ts     `council aggregate`: update files aggregated offline with any rule
 *   forge-add.ts     `council forge add`: a forge registered, its token printed once
 *   forge-list.ts    `council forge list`: every forge with status, trust and activity
 *   forge-revoke.ts  `council forge revoke`: a forge's token refused at once
 *   forge-rotate.ts  `council forge rotate`: a new token for a forge
 *   layout-show.ts   `council layout show`: the configured and stored layouts per agent
 *   layout-reset.ts  `council layout reset`: the configured layout adopted from the open round on
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
