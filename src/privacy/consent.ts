/**
 * The Sovereignty Moment: which agents may speak for the forge in the federation.
 * Pure domain: the stance lines, the scene order, and how flags become a consent decision.
 * Storage is src/store/consent-store.ts; the scene is src/ui/consent/.
 */
import { UsageError } from '../errors.js';
import {
  AGENTS,
  FEDERATING_AGENTS,
  isAgent,
  isBondOnly,
  type Agent,
  type FederatingAgent,
} from '../memoir/format/agents.js';

export interface Stance {
  agent: Agent;
  /** The verb of the scene direction ("opens", "advocates", ...). */
  role: string;
  line: string;
  /** Bond-only agents are shown but can never be allowed. */
  locked: boolean;
}

/** The scene order: Hephaestus opens, Aidos advocates, Cupid withdraws, then the rest; Puck last. */
export const STANCES: readonly Stance[] = [
  {
    agent: 'hephaestus',
    role: 'opens',
    line: 'The council gathers forges like ours. What we send is the shape of our craft, never the work itself. The choice is yours.',
    locked: false,
  },
  {
    agent: 'aidos',
    role: 'advocates',
    line: 'I have seen patterns here worth sharing, and I would learn more from the other forges.',
    locked: false,
  },
  {
    agent: 'cupid',
    role: 'withdraws',
    line: 'I will not go. What I keep is between us; I would not know how to share it.',
    locked: true,
  },
  { agent: 'metis', role: 'measures', line: 'I will share patterns, never specifications.', locked: false },
  { agent: 'kallos', role: 'commits', line: 'Style is craft, not secret. Let it travel.', locked: false },
  { agent: 'aletheia', role: 'caveats', line: 'Only what has been verified. Nothing I merely suspect.', locked: false },
  { agent: 'mneme', role: 'notes', line: 'The archives stay here. Only summaries leave.', locked: false },
  { agent: 'dokimasia', role: 'assents', line: 'Tests are good everywhere. I will speak.', locked: false },
  { agent: 'techne', role: 'defers', line: 'I will follow your call.', locked: false },
  { agent: 'puck', role: 'stays', line: 'Games stay at home. I am bond-only: I never leave the forge.', locked: true },
];

/** What never leaves, whatever the player allows (shown in the scene and by `federate consent`). */
export const NEVER_LEAVES: readonly string[] = [
  'Cupid and Puck: they are bond-only and have no council voice',
  'your code, your revisions and your task descriptions (instances, not patterns)',
  'affinity, relationship state, memory moments and raw transcripts',
  'exact entry counts, losses and timings: only the noised, clipped delta and public settings leave',
];

/** What consenting means, one line per fact. */
export const CONSENT_MEANING: readonly string[] = [
  'An allowed agent may send one clipped, noised council delta per federation round.',
  'Each delta spends whisper capacity (privacy budget); when it runs low the agent stays silent.',
  'You can revisit this choice any time; it applies from the next round. What already left cannot be recalled.',
];

export type ConsentMap = Record<FederatingAgent, boolean>;

export function noConsent(): ConsentMap {
  return Object.fromEntries(FEDERATING_AGENTS.map((a) => [a, false])) as ConsentMap;
}

/** Splits `a,b c` lists (repeatable flags) into lower-case names; `all` means every federating agent. */
export function parseAgentList(values: readonly string[] | string | undefined, flag: string): Agent[] {
  const raw = (Array.isArray(values) ? values : values === undefined ? [] : [values]) as string[];
  const names = raw
    .flatMap((v) => v.split(/[\s,]+/))
    .map((s) => s.trim())
    .filter(Boolean);
  const out: Agent[] = [];
  for (const n of names) {
    if (n === 'all') {
      out.push(...FEDERATING_AGENTS);
      continue;
    }
    if (!isAgent(n)) {
      // Names are lower case, as in the memoir and for --agent; say which one was meant.
      const meant =
        n.toLowerCase() === 'all' || isAgent(n.toLowerCase())
          ? ` (did you mean ${JSON.stringify(n.toLowerCase())}?)`
          : '';
      throw new UsageError(`${flag}: unknown agent ${JSON.stringify(n)}${meant}; agents: ${AGENTS.join(', ')}, or all`);
    }
    out.push(n);
  }
  return [...new Set(out)];
}

/**
 * The agents `--allow` and `--deny` name. `--allow all --deny techne` means every federating agent
 * except Techne (the README's example); naming one agent in both lists otherwise is refused.
 */
export function allowAndDeny(
  allowRaw: readonly string[],
  denyRaw: readonly string[],
): { allow: Agent[]; deny: Agent[] } {
  const allow = parseAgentList(allowRaw, '--allow');
  const deny = parseAgentList(denyRaw, '--deny');
  const all = allowRaw.some((v) => v.split(/[\s,]+/).some((n) => n.trim() === 'all'));
  const explicit = all ? new Set(allowRaw.flatMap((v) => v.split(/[\s,]+/)).map((n) => n.trim())) : null;
  // With "all", an agent only --deny names is left out of "all"; one named in both by name is still a contradiction.
  return { allow: explicit ? allow.filter((a) => !deny.includes(a) || explicit.has(a)) : allow, deny };
}

/**
 * Applies `--allow` / `--deny` to the current consent. Agents not named keep their stance.
 * Cupid or Puck in --allow is an error (they are locked out); in --deny it is accepted (it is true).
 */
export function applyFlags(current: ConsentMap, allow: readonly Agent[], deny: readonly Agent[]): ConsentMap {
  const both = allow.filter((a) => deny.includes(a));
  if (both.length > 0) throw new UsageError(`--allow and --deny both name ${both.join(', ')}`);
  const locked = allow.filter((a) => isBondOnly(a));
  if (locked.length > 0) {
    throw new UsageError(
      `--allow: ${locked.join(' and ')} ${locked.length === 1 ? 'is' : 'are'} bond-only and can never speak for the forge`,
      `remove ${locked.join(' and ')} from --allow`,
    );
  }
  const next = { ...current };
  for (const a of allow) if (!isBondOnly(a)) next[a as FederatingAgent] = true;
  for (const a of deny) if (!isBondOnly(a)) next[a as FederatingAgent] = false;
  return next;
}
