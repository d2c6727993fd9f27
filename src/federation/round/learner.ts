/**
 * The local step of a round, over the real trainer: an agent's council view (shareable entries,
 * council fields only), council training from the current global adapter (base + council, never
 * the bond), and held-out probes that say what an adapter prefers. The round (run-round.ts) sees
 * only this interface, so a simulation can share one trainer between many forges.
 */
import type { FederatingAgent } from '../../memoir/format/agents.js';
import { AXIS_INFO, AXES, type PreferenceId } from '../../memoir/sample/planted/catalogue.js';
import { heldOutPairs } from '../../memoir/sample/planted/held-out.js';
import type { NamedTensor, TensorSpec } from '../../tensor/tensor.js';
import { adapterLayout, headOf, loraToTensors, tensorsToLora } from '../../train/adapter-layout.js';
import { trainCouncil } from '../../train/council-training.js';
import { bondView, councilView, type ExampleSource } from '../../train/examples/views.js';
import { resolveLean, type CouncilValidation } from '../../train/applied-lean.js';
import type { AdapterStore } from '../../train/adapter-store.js';
import type { BaseModel } from '../../train/base-model.js';
import { chooseLean } from '../../train/lean-choice.js';
import { heldOutExamples, judgeOn, scenesOf } from '../../train/validation.js';
import type { Example } from '../../train/examples/types.js';
import type { Features } from '../../train/features.js';
import { Inference } from '../../train/inference.js';
import type { LoraWeights } from '../../train/lora.js';
import type { TextEncoder } from '../../train/text-encoder.js';
import type { TrainerWorker } from '../../train/train-in-worker.js';
import type { EpochProgress, TrainSettings } from '../../train/trainer.js';

export interface ExampleCount {
  examples: number;
  scenes: number;
  /** Why the trainer would skip this agent (too few examples or scenes), or null. */
  tooLittle: string | null;
}

export type TrainedCouncil =
  | { status: 'trained'; tensors: NamedTensor[]; examples: number }
  | { status: 'skipped'; reason: string; examples: number };

/**
 * What an adapter prefers on held-out data: for a planted axis, the share of n fresh pairs
 * (`heldOutPairs`, words never seen in training) it ranks toward the axis's first pole (the craft,
 * on craft axes) — 0.5 is no preference; for Hephaestus, routing accuracy on the forge's own
 * council routes.
 */
export interface Probe {
  preference: string;
  value: number;
  n: number;
}

export interface CouncilLearner {
  /** The base model's fingerprint (what the council must accept). */
  readonly fingerprint: string;
  readonly rank: number;
  readonly alpha: number;
  /** The agent's adapter tensors, names and shapes (PEFT layout). */
  layout(agent: FederatingAgent): TensorSpec[];
  /** What the agent's council view holds (no training). */
  count(agent: FederatingAgent): ExampleCount;
  /** Trains the agent's council adapter on its council view from `start`; returns the trained adapter. */
  train(
    agent: FederatingAgent,
    start: readonly NamedTensor[],
    onProgress?: (p: EpochProgress) => void,
  ): Promise<TrainedCouncil>;
  /** What an adapter prefers on held-out probes (higher is better for every probe). */
  probe(agent: FederatingAgent, adapter: readonly NamedTensor[]): Promise<Probe[]>;
  /** The same probes on what this player applies now (bond, and the council as far as it is applied); empty when nothing is. */
  probeYours?(agent: FederatingAgent): Promise<Probe[]>;
  /**
   * What a council adapter that came home does for this player, on their held-out scenes (private
   * entries included: the measure never leaves the forge), and the lean it is applied at. Call it
   * before the new version is stored (`before` measures the current one). Null: nothing to measure.
   */
  validate?(agent: FederatingAgent, adapter: readonly NamedTensor[]): Promise<CouncilValidation | null>;
}

const PROBE_SEED = 0x70726f62; // "prob"
const PROBE_PAIRS = 96;

