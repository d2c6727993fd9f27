import type { Agent } from '../memoir/format/agents.js';
import type { Layout } from '../tensor/layout.js';
import { headOf, tensorsToLora } from '../train/adapter-layout.js';
import { BaseModel } from '../train/base-model.js';
import { builtinBaseSpec, type BaseSpec } from '../train/base-spec.js';
import { inputEncoder } from '../train/encoder/inputs.js';
import type { Example } from '../train/examples/types.js';
import type { Features } from '../train/features.js';
import { BUILTIN_FINGERPRINT } from '../train/fingerprint.js';
import type { LoraWeights } from '../train/lora.js';
import { applied, Network } from '../train/network.js';
import { pairLoss } from '../train/objectives.js';
import { DEFAULT_SETTINGS } from '../train/trainer.js';

/**
 * The council's root set (FLTrust's idea, Cao et al. 2021): a small labelled set the operator
 * holds, drawn from the preferences the whole federation shares (a public sample memoir, read
 * through the council view). The council measures what each submitted update does to the
 * trainer's loss on it: the global adapter of the round, with and without the update added.
 * An honest forge, whatever its player's personal tastes, shares these preferences, so its
 * update does not make them markedly worse; an update that reverses them does (trust.ts,
 * `rootEvidence`). The updates themselves carry no such evidence: clipped, a reversed update
 * looks like an honest forge's with opposite tastes.
 *
 * The root set is scored on the built-in base (the base every forge of the simulation and a
 * default `kourai` install train on); adapters apply at the trainer's α.
 */
interface Text {
  f: Features;
  z0: Float64Array;
}

interface Pair {
  chosen: Text;
  rejected: Text;
  w: number;
}

/** The root set's pairs of one agent, as the adapters order them. */
export interface RootScore {
  /** The trainer's pair loss (weighted mean). */
  loss: number;
  /** Share of pairs ordered right (a tie counts one half). */
  accuracy: number;
  /** Weighted mean of y(chosen) − y(rejected). */
  margin: number;
}

/** Fewer root pairs than this for an agent: its updates are not judged by the root set. */
export const ROOT_MIN_PAIRS = 10;

export class RootSet {
  private readonly base: BaseModel;
  private readonly pairs = new Map<string, Pair[]>();
  private readonly nets = new Map<string, Network>();
  readonly alpha = DEFAULT_SETTINGS.alpha;

  /**
   * `examples`: the council view of the root memoir, per agent. Only its pairs count: a pair
   * differs in the preference it shows, while an accepted or rejected text's score also moves
   * with every personal taste a forge teaches.
   */
  constructor(
    examples: Readonly<Partial<Record<string, readonly Example[]>>>,
    readonly spec: BaseSpec = builtinBaseSpec(),
  ) {
    this.base = new BaseModel(spec);
    const encode = inputEncoder(spec);
    const text = (t: string): Text => {
      const f = encode(t, null);
      const z0 = new Float64Array(this.base.hidden);
      this.base.project(f, z0);
      return { f, z0 };
    };
    for (const [agent, list] of Object.entries(examples)) {
      const pairs = (list ?? []).flatMap((e) =>
        e.kind === 'pair' && headOf(agent as Agent) === 'score'
          ? [{ chosen: text(e.chosen), rejected: text(e.rejected), w: e.weight }]
          : [],
      );
      if (pairs.length >= ROOT_MIN_PAIRS) this.pairs.set(agent, pairs);
    }
  }

  /** Root pairs of the agent (0: the agent is not judged by the root set). */
  size(agent: string): number {
    return this.pairs.get(agent)?.length ?? 0;
  }

  private net(agent: string): Network {
    const head = headOf(agent as Agent);
    let n = this.nets.get(head);
    if (!n) {
      n = new Network(this.base, head);
      this.nets.set(head, n);
    }
    return n;
  }

  /** How `lora` orders the agent's root pairs. */
  score(agent: string, lora: LoraWeights): RootScore {
    const pairs = this.pairs.get(agent) ?? [];
    const net = this.net(agent);
    const ad = [applied(lora, this.alpha)];
    const ws = net.workspace(ad);
    const y = (t: Text): number => net.forward(t.f, t.z0, ad, ws)[0] as number;
    let loss = 0;
    let right = 0;
    let margin = 0;
    let weight = 0;
    for (const p of pairs) {
      const a = y(p.chosen);
      const b = y(p.rejected);
      loss += pairLoss(a, b, p.w).loss;
      margin += p.w * (a - b);
      weight += p.w;
      right += a > b ? 1 : a === b ? 0.5 : 0;
    }
    return { loss: loss / weight, accuracy: right / pairs.length, margin: margin / weight };
  }

  /**
   * What each update does to the root pairs, for flat vectors in the agent's council layout:
   * score(global + uₖ) − score(global), each field. A falling margin: the update orders the
   * shared preferences worse.
   */
  effects(
    agent: string,
    layout: Layout,
    global: ArrayLike<number>,
    updates: readonly ArrayLike<number>[],
  ): (RootScore | null)[] {
    const rank = (layout.tensors[0]?.shape[0] as number | undefined) ?? 0;
    // The layout's checks once (names, shapes), then one buffer refilled per update.
    const lora = tensorsToLora(
      this.spec,
      agent as Agent,
      rank,
      layout.tensors.map((t) => ({ name: t.name, shape: t.shape, data: new Float32Array(t.size) })),
    );
    const [denseA, denseB, headA, headB, directA, directB] = layout.tensors.map((t) => t.offset) as number[];
    const { inDim } = lora;
    const loraOf = (flat: ArrayLike<number>, add?: ArrayLike<number>): LoraWeights => {
      const at = (k: number): number => (flat[k] as number) + (add ? (add[k] as number) : 0);
      const untranspose = (from: number, At: Float64Array): void => {
        for (let i = 0; i < rank; i++) for (let j = 0; j < inDim; j++) At[j * rank + i] = at(from + i * inDim + j);
      };
      const copy = (from: number, to: Float64Array): void => {
        for (let k = 0; k < to.length; k++) to[k] = at(from + k);
      };
      untranspose(denseA as number, lora.denseAt);
      copy(denseB as number, lora.denseB);
      copy(headA as number, lora.headA);
      copy(headB as number, lora.headB);
      untranspose(directA as number, lora.directAt);
      copy(directB as number, lora.directB);
      for (let k = 0; k < lora.all.length; k++)
        if (!Number.isFinite(lora.all[k] as number)) throw new RangeError('not finite');
      return lora;
    };
    const before = this.score(agent, loraOf(global));
    return updates.map((u) => {
      let after: RootScore;
      try {
        after = this.score(agent, loraOf(global, u));
      } catch {
        return null; // a non-finite update: the distance score handles it
      }
      return {
        loss: after.loss - before.loss,
        accuracy: after.accuracy - before.accuracy,
        margin: after.margin - before.margin,
      };
    });
  }
}

/** Whether a council that accepts these bases can score a root set (only on the built-in base). */
export function rootSetBaseOk(fingerprints: readonly string[]): boolean {
  return fingerprints.length > 0 && fingerprints.every((f) => f === BUILTIN_FINGERPRINT);
}
