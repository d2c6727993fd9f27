/**
 * The README's strict split rule ("An entry may leave the forge only if …"), restated naively as
 * an oracle for tests: written from the documentation, sharing no code with src/memoir/format/split-rule.ts
 * or the index, so a test that compares the two is not comparing a module with itself.
 */
type Line = Record<string, unknown>;

const BOND_ONLY = ['cupid', 'puck'];
const PATTERN_SOURCES = ['specialist_proposed', 'agent_interrupt', 'disagreement_resolution'];
const TURN_TYPES = ['pipeline_turn', 'interrupt'];

/** The rule for one line on its own (no revision chain). */
export function lineMayLeave(l: Line): boolean {
  if (BOND_ONLY.includes(l.agent as string)) return false;
  if (!PATTERN_SOURCES.includes(l.source as string)) return false;
  if (l.entry_type !== undefined && !TURN_TYPES.includes(l.entry_type as string)) return false;
  const i = l.interrupt as { interrupting_agent: string; target_agent: string; visibility: string } | null | undefined;
  if (
    i &&
    (BOND_ONLY.includes(i.interrupting_agent) || BOND_ONLY.includes(i.target_agent) || i.visibility === 'private')
  )
    return false;
  const split = l.split as { shared_eligible: boolean; private_only: boolean } | undefined;
  return split === undefined || (split.shared_eligible && !split.private_only);
}

/**
 * Whether each line may leave, in order, with revision chains: a revision of a private entry is
 * private ("a revision never widens privacy"). Lines are kourai lines (with `entry_id`) or Python lines.
 */
export function mayLeave(lines: readonly Line[]): boolean[] {
  const byId = new Map<string, boolean>();
  return lines.map((l) => {
    let ok = lineMayLeave(l);
    if (typeof l.supersedes === 'string' && byId.get(l.supersedes) === false) ok = false;
    if (typeof l.entry_id === 'string') byId.set(l.entry_id, ok);
    return ok;
  });
}

/** Lines that no later line supersedes (what whisper and `inspect` count by default). */
export function newestOnly(lines: readonly Line[]): boolean[] {
  const replaced = new Set(lines.map((l) => l.supersedes).filter((s): s is string => typeof s === 'string'));
  return lines.map((l) => typeof l.entry_id !== 'string' || !replaced.has(l.entry_id));
}
