/**
 * The σ a council publishes for a target ε. Two ledgers read every release: an observer of the
 * published council adapters, for whom R rounds of Poisson-sampled cohorts (rate q) are amplified
 * by sampling, and each forge's own Whisper ledger, which trusts no council and charges every
 * release unamplified (q = 1). The amplified σ alone can be far below what a forge will accept:
 * the player's privacy floor (privacy-floor.ts) lets one release cost at most RELEASE_SHARE of an
 * agent's lifetime ε, so a council that published it would be refused by every forge and never
 * move. The published σ is therefore the larger of the two, and says which one bound.
 */
import { RELEASE_SHARE, releaseEpsilon } from './privacy-floor.js';
import { sigmaForEpsilon } from './rdp-accountant.js';

export interface SigmaTarget {
  /** ε toward an observer of the published adapters over `rounds` rounds. */
  epsilon: number;
  rounds: number;
  delta: number;
  /** Each forge's chance of sitting in a round's cohort (Poisson sampling); 1: every forge, every round. */
  sampleRate: number;
  /** The lifetime ε of one agent on the forges served (their `agent_epsilon`). */
  agentEpsilon: number;
}

export interface PublishedSigma {
  sigma: number;
  /** The smallest σ that keeps the observer's ε at the target (amplified by sampling). */
  observer: number;
  /** The smallest σ at which one unamplified release costs at most RELEASE_SHARE of the lifetime ε. */
  affordable: number;
  /** Which of the two set σ. */
  binding: 'observer' | 'floor';
  /** The floor's cap on one release: RELEASE_SHARE of the lifetime ε. */
  releaseCap: number;
  /** ε one release costs a forge's own ledger at σ (at most `releaseCap`). */
  releaseEpsilon: number;
}

const TOLERANCE = 1e-6;
const known = new Map<string, PublishedSigma>();

/** The σ to publish for a target (remembered: the search costs seconds at q < 1). */
export function councilSigma(t: SigmaTarget): PublishedSigma {
  const key = `${t.epsilon}|${t.rounds}|${t.delta}|${t.sampleRate}|${t.agentEpsilon}`;
  const hit = known.get(key);
  if (hit) return hit;
  const observer = sigmaForEpsilon({
    epsilon: t.epsilon,
    delta: t.delta,
    steps: t.rounds,
    sampleRate: t.sampleRate,
    tolerance: TOLERANCE,
  }).noiseMultiplier;
  const releaseCap = t.agentEpsilon * RELEASE_SHARE;
  const affordable = sigmaForEpsilon({
    epsilon: releaseCap,
    delta: t.delta,
    steps: 1,
    sampleRate: 1,
    tolerance: TOLERANCE,
  }).noiseMultiplier;
  const sigma = Math.max(observer, affordable);
  const out: PublishedSigma = {
    sigma,
    observer,
    affordable,
    binding: affordable > observer ? 'floor' : 'observer',
    releaseCap,
    releaseEpsilon: releaseEpsilon(sigma, t.delta),
  };
  known.set(key, out);
  return out;
}
