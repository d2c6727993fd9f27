/**
 * `kourai train …`: local training:
 *   commands.ts  the group's declarations
 *   bond.ts      `train bond`: every agent's bond adapter, trained and made current
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
