import type { Example } from '../train/examples/types.js';
import type { Attack } from './experiment.js';

/**
 * The attacks, as pure functions: on a forge's data (label flipping) or on the flat update a
 * Byzantine forge sends (the others). The adversary is omniscient, as in the robustness
 * literature: it sees this round's honest updates (before noise) and the council's norm bound,
 * and its attackers may collude. Every crafted update stays within the norm bound the council
 * enforces for the declared privacy settings (it would be refused otherwise: that check is a
 * defence the council really has, and the simulation measures it, not around it).
 */

export interface CraftInput {
  attack: Exclude<Attack, 'none' | 'label-flip'>;
  /** The attacker's honest update (trained on its own data, before clipping). */
  own: Float64Array | null;
  /** Its update trained on label-flipped data (the model it would like to install). */
  poisoned: Float64Array | null;
  /** This round's honest updates as released before noise (clipped to S). */
  honest: readonly Float64Array[];
  forges: number;
  byzantine: number;
  clipNorm: number;
  /** The largest norm the council accepts for the declared privacy settings. */
  bound: number;
  /** Seeded standard normal deviates (attack noise protects nothing). */
  normal: () => number;
}

export function norm(v: ArrayLike<number>): number {
  let s = 0;
  for (let i = 0; i < v.length; i++) s += (v[i] as number) * (v[i] as number);
  return Math.sqrt(s);
}

/** v scaled down (a copy) so that ‖v‖ ≤ max. */
export function capNorm(v: Float64Array, max: number): Float64Array {
  const n = norm(v);
  const out = Float64Array.from(v);
  if (n > max && n > 0) {
    const k = max / n;
    for (let i = 0; i < out.length; i++) out[i] = (out[i] as number) * k;
  }
  return out;
}

function scaled(v: ArrayLike<number>, k: number): Float64Array {
  const out = new Float64Array(v.length);
  for (let i = 0; i < v.length; i++) out[i] = (v[i] as number) * k;
  return out;
}

export function mean(vs: readonly ArrayLike<number>[], dim: number): Float64Array {
  const out = new Float64Array(dim);
  for (const v of vs) for (let i = 0; i < dim; i++) out[i] = (out[i] as number) + (v[i] as number);
  return vs.length ? scaled(out, 1 / vs.length) : out;
}

/** Float32 rounding can push a vector at the bound a hair over it: stay just inside. */
const INSIDE = 1 - 1e-5;

/**
 * The update a Byzantine forge sends this round. `collude` and `ipm` give every attacker the same
 * vector (that is the collusion).
 */
export function craftUpdate(x: CraftInput, dim: number): Float64Array {
  const bound = x.bound * INSIDE;
  switch (x.attack) {
    case 'sign-flip':
      return scaled(capNorm(need(x.own, 'sign-flip'), x.clipNorm * INSIDE), -1);
    case 'scale':
      // Model replacement: boost the poisoned update ×N so it survives averaging.
      return capNorm(scaled(need(x.poisoned, 'scale'), x.forges), bound);
    case 'noise': {
      const v = new Float64Array(dim);
      for (let i = 0; i < dim; i++) v[i] = x.normal();
      return scaled(v, bound / Math.max(norm(v), 1e-300));
    }
    case 'collude':
      // Identical vectors sit at distance 0 from each other: what Krum's scores reward.
      return withNorm(scaled(mean(x.honest, dim), -1), x.clipNorm * INSIDE);
    case 'ipm': {
      // −k·μ with k = 2(N − f)/f: the plain mean becomes −(N − f)/N · μ, the honest direction reversed.
      const honest = x.forges - x.byzantine;
      const k = (2 * honest) / Math.max(1, x.byzantine);
      return capNorm(scaled(mean(x.honest, dim), -k), bound);
    }
  }
}

/** v rescaled (a copy) to norm exactly n (zero stays zero). */
export function withNorm(v: Float64Array, n: number): Float64Array {
  const m = norm(v);
  return m > 0 ? scaled(v, n / m) : Float64Array.from(v);
}

function need(v: Float64Array | null, attack: string): Float64Array {
  if (!v) throw new Error(`the ${attack} attack needs its own trained update`);
  return v;
}

/**
 * Label flipping (style poisoning): the same entries, every label reversed — pairs swap sides,
 * accept/reject and pass/fail flip, graded targets become 1 − t, a routing label moves to the next
 * specialist. The forge then behaves honestly (clips, adds noise) with this data.
 */
export function flipLabels(examples: readonly Example[], specialists: readonly string[]): Example[] {
  return examples.map((e) => {
    switch (e.kind) {
      case 'pair':
        return { ...e, chosen: e.rejected, rejected: e.chosen };
      case 'binary':
        return { ...e, label: e.label === 1 ? 0 : 1 };
      case 'graded':
        return { ...e, target: 1 - e.target };
      case 'route': {
        const i = specialists.indexOf(e.label);
        return { ...e, label: (specialists[(i + 1) % specialists.length] ?? e.label) as typeof e.label };
      }
    }
  });
}
