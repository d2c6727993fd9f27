import { profileFor } from './planted/profiles.js';
import { synthSessions, type SynthSession } from './synth.js';

/**
 * A council's root memoir: a sample forge whose player holds the craft every player holds and no
 * personal preference, from a published seed of its own (no forge's memoir is drawn from it). An
 * operator configures such a memoir as the council's root set (`council serve --root-memoir`);
 * the simulation's councils use this one.
 *
 * Only what shows the shared preferences is kept: a player without a taste on an axis sides with
 * Kallos or Aidos in their disagreements at random, so those lines are left out (nothing refers
 * to them).
 */
export const ROOT_PLAYER = 'council-root';
/** The published seed of the root memoir (forges' memoirs use seed × 1000 + their index). */
export const ROOT_SEED = 0x600d_c0de;

export function rootSessions(sessions: number, turns: number): SynthSession[] {
  return [...synthSessions({ seed: ROOT_SEED, sessions, turns, profile: profileFor(ROOT_PLAYER, []) })].map((s) => {
    const lines = s.lines.filter((l) => !/"source":\s*"disagreement_resolution"/.test(l));
    return { ...s, lines, entries: s.entries - (s.lines.length - lines.length) };
  });
}
