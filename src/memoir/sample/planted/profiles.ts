import { UsageError } from '../../../errors.js';
import { mulberry32 } from '../../../runtime/seeded-random.js';
import {
  AXES,
  AXIS_INFO,
  axisOf,
  CRAFT_PREFERENCES,
  isPersonalPreference,
  PERSONAL_PREFERENCES,
  type Axis,
  type CraftPreference,
  type PersonalPreference,
} from './catalogue.js';

/**
 * Player profiles: which personal preferences a sample player holds. Documented defaults for a
 * few names (README), a seeded pick for any other name, or an explicit list (`--preferences`).
 * Every profile also holds the craft preferences.
 */

export const NAMED_PROFILES: Readonly<Record<string, readonly PersonalPreference[]>> = {
  ariadne: ['early-returns', 'typed-signatures', 'conventional-commits'],
  daedalus: ['single-exit', 'untyped-signatures', 'why-comments', 'numbered-steps'],
  icarus: ['descriptive-names', 'what-comments', 'plain-commits', 'prose-plans'],
};

/** Puck's events; each player enjoys some of them (scene acceptance for Puck's bond adapter). */
export const PUCK_EVENTS = [
  'puck_minigame_refactor_race',
  'puck_tutorial_shortcuts',
  'puck_riddle_of_the_flaky_test',
  'puck_speedrun_the_index',
] as const;
export const CUPID_SCENES = [
  'cupid_late_night_check_in',
  'cupid_remembers_your_first_commit',
  'cupid_quiet_encouragement',
] as const;

export interface PlayerProfile {
  player: string;
  /** One pole per personal axis the player cares about, in catalogue order. */
  preferences: PersonalPreference[];
  /** Held by every player. */
  craft: readonly CraftPreference[];
  /** Puck events this player enjoys (accepted); the others are mostly deferred. */
  puckLikes: string[];
  /** Where the preferences came from. */
  origin: 'named' | 'hashed' | 'flag';
}

/** FNV-1a of a name: a stable seed for players without a named profile. */
export function nameSeed(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) {
    h ^= name.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

function sorted(prefs: readonly PersonalPreference[]): PersonalPreference[] {
  return [...prefs].sort((a, b) => PERSONAL_PREFERENCES.indexOf(a) - PERSONAL_PREFERENCES.indexOf(b));
}

/** Three personal axes, one pole each, chosen by a seed from the player's name. */
function hashedPreferences(name: string): PersonalPreference[] {
  const rand = mulberry32(nameSeed(name));
  const axes = AXES.filter((a) => !AXIS_INFO[a].craft);
  const chosen: PersonalPreference[] = [];
  while (chosen.length < 3) {
    const axis = axes[Math.floor(rand() * axes.length)] as Axis;
    if (chosen.some((p) => axisOf(p).axis === axis)) continue;
    chosen.push(AXIS_INFO[axis].poles[rand() < 0.5 ? 0 : 1] as PersonalPreference);
  }
  return sorted(chosen);
}

/**
 * Parses `--preferences a,b` (or `none`): known personal preferences, at most one pole per axis.
 * Throws a UsageError naming the bad item.
 */
export function parsePreferences(list: string): PersonalPreference[] {
  const items = list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 1 && items[0] === 'none') return [];
  const out: PersonalPreference[] = [];
  for (const it of items) {
    if ((CRAFT_PREFERENCES as readonly string[]).includes(it))
      throw new UsageError(`--preferences: "${it}" is craft, which every player holds; list personal preferences only`);
    if (!isPersonalPreference(it))
      throw new UsageError(
        `--preferences: unknown preference "${it}"; expected one of: ${PERSONAL_PREFERENCES.join(', ')} (or none)`,
      );
    const clash = out.find((p) => axisOf(p).axis === axisOf(it).axis);
    if (clash)
      throw new UsageError(
        `--preferences: "${clash}" and "${it}" are opposite poles of one axis (${axisOf(it).axis}); a player holds one of them`,
      );
    if (!out.includes(it)) out.push(it);
  }
  return sorted(out);
}

export function profileFor(player: string, preferences?: readonly PersonalPreference[]): PlayerProfile {
  const rand = mulberry32(nameSeed(`${player}/puck`));
  const puckLikes: string[] = PUCK_EVENTS.filter(() => rand() < 0.5);
  if (puckLikes.length === 0) puckLikes.push(PUCK_EVENTS[Math.floor(rand() * PUCK_EVENTS.length)] as string);
  const named = NAMED_PROFILES[player];
  const origin = preferences ? 'flag' : named ? 'named' : 'hashed';
  return {
    player,
    preferences: preferences ? sorted(preferences) : named ? [...named] : hashedPreferences(player),
    craft: CRAFT_PREFERENCES,
    puckLikes,
    origin,
  };
}

/** The pole the player holds on each axis they care about (craft axes always at pole 0). */
export function heldPoles(profile: PlayerProfile): Partial<Record<Axis, 0 | 1>> {
  const held: Partial<Record<Axis, 0 | 1>> = {};
  for (const p of [...profile.preferences, ...profile.craft]) {
    const { axis, index } = axisOf(p);
    held[axis] = index;
  }
  return held;
}
