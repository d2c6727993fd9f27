import type { Agent } from '../../format/agents.js';
import { mulberry32 } from '../../../runtime/seeded-random.js';
import { axisOf, isPreferenceId, type PreferenceId } from './catalogue.js';
import type { Vocabulary } from './pseudo-words.js';
import { agentForAxis, balancedPair, kindFor, newSample, randomStyle, withPoles } from './samples.js';

export interface HeldOutPair {
  /** The text in the preference's form. */
  preferred: string;
  /** The same content in the opposite form. */
  dispreferred: string;
  /** Whose output this is (score it with this agent's adapter). */
  agent: Agent;
}

/**
 * Fresh evaluation pairs for one planted preference, from the held-out vocabulary: no word of
 * them ever appears in a synthesised memoir, so a learner scores them right only if it learned
 * the form. Each pair is one piece of content rendered twice, differing only on the preference's
 * axis (every other axis the same on both sides), with lengths balanced so that "prefer the
 * shorter" scores about half. Same seed, same pairs.
 */
export function heldOutPairs(
  preferenceId: PreferenceId,
  opts: { seed: number; n: number; vocabulary?: Vocabulary },
): HeldOutPair[] {
  if (!isPreferenceId(preferenceId)) throw new RangeError(`unknown preference "${String(preferenceId)}"`);
  const { axis, index } = axisOf(preferenceId);
  const rand = mulberry32(opts.seed);
  const vocab = opts.vocabulary ?? 'heldOut';
  const out: HeldOutPair[] = [];
  for (let i = 0; i < opts.n; i++) {
    const agent = agentForAxis(axis, i);
    const kind = kindFor(axis, agent);
    const sample = newSample(rand, kind, vocab);
    const base = randomStyle(rand, kind);
    const other: 0 | 1 = index === 0 ? 1 : 0;
    const pair = balancedPair(
      rand,
      sample,
      withPoles(rand, kind, base, { [axis]: index }),
      withPoles(rand, kind, base, { [axis]: other }),
      { preferred: [axis], dispreferred: [axis] },
    );
    out.push({ preferred: pair.preferred, dispreferred: pair.dispreferred, agent });
  }
  return out;
}
