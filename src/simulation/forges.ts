import { join } from 'node:path';
import { appendLines } from '../memoir/file/append.js';
import { memoirPathFor } from '../memoir/file/discover.js';
import {
  AXES,
  AXIS_INFO,
  axisOf,
  CRAFT_PREFERENCES,
  type PersonalPreference,
  type PreferenceId,
} from '../memoir/sample/planted/catalogue.js';
import { nameSeed, profileFor, type PlayerProfile } from '../memoir/sample/planted/profiles.js';
import { slopShard } from '../memoir/sample/planted/slop.js';
import { ROOT_PLAYER, rootSessions } from '../memoir/sample/root.js';
import { synthSessions } from '../memoir/sample/synth.js';
import type { FederatingAgent } from '../memoir/format/agents.js';
import { mulberry32 } from '../runtime/seeded-random.js';
import { updateIndexed } from '../memoir-index/indexed.js';
import { openIndex } from '../memoir-index/memoir-index.js';
import type { Example } from '../train/examples/types.js';
import { bondView, councilView } from '../train/examples/views.js';
import { flipLabels } from './attacks.js';
import type { Experiment } from './experiment.js';

/**
 * The simulated forges of one seed, built the way a real forge's data is built: each forge is a
 * sample forge (`kourai memoir synth`) of its own player — the shared craft preference plus the
 * player's planted personal preferences, drawn from a population with common tastes
 * (`populationProfile`) — written as memoir files, indexed, and read through the
 * real data views (`councilView`: shareable entries, council fields only; `bondView`: everything).
 * Each forge's player also puts passages to Aidos from the slop families they meet
 * (`memoir/sample/planted/slop.ts`), Aidos's data for the slop-detection F1.
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
  /** Sample-forge sessions of its memoir. */
  sessions: number;
  readonly council: Map<FederatingAgent, Example[]>;
  readonly bond: Map<FederatingAgent, Example[]>;
  readonly flipped: Map<FederatingAgent, Example[]>;
}

const NAMED = ['ariadne', 'daedalus', 'icarus'];

/** Player k of a simulation: the three documented profiles first, then seeded ones by name. */
export function playerName(k: number): string {
  return NAMED[k] ?? `player-${String(k + 1).padStart(2, '0')}`;
}

/** How often a simulated player holds the federation's common pole on an axis they care about. */
export const COMMON_POLE_SHARE = 0.75;

/**
 * A simulated player's profile: three personal axes, one pole each, as a sample player's — but the
 * federation's players have tastes in common: on every personal axis one pole (chosen by the seed)
 * is held by about 3 in 4 of the players who care about it. So there is something beyond the craft
 * for a council to teach a player it has not met: a newcomer is drawn from the same population.
 */
export function populationProfile(player: string, seed: number): PlayerProfile {
  const axes = AXES.filter((a) => !AXIS_INFO[a].craft);
  const common = mulberry32(nameSeed(`population-common/${seed}`));
  const commonPole = new Map(axes.map((a) => [a, common() < 0.5 ? 0 : 1] as const));
  const rand = mulberry32(nameSeed(`population/${seed}/${player}`));
  const chosen: PersonalPreference[] = [];
  while (chosen.length < 3) {
    const axis = axes[Math.floor(rand() * axes.length)] as (typeof axes)[number];
    if (chosen.some((p) => axisOf(p).axis === axis)) continue;
    const c = commonPole.get(axis) as 0 | 1;
    const pole = rand() < COMMON_POLE_SHARE ? c : 1 - c;
    chosen.push(AXIS_INFO[axis].poles[pole] as PersonalPreference);
  }
  return profileFor(player, chosen);
}

/** Slop reviews per session of a simulated forge (Aidos's data for the slop-detection F1). */
const SLOP_REVIEWS_PER_SESSION = 6;

