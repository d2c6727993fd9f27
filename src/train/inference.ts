import type { Agent } from '../memoir/format/agents.js';
import type { BaseModel, HeadName } from './base-model.js';
import type { Features } from './features.js';
import { mixing } from './learn-config.js';
import type { LoraWeights } from './lora.js';
import { applied, Network, type Applied } from './network.js';
import { softmax } from './objectives.js';

/**
 * Inference with an agent's adapters: base + λ_council·council + λ_bond·bond, the λ from the lean
 * (learn-config.ts). Pure: the caller loads the adapters and encodes the texts.
 */
export interface LoadedLora {
  lora: LoraWeights;
  alpha: number;
  version: number;
}

export interface AgentModel {
  agent: Agent;
  head: HeadName;
  base: BaseModel;
  council: LoadedLora | null;
  bond: LoadedLora | null;
}

export interface Ranked {
  /** Position in the input. */
  index: number;
  score: number;
  /** Softmax of the scores over the candidates: how likely this one is the preferred one. */
  p: number;
}

export class Inference {
  private readonly net: Network;
  private readonly z: Float64Array;

  constructor(readonly model: AgentModel) {
    this.net = new Network(model.base, model.head);
    this.z = new Float64Array(model.base.hidden);
  }

  private adapters(lean: number): Applied[] {
    const w = mixing(lean);
    const out: Applied[] = [];
    if (this.model.council && w.council > 0)
      out.push(applied(this.model.council.lora, this.model.council.alpha, w.council));
    if (this.model.bond && w.bond > 0) out.push(applied(this.model.bond.lora, this.model.bond.alpha, w.bond));
    return out;
  }

  /** Raw outputs for each text (one value for a scoring head, one per specialist for routing). */
  outputs(features: readonly Features[], lean: number): Float64Array[] {
    const ad = this.adapters(lean);
    const ws = this.net.workspace(ad);
    return features.map((f) => {
      this.model.base.project(f, this.z);
      return Float64Array.from(this.net.forward(f, this.z, ad, ws));
    });
  }

  /** Candidates ranked best first. */
  rank(features: readonly Features[], lean: number): Ranked[] {
    const scores = this.outputs(features, lean).map((y) => y[0] as number);
    const p = softmax(scores);
    return scores
      .map((score, index) => ({ index, score, p: p[index] as number }))
      .sort((a, b) => b.score - a.score || a.index - b.index);
  }

  /**
   * The routing head's distribution over specialists, most likely first. `prior` (the routing
   * prior's logits, route-prior/) is added to the head's: the head was trained on top of it.
   */
  route(features: Features, lean: number, prior?: ArrayLike<number>): { agent: Agent; p: number; logit: number }[] {
    const y = this.outputs([features], lean)[0] as Float64Array;
    if (prior) for (let o = 0; o < y.length; o++) y[o] = (y[o] as number) + (prior[o] as number);
    const p = softmax(y);
    return this.model.base.spec.specialists
      .map((agent, i) => ({ agent, p: p[i] as number, logit: y[i] as number }))
      .sort((a, b) => b.p - a.p);
  }
}
