import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A small forge whose every line was labelled by hand: may it leave the forge (`shares`), and is it
 * the newest revision (`newest`)? Private sources, lenient upstream splits (lines that claim shared
 * but may not), private interrupts, interrupts with a bond-only party, private entry types and
 * revision chains over private and shareable originals are all present, for every check that counts
 * shareable entries without asking the code under test.
 */
export interface KnownLine {
  line: Record<string, unknown>;
  shares: boolean;
  newest: boolean;
}

const SHARED = { shared_eligible: true, private_only: false };
const PRIVATE = { shared_eligible: false, private_only: true };
const base = (agent: string, source: string, turn: number): Record<string, unknown> => ({
  scene_id: `session-0a1b2c3d.turn-${turn}`,
  agent,
  source,
  context: null,
  narrative_beat: null,
  agent_proposed: `${agent} on ${source} (naming the loader)`,
  player_response: null,
  affinity_delta: 0.0,
  training_label: null,
  split: SHARED, // what an upstream writer claims by default; policy may still say no
});
const interrupt = (by: string, target: string, visibility: string): Record<string, unknown> => ({
  entry_type: 'interrupt',
  interrupt: {
    interrupting_agent: by,
    target_agent: target,
    target_turn: 'session-0a1b2c3d.turn-0',
    reason_class: 'correction',
    visibility,
  },
});

export function knownLines(): KnownLine[] {
  const L = (line: Record<string, unknown>, shares: boolean, newest = true): KnownLine => ({ line, shares, newest });
  const lines = [
    // metis: 3 of 8 lines count
    L(base('metis', 'specialist_proposed', 1), true), // a Python line: claims shared, and may
    L({ ...base('metis', 'specialist_proposed', 2), split: PRIVATE }, false), // narrowed by its writer
    L(base('metis', 'player_revision', 3), false), // lenient: the player's own words
    L(
      { ...base('metis', 'agent_interrupt', 4), entry_id: 'K-METIS-INT', ...interrupt('metis', 'techne', 'private') },
      false,
    ),
    L(base('metis', 'disagreement_resolution', 5), true),
    L({ ...base('metis', 'specialist_proposed', 6), entry_id: 'K-METIS-CE', entry_type: 'council_event' }, false),
    L({ ...base('metis', 'specialist_proposed', 7), entry_id: 'K-METIS-ORIG' }, true, false), // replaced below
    L(
      {
        ...base('metis', 'specialist_proposed', 8),
        entry_id: 'K-METIS-REV',
        supersedes: 'K-METIS-ORIG',
        revision_reason: 'typo',
      },
      true,
    ),
    // techne: 2 of 6 lines count
    L({ ...base('techne', 'specialist_proposed', 9), split: PRIVATE, entry_id: 'K-TECHNE-PRIV' }, false, false),
    L(
      {
        ...base('techne', 'specialist_proposed', 10),
        entry_id: 'K-TECHNE-REV',
        supersedes: 'K-TECHNE-PRIV',
        revision_reason: 'widen',
      },
      false,
    ), // never widens
    L(base('techne', 'specialist_proposed', 11), true),
    L(
      {
        ...base('techne', 'agent_interrupt', 12),
        entry_id: 'K-TECHNE-CUPID',
        ...interrupt('techne', 'cupid', 'public'),
      },
      false,
    ),
    L(
      { ...base('techne', 'agent_interrupt', 13), entry_id: 'K-TECHNE-INT', ...interrupt('techne', 'metis', 'public') },
      true,
    ),
    L(base('techne', 'raw_transcript', 14), false), // claims shared: the source alone keeps it home
    // bond-only agents never count, whatever the line claims
    L(base('cupid', 'specialist_proposed', 15), false),
    L(base('puck', 'disagreement_resolution', 16), false),
    L(base('cupid', 'cupid_scene', 17), false),
    // kallos: private sources only, each claiming shared (as a lenient upstream writer would)
    L(base('kallos', 'affinity_change', 18), false),
    L(base('kallos', 'task_description', 19), false),
    L(base('kallos', 'player_profile', 20), false),
    // aidos: 2 of 2
    L(base('aidos', 'specialist_proposed', 21), true),
    L(base('aidos', 'specialist_proposed', 22), true),
  ];
  return lines;
}

/** Expected shareable entries per agent (newest revisions), counted from the hand labels. */
export function knownShareable(lines: readonly KnownLine[] = knownLines()): Record<string, number> {
  const out: Record<string, number> = {};
  for (const l of lines) {
    const agent = l.line.agent as string;
    out[agent] ??= 0;
    if (l.shares && l.newest) out[agent]++;
  }
  return out;
}

/** Writes the lines as one session's memoir under `home`, where commands find memoirs by default. */
export function writeKnownForge(home: string, lines: readonly KnownLine[] = knownLines()): string {
  const dir = join(home, 'projects', 'ariadne', 'known-forge', '.kourai', 'forges', 'session-0a1b2c3d');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, 'memoir.jsonl');
  writeFileSync(path, lines.map((l) => `${JSON.stringify(l.line)}\n`).join(''));
  return path;
}