/** `worker` is asked for on the first training only (a dry run starts no thread). */
export function trainerLearner(p: {
  encoder: TextEncoder;
  worker: () => TrainerWorker;
  source: ExampleSource;
  settings: TrainSettings;
  store?: AdapterStore;
}): CouncilLearner {
  const { encoder, settings } = p;
  const spec = encoder.spec;
  const views = new Map<FederatingAgent, Example[]>();
  const examplesOf = (agent: FederatingAgent): Example[] => {
    let v = views.get(agent);
    if (!v) {
      v = councilView(p.source, agent).examples;
      views.set(agent, v);
    }
    return v;
  };
  const toLora = (agent: FederatingAgent, tensors: readonly NamedTensor[]): LoraWeights =>
    tensorsToLora(spec, agent, settings.rank, tensors);

  return {
    fingerprint: encoder.fingerprint,
    rank: settings.rank,
    alpha: settings.alpha,
    layout: (agent) => adapterLayout(spec, agent, settings.rank),
    count(agent) {
      const ex = examplesOf(agent);
      const scenes = new Set(ex.map((e) => e.scene)).size;
      const tooLittle =
        ex.length < settings.minExamples
          ? `${ex.length} council example${ex.length === 1 ? '' : 's'} (needs at least ${settings.minExamples})`
          : scenes < 3
            ? `${ex.length} examples in ${scenes} scene${scenes === 1 ? '' : 's'} (needs three)`
            : null;
      return { examples: ex.length, scenes, tooLittle };
    },
    async train(agent, start, onProgress) {
      const examples = examplesOf(agent);
      const embedded = await encoder.embedded(textsOf(examples));
      const r = await trainCouncil({
        base: encoder.base,
        agent,
        examples,
        start: toLora(agent, start),
        settings,
        worker: p.worker(),
        embedded,
        ...(onProgress ? { onProgress } : {}),
      });
      if (r.status === 'skipped') return { status: 'skipped', reason: r.reason, examples: r.examples };
      return { status: 'trained', tensors: loraToTensors(spec, agent, r.lora), examples: examples.length };
    },
    probe: (agent, adapter) =>
      probeWith(
        new Inference({
          agent,
          head: headOf(agent),
          base: encoder.base,
          council: { lora: toLora(agent, adapter), alpha: settings.alpha, version: 0 },
          bond: null,
        }),
        1,
      ),
    async probeYours(agent) {
      const now = p.store ? appliedNow(p.store, encoder.base, agent) : null;
      return now ? probeWith(now.inference, now.lean) : [];
    },
    async validate(agent, adapter) {
      if (!p.store) return null;
      const held = heldOutExamples(bondView(p.source, agent).examples, settings);
      if (held.length === 0) return null;
      const now = appliedNow(p.store, encoder.base, agent);
      const bond = now?.inference.model.bond ?? null;
      const inf = new Inference({
        agent,
        head: headOf(agent),
        base: encoder.base,
        council: { lora: toLora(agent, adapter), alpha: settings.alpha, version: 0 },
        bond,
      });
      const encode = (t: readonly string[], prompt: string | null): Promise<Features[]> => encoder.encode(t, prompt);
      const choice = chooseLean(held, await judgeOn(inf, encode, held));
      let before: number | null = null;
      if (now) {
        // What was applied before, per example at the lean its task type had.
        const judge = await judgeOn(now.inference, encode, held);
        const byLean = new Map<number, ArrayLike<boolean>>();
        let right = 0;
        held.forEach((e, i) => {
          const lean = now.leanFor(e.taskType);
          if (!byLean.has(lean)) byLean.set(lean, judge(lean));
          if ((byLean.get(lean) as ArrayLike<boolean>)[i]) right++;
        });
        before = right / held.length;
      }
      const passed =
        choice.overall.lean > 0 || Object.values(choice.byTaskType).some((d) => d.reason === 'better' && d.lean > 0);
      return {
        bond_version: bond?.version ?? null,
        scenes: scenesOf(held),
        examples: held.length,
        before,
        choice,
        passed,
      };
    },
  };

  /** Probes of a model at a lean (see Probe). */
  async function probeWith(inf: Inference, lean: number): Promise<Probe[]> {
    const agent = inf.model.agent as FederatingAgent;
    const out: Probe[] = [];
    if (headOf(agent) === 'route') {
      const routes = examplesOf(agent).filter((e): e is Example & { kind: 'route' } => e.kind === 'route');
      if (routes.length > 0) {
        const feats = await encoder.encode(routes.map((r) => r.text));
        let right = 0;
        routes.forEach((r, i) => {
          if (inf.route(feats[i] as Features, lean)[0]?.agent === r.label) right++;
        });
        out.push({ preference: 'routing', value: right / routes.length, n: routes.length });
      }
      return out;
    }
    for (const axis of AXES) {
      const info = AXIS_INFO[axis];
      if (!info.agents.includes(agent)) continue;
      // One probe per axis: the share of pairs ranked toward its first pole (the craft, on craft axes).
      const pairs = heldOutPairs(info.poles[0] as PreferenceId, { seed: PROBE_SEED, n: PROBE_PAIRS }).filter(
        (x) => x.agent === agent,
      );
      if (pairs.length === 0) continue;
      const feats = await encoder.encode(pairs.flatMap((x) => [x.preferred, x.dispreferred]));
      const y = inf.outputs(feats, lean);
      let toward = 0;
      for (let i = 0; i < pairs.length; i++)
        if (((y[2 * i] as Float64Array)[0] as number) > ((y[2 * i + 1] as Float64Array)[0] as number)) toward++;
      out.push({ preference: info.poles[0], value: toward / pairs.length, n: pairs.length });
    }
    return out;
  }
}

/** What an agent applies now when no lean is set: its current adapters and the lean per task type. */
function appliedNow(
  store: AdapterStore,
  base: BaseModel,
  agent: FederatingAgent,
): { inference: Inference; lean: number; leanFor: (taskType: string | null) => number } | null {
  const bond = store.loadCurrent(agent, 'bond');
  const council = store.loadCurrent(agent, 'council');
  if (!bond && !council) return null;
  const rows = {
    bond: bond ? { version: bond.row.version, metrics: bond.row.metrics } : null,
    council: council ? { version: council.row.version, metrics: council.row.metrics } : null,
  };
  const leanFor = (taskType: string | null): number => resolveLean({ use: 'both', taskType, ...rows }).lean;
  const inference = new Inference({
    agent,
    head: headOf(agent),
    base,
    bond: bond ? { lora: bond.lora, alpha: bond.config.lora_alpha, version: bond.row.version } : null,
    council: council ? { lora: council.lora, alpha: council.config.lora_alpha, version: council.row.version } : null,
  });
  return { inference, lean: leanFor(null), leanFor };
}

function textsOf(examples: readonly Example[]): string[] {
  const out: string[] = [];
  for (const e of examples) {
    if (e.kind === 'pair') out.push(e.chosen, e.rejected);
    else out.push(e.text);
  }
  return out;
}