/** The agents whose data views a forge holds: the experiment's, and Aidos (for the slop-detection F1). */
function viewAgents(x: Pick<Experiment, 'agents'>): FederatingAgent[] {
  return x.agents.includes('aidos') ? x.agents : [...x.agents, 'aidos'];
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
  const wants = Array.from({ length: x.forges }, (_, k) => ({
    k,
    player: playerName(k),
    name: `forge-${String(k + 1).padStart(2, '0')}`,
    sessions: x.sessions,
    byzantine: bad.has(k),
  }));
  return buildFrom(x, seed, home, specialists, wants, signal);
}

/**
 * The newcomers of a cold-start measurement: `x.newcomers` fresh players per session count of
 * `x.coldStart`, none of them in the federation (their indices follow the forges').
 */
export function buildNewcomers(
  x: Experiment,
  seed: number,
  home: string,
  specialists: readonly string[],
  signal?: AbortSignal,
): SimForge[] {
  const wants = x.coldStart.flatMap((sessions, i) =>
    Array.from({ length: x.newcomers }, (_, j) => {
      const k = x.forges + i * x.newcomers + j;
      return { k, player: playerName(k), name: `newcomer-${sessions}s-${j + 1}`, sessions, byzantine: false };
    }),
  );
  return buildFrom(x, seed, home, specialists, wants, signal);
}

type Views = Pick<SimForge, 'council' | 'bond' | 'flipped'>;
type Want = { k: number; player: string; name: string; sessions: number; byzantine: boolean };

function buildFrom(
  x: Experiment,
  seed: number,
  home: string,
  specialists: readonly string[],
  wants: readonly Want[],
  signal?: AbortSignal,
): SimForge[] {
  const out: SimForge[] = [];
  for (const w of wants) {
    if (signal?.aborted) break;
    const profile = populationProfile(w.player, seed);
    let views: Views | null = null;
    const data = (): Views => (views ??= forgeViews(x, seed, home, specialists, w, profile));
    out.push({
      index: w.k,
      name: w.name,
      profile,
      byzantine: w.byzantine,
      sessions: w.sessions,
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

/** A forge's sample memoirs, written under `home`, indexed, and read through the real data views. */
function forgeViews(
  x: Experiment,
  seed: number,
  home: string,
  specialists: readonly string[],
  w: Want,
  profile: PlayerProfile,
): Views {
  const { k, player } = w;
  const paths: string[] = [];
  const slop = slopShard(seed, k, SLOP_REVIEWS_PER_SESSION);
  for (const s of synthSessions({ seed: seed * 1000 + k, sessions: w.sessions, turns: x.turns, profile, slop })) {
    const p = memoirPathFor(join(home, `seed-${seed}`), player, `forge-${k + 1}`, s.sessionId);
    appendLines(p, s.lines, { fsync: false });
    paths.push(p);
  }
  const index = openIndex(home);
  try {
    const source = { index, files: updateIndexed(index, paths).fileIds };
    const council = new Map<FederatingAgent, Example[]>();
    const bond = new Map<FederatingAgent, Example[]>();
    const flipped = new Map<FederatingAgent, Example[]>();
    for (const agent of viewAgents(x)) {
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

/** Sessions of the councils' root memoir (memoir/sample/root.ts): a labelled set of the shared craft. */
export const ROOT_SESSIONS = 32;

/** Writes the councils' root memoir under `home`; returns its directory (what `root_memoir` names). */
export function writeRootMemoir(home: string, turns: number): string {
  const dir = join(home, 'council-root');
  for (const s of rootSessions(ROOT_SESSIONS, turns))
    appendLines(memoirPathFor(dir, ROOT_PLAYER, 'council-root', s.sessionId), s.lines, { fsync: false });
  return dir;
}

/** The craft preferences an agent's outputs show (what its council adapter should learn). */
export function craftFor(agent: FederatingAgent): PreferenceId[] {
  return CRAFT_PREFERENCES.filter((p) => AXIS_INFO[axisOf(p).axis].agents.includes(agent));
}

/** A player's personal preferences an agent's outputs show (what its bond adapter should learn). */
export function personalFor(profile: PlayerProfile, agent: FederatingAgent): PersonalPreference[] {
  return profile.preferences.filter((p) => AXIS_INFO[axisOf(p).axis].agents.includes(agent));
}
