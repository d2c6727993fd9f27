/** The ten agents of a forge. Eight federate; Cupid and Puck are bond-only by construction. */
export const FEDERATING_AGENTS = [
  'hephaestus',
  'metis',
  'techne',
  'dokimasia',
  'kallos',
  'mneme',
  'aidos',
  'aletheia',
] as const;
export const BOND_ONLY_AGENTS = ['cupid', 'puck'] as const;
export const AGENTS = [...FEDERATING_AGENTS, ...BOND_ONLY_AGENTS] as const;

export type FederatingAgent = (typeof FEDERATING_AGENTS)[number];
export type BondOnlyAgent = (typeof BOND_ONLY_AGENTS)[number];
export type Agent = (typeof AGENTS)[number];

const bondOnly: ReadonlySet<string> = new Set(BOND_ONLY_AGENTS);
const known: ReadonlySet<string> = new Set(AGENTS);

export function isAgent(s: string): s is Agent {
  return known.has(s);
}

export function isBondOnly(agent: Agent): agent is BondOnlyAgent {
  return bondOnly.has(agent);
}

export function isFederating(agent: Agent): agent is FederatingAgent {
  return !bondOnly.has(agent);
}
