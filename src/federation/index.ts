/**
 * The forge's side of federation:
 *   council-client.ts  a typed HTTP client for the council protocol
 *   round/             one federation round and what it keeps (membership, policy, council adapters)
 *
 * Nothing is re-exported here: importers name the file they need.
 */
export {};
