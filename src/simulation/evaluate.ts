import type { Agent } from '../memoir/format/agents.js';
import { heldOutPairs } from '../memoir/sample/planted/held-out.js';
import type { PreferenceId } from '../memoir/sample/planted/catalogue.js';
import type { BaseModel } from '../train/base-model.js';
import { headOf } from '../train/adapter-layout.js';
import type { Features } from '../train/features.js';
import type { LoraWeights } from '../train/lora.js';
import { applied, Network, type Applied } from '../train/network.js';
import { confusionOf, type Confusion } from './slop-f1.js';

/**
 * Held-out evaluation: pairwise accuracy of an agent's adapters on fresh pairs of a planted
 * preference, rendered from the held-out vocabulary (words no simulated memoir contains), so a
 * model scores them right only if it learned the form. Texts are encoded and projected through
 * the frozen layer once per experiment; each evaluation is then a forward pass per text.
 * A tie counts one half.
 */
interface Text {
  f: Features;
  z0: Float64Array;
}

export interface Probe {
  preference: PreferenceId;
  agent: Agent;
  pairs: { preferred: Text; dispreferred: Text }[];
}

/** Texts with a truth (a detection task, e.g. slop), for one agent's binary calls. */
export interface LabelledProbe {
  agent: Agent;
  items: { text: Text; positive: boolean }[];
}

export interface AppliedAdapter {
  lora: LoraWeights;
  alpha: number;
}

export class Evaluator {
  private readonly probes = new Map<string, Probe>();
  private readonly nets = new Map<string, Network>();
  private readonly labelledProbes = new Map<string, LabelledProbe>();

  constructor(
    private readonly base: BaseModel,
    private readonly encode: (text: string) => Features,
    private readonly n: number,
    private readonly seed: number,
  ) {}

  private text(t: string): Text {
    const f = this.encode(t);
    const z0 = new Float64Array(this.base.hidden);
    this.base.project(f, z0);
    return { f, z0 };
  }

  /** The probe of one preference for one agent (n pairs of that agent's output), built once. */
  probe(preference: PreferenceId, agent: Agent): Probe {
    const key = `${preference}|${agent}`;
    let p = this.probes.get(key);
    if (!p) {
      // heldOutPairs alternates over the axis's agents: ask for enough to keep n of this agent's.
      const pairs: Probe['pairs'] = [];
      for (let want = this.n; pairs.length < this.n && want <= this.n * 8; want *= 2) {
        pairs.length = 0;
        for (const x of heldOutPairs(preference, { seed: this.seed, n: want })) {
          if (x.agent === agent && pairs.length < this.n)
            pairs.push({ preferred: this.text(x.preferred), dispreferred: this.text(x.dispreferred) });
        }
      }
      p = { preference, agent, pairs };
      this.probes.set(key, p);
    }
    return p;
  }

  private net(agent: Agent): Network {
    const head = headOf(agent);
    let n = this.nets.get(head);
    if (!n) {
      n = new Network(this.base, head);
      this.nets.set(head, n);
    }
    return n;
  }

  /** A labelled probe of an agent's binary calls, built once under `key`. */
  labelled(key: string, agent: Agent, make: () => { text: string; positive: boolean }[]): LabelledProbe {
    let p = this.labelledProbes.get(key);
    if (!p) {
      p = { agent, items: make().map((x) => ({ text: this.text(x.text), positive: x.positive })) };
      this.labelledProbes.set(key, p);
    }
    return p;
  }

  /** The adapters' calls on a labelled probe (positive where the score is above 0, as validation reads a binary head) against its truth. */
  confusion(probe: LabelledProbe, adapters: readonly AppliedAdapter[]): Confusion {
    const net = this.net(probe.agent);
    const ad: Applied[] = adapters.map((a) => applied(a.lora, a.alpha));
    const ws = net.workspace(ad);
    const called = probe.items.map(({ text }) => (net.forward(text.f, text.z0, ad, ws)[0] as number) > 0);
    return confusionOf(
      called,
      probe.items.map((x) => x.positive),
    );
  }

  /** Share of the probe's pairs the adapters (summed on the base, each at weight 1) order right. */
  accuracy(probe: Probe, adapters: readonly AppliedAdapter[]): number {
    if (probe.pairs.length === 0) return NaN;
    const net = this.net(probe.agent);
    const ad: Applied[] = adapters.map((a) => applied(a.lora, a.alpha));
    const ws = net.workspace(ad);
    let ok = 0;
    for (const { preferred, dispreferred } of probe.pairs) {
      const a = net.forward(preferred.f, preferred.z0, ad, ws)[0] as number;
      const b = net.forward(dispreferred.f, dispreferred.z0, ad, ws)[0] as number;
      ok += a > b ? 1 : a === b ? 0.5 : 0;
    }
    return ok / probe.pairs.length;
  }
}
