import { join } from 'node:path';
import { appendLines } from '../memoir/file/append.js';
import { memoirPathFor } from '../memoir/file/discover.js';
import {
  AXIS_INFO,
  axisOf,
  CRAFT_PREFERENCES,
  type PersonalPreference,
  type PreferenceId,
} from '../memoir/sample/planted/catalogue.js';
import { profileFor, type PlayerProfile } from '../memoir/sample/planted/profiles.js';
import { synthSessions } from '../memoir/sample/synth.js';
import type { FederatingAgent } from '../memoir/format/agents.js';
import { mulberry32 } from '../runtime/seeded-random.js';
import { openIndexed } from '../memoir-index/indexed.js';
import type { Example } from '../train/examples/types.js';
import { bondView, councilView } from '../train/examples/views.js';
import { flipLabels } from './attacks.js';
import type { Experiment } from './experiment.js';

/**
 * The simulated forges of one seed, built the way a real forge's data is built: each forge is a
 * sample forge (`kourai memoir synth`) of its own player — the shared craft preference plus the
 * player's planted personal preferences — written as memoir files, indexed, and read through the
 * real data views (`councilView`: shareable entries, council fields only; `bondView`: everything).
 *
 * Per forge and agent it also holds the label-flipped council view (what a poisoning forge trains
 * on), a pure function of the council view. A forge is this data and nothing else: its adapters
 * live in the cell that trains them.
 */
export interface SimForge {
  index: number;
  /** The forge's name at the council. */
  name: string;
  profile: PlayerProfile;
  byzantine: boolean;
  council: Map<FederatingAgent, Example[]>;
  bond: Map<FederatingAgent, Example[]>;
  flipped: Map<FederatingAgent, Example[]>;
}

const NAMED = ['ariadne', 'daedalus', 'icarus'];

/** Player k of a simulation: the three documented profiles first, then seeded ones by name. */
export function playerName(k: number): string {
  return NAMED[k] ?? `player-${String(k + 1).padStart(2, '0')}`;
}

/** Which forges are Byzantine: f of them, chosen by the seed. */
export function byzantineSet(forges: number, f: number, seed: number): Set<number> {
  const rand = mulberry32((seed * 7919) ^ 0x5eed);
  const idx = Array.from({ length: forges }, (_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [idx[i], idx[j]] = [idx[j] as number, idx[i] as number];
  }
  return new Set(idx.slice(0, f));
}

export async function buildForges(
  x: Experiment,
  seed: number,
  home: string,
  specialists: readonly string[],
  signal?: AbortSignal,
): Promise<SimForge[]> {
  const bad = byzantineSet(x.forges, x.byzantine, seed);
  const written: { k: number; profile: PlayerProfile; paths: string[] }[] = [];
  for (let k = 0; k < x.forges; k++) {
    if (signal?.aborted) break;
    const player = playerName(k);
    const profile = profileFor(player);
    const paths: string[] = [];
    for (const s of synthSessions({ seed: seed * 1000 + k, sessions: x.sessions, turns: x.turns, profile })) {
      const p = memoirPathFor(join(home, `seed-${seed}`), player, `forge-${k + 1}`, s.sessionId);
      appendLines(p, s.lines, { fsync: false });
      paths.push(p);
    }
    written.push({ k, profile, paths });
  }
  if (written.length === 0) return [];
  // The index is brought up to date the one way every command does it.
  const ctx = {
    env: { KOURAI_HOME: home },
    cwd: home,
    now: () => new Date(),
    signal: signal ?? new AbortController().signal,
  };
  const indexed = await openIndexed(
    ctx,
    written.flatMap((w) => w.paths),
  );
  try {
    const fileOf = new Map(indexed.paths.map((p, i) => [p, indexed.fileIds[i] as number]));
    return written.map(({ k, profile, paths }) => {
      const source = { index: indexed.index, files: paths.map((p) => fileOf.get(p) as number) };
      const council = new Map<FederatingAgent, Example[]>();
      const bond = new Map<FederatingAgent, Example[]>();
      const flipped = new Map<FederatingAgent, Example[]>();
      for (const agent of x.agents) {
        const c = councilView(source, agent).examples as Example[];
        const b = bondView(source, agent).examples as Example[];
        council.set(agent, c);
        bond.set(agent, b);
        flipped.set(agent, flipLabels(c, specialists));
      }
      return {
        index: k,
        name: `forge-${String(k + 1).padStart(2, '0')}`,
        profile,
        byzantine: bad.has(k),
        council,
        bond,
        flipped,
      };
    });
  } finally {
    indexed.index.close();
  }
}

/** The craft preferences an agent's outputs show (what its council adapter should learn). */
export function craftFor(agent: FederatingAgent): PreferenceId[] {
  return CRAFT_PREFERENCES.filter((p) => AXIS_INFO[axisOf(p).axis].agents.includes(agent));
}

/** A player's personal preferences an agent's outputs show (what its bond adapter should learn). */
export function personalFor(profile: PlayerProfile, agent: FederatingAgent): PersonalPreference[] {
  return profile.preferences.filter((p) => AXIS_INFO[axisOf(p).axis].agents.includes(agent));
}
