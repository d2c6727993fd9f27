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
import { openIndex } from '../memoir-index/memoir-index.js';
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
 * live in the cell that trains them. The data is materialised on first use (a thousand-forge
 * federation with cohorts of a hundred only ever touches the forges its cohorts sample) and is a
 * pure function of the seed and the forge's index, so when it is built does not change it.
 */
export interface SimForge {
  index: number;
  /** The forge's name at the council. */
  name: string;
  profile: PlayerProfile;
  byzantine: boolean;
  readonly council: Map<FederatingAgent, Example[]>;
  readonly bond: Map<FederatingAgent, Example[]>;
  readonly flipped: Map<FederatingAgent, Example[]>;
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

export function buildForges(
  x: Experiment,
  seed: number,
  home: string,
  specialists: readonly string[],
  signal?: AbortSignal,
): SimForge[] {
  const bad = byzantineSet(x.forges, x.byzantine, seed);
  const out: SimForge[] = [];
  for (let k = 0; k < x.forges; k++) {
    if (signal?.aborted) break;
    const profile = profileFor(playerName(k));
    let views: Pick<SimForge, 'council' | 'bond' | 'flipped'> | null = null;
    const data = (): Pick<SimForge, 'council' | 'bond' | 'flipped'> =>
      (views ??= forgeViews(x, seed, k, home, profile, specialists));
    out.push({
      index: k,
      name: `forge-${String(k + 1).padStart(2, '0')}`,
      profile,
      byzantine: bad.has(k),
      get council() {
        return data().council;
      },
      get bond() {
        return data().bond;
      },
      get flipped() {
        return data().flipped;
      },
    });
  }
  return out;
}

/** Forge k's sample memoirs, written under `home`, indexed, and read through the real data views. */
function forgeViews(
  x: Experiment,
  seed: number,
  k: number,
  home: string,
  profile: PlayerProfile,
  specialists: readonly string[],
): Pick<SimForge, 'council' | 'bond' | 'flipped'> {
  const player = playerName(k);
  const paths: string[] = [];
  for (const s of synthSessions({ seed: seed * 1000 + k, sessions: x.sessions, turns: x.turns, profile })) {
    const p = memoirPathFor(join(home, `seed-${seed}`), player, `forge-${k + 1}`, s.sessionId);
    appendLines(p, s.lines, { fsync: false });
    paths.push(p);
  }
  const index = openIndex(home);
  try {
    const files = paths.map((p) => (index.update([p])[0] as { fileId: number }).fileId);
    const source = { index, files };
    const council = new Map<FederatingAgent, Example[]>();
    const bond = new Map<FederatingAgent, Example[]>();
    const flipped = new Map<FederatingAgent, Example[]>();
    for (const agent of x.agents) {
      const c = councilView(source, agent).examples as Example[];
      council.set(agent, c);
      bond.set(agent, bondView(source, agent).examples as Example[]);
      flipped.set(agent, flipLabels(c, specialists));
    }
    return { council, bond, flipped };
  } finally {
    index.close();
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
