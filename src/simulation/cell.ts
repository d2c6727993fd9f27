import { CancelledError } from '../errors.js';
import type { FederatingAgent } from '../memoir/format/agents.js';
import { normBound } from '../council/norm-bound.js';
import type { UpdateToSubmit } from '../federation/council-client.js';
import { clipToNorm } from '../privacy/clip.js';
import { buildRelease } from '../privacy/release.js';
import { mulberry32 } from '../runtime/seeded-random.js';
import { tensorFromJson } from '../tensor/json.js';
import type { NamedTensor } from '../tensor/tensor.js';
import { headOf, loraToTensors, tensorsToLora } from '../train/adapter-layout.js';
import type { BaseModel } from '../train/base-model.js';
import { hashString } from '../train/encoder/hashed-ngrams.js';
import type { Example } from '../train/examples/types.js';
import type { Features } from '../train/features.js';
import { loraSize, loraWeights, type LoraDims, type LoraWeights } from '../train/lora.js';
import { DEFAULT_SETTINGS, train, type TrainSettings } from '../train/trainer.js';
import { capNorm, craftUpdate } from './attacks.js';
import { layoutsFor, type CouncilPort, type CouncilSetup } from './council-port.js';
import { cellKey, measuresPersonal, type Cell, type Experiment } from './experiment.js';
import type { AppliedAdapter, Evaluator } from './evaluate.js';
import { craftFor, personalFor, type SimForge } from './forges.js';
import { seededSampler, sigmaFor } from './sim-privacy.js';

/**
 * One cell of the grid: R real council rounds. Each round every living forge trains each agent's
 * council adapter with the real trainer from the current global adapter, on its council view
 * (or its label-flipped or random-split view), and releases the delta through the real privacy
 * code (clip to S, Gaussian noise σ·S); Byzantine forges send what their attack crafts instead.
 * The council (in-process or over HTTP) aggregates with the cell's strategy, scores trust and
 * exiles. After every round the global council adapter is measured on held-out craft pairs;
 * in the clean reference cells each honest forge finally trains its bond adapters (on top of the
 * council adapter, and alone) and is measured on its personal preferences.
 *
 * The council is configured as a real one must be: the adapter layouts of the base the forges
 * train on, and the cell's privacy policy (S, and σ for the cell's ε), which every forge reads from
 * the round status and follows — as `federate round` does. Round 1 starts from the council's
 * round-0 global, the public PEFT initialisation it publishes (src/council/public-init.ts); as in
 * `federate round` (protocol v2) every update, round 1's included, is trained − the global it
 * trained from, clipped as a whole to S, and the council adds the aggregate back onto that global.
 */

export interface AgentResult {
  /** Council quality (held-out craft pairwise accuracy of the global council adapter) after each round. */
  curve: number[];
  council: number;
  personal: PersonalResult | null;
}

/** Held-out accuracy of one adapter set on a player's preferences: personal, craft, and all of them. */
export interface Quality {
  personal: number;
  craft: number;
  all: number;
}

export interface PersonalResult {
  /** Means over honest forges (each measured on its own player's preferences). */
  bondCouncil: Quality;
  councilOnly: Quality;
  bondOnly: Quality;
  forges: number;
}

export interface ExileEvent {
  forge: string;
  round: number;
  byzantine: boolean;
}

export interface CellResult {
  key: string;
  cell: Cell;
  sigma: number;
  agents: Partial<Record<FederatingAgent, AgentResult>>;
  /** Mean council quality over the measured agents, and its round-by-round curve. */
  council: number;
  curve: number[];
  personal: PersonalResult | null;
  exiles: ExileEvent[];
  falseExiles: number;
  forgeRounds: number;
}

/** Everything cells of one seed share (built once per seed). */
export interface SeedContext {
  x: Experiment;
  seed: number;
  base: BaseModel;
  fingerprint: string;
  encode: (text: string) => Features;
  evaluator: Evaluator;
  forges: SimForge[];
  /** Trainings that do not depend on the cell: round 1 from the council's public init, bonds trained alone. */
  memo: Map<string, LoraWeights | null>;
}

export interface CellHooks {
  signal?: AbortSignal;
  /** After each forge's round (forge-rounds done in this cell). */
  onForgeRound?: (done: number) => void;
  port: (setup: CouncilSetup) => Promise<CouncilPort>;
  dataDir: string;
}

function dimsOf(base: BaseModel, agent: FederatingAgent, rank: number): LoraDims {
  return { inDim: base.inDim, hidden: base.hidden, out: base.headOut(headOf(agent)), rank };
}

function councilSettings(x: Experiment, seed: number, round: number): TrainSettings {
  return { ...DEFAULT_SETTINGS, epochs: x.localEpochs, patience: x.localEpochs, seed: seed * 100 + round };
}

function sub(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = (a[i] as number) - (b[i] as number);
  return out;
}

function checkStop(signal?: AbortSignal): void {
  if (signal?.aborted) throw new CancelledError('simulation cancelled');
}

export async function runCell(sc: SeedContext, cell: Cell, hooks: CellHooks): Promise<CellResult> {
  const { x, base, forges, evaluator } = sc;
  const spec = base.spec;
  const attacking = cell.attack !== 'none';
  const settings0 = councilSettings(x, sc.seed, 1);
  const port = await hooks.port({
    strategy: cell.strategy,
    byzantine: x.byzantine,
    forges: forges.map((f) => f.name),
    baseFingerprint: sc.fingerprint,
    layouts: layoutsFor(spec, x.agents, settings0.rank),
    privacy: { clipNorm: x.clipNorm, noiseMultiplier: sigmaFor(cell.epsilon, x.rounds, x.delta) },
    dataDir: hooks.dataDir,
  });
  let sigma = NaN;
  const curves = new Map<FederatingAgent, number[]>(x.agents.map((a) => [a, []]));
  let forgeRounds = 0;
  // Every agent's round-0 global: the public initialisation the council publishes.
  const globals = new Map<FederatingAgent, LoraWeights>();
  for (const a of x.agents) {
    const g = await port.global(a);
    if (!g) throw new Error(`the council published no ${a} adapter to start from`);
    globals.set(a, tensorsToLora(spec, a, settings0.rank, g));
  }
  const shouldStop = (): boolean => hooks.signal?.aborted === true;
  /** The update a forge releases (before clipping): trained − the global it trained from (zero when it could not train). */
  const trainCouncil = (f: SimForge, agent: FederatingAgent, examples: Example[], start: LoraWeights, round: number, variant: string): Float64Array => {
    const memoKey = round === 1 ? `r1|${f.index}|${agent}|${variant}` : null;
    let lora: LoraWeights | null | undefined = memoKey ? sc.memo.get(memoKey) : undefined;
    if (lora === undefined) {
      const out = train(base, sc.encode, { agent, kind: 'council', examples, start, frozen: [], settings: councilSettings(x, sc.seed, round) }, { shouldStop });
      checkStop(hooks.signal);
      lora = out.status === 'trained' ? out.lora : null;
      if (memoKey) sc.memo.set(memoKey, lora);
    }
    return lora ? sub(lora.all, start.all) : new Float64Array(start.all.length);
  };
  try {
    for (let r = 1; r <= x.rounds; r++) {
      checkStop(hooks.signal);
      const round = await port.currentRound();
      // Every forge follows the privacy policy the council publishes for the round.
      const policy = await port.policy(round);
      const S = policy.clipNorm;
      sigma = policy.noiseMultiplier;
      const exiled = await port.exiles();
      const living = forges.filter((f) => !exiled.has(f.index));
      const bodies = new Map<number, { agent: FederatingAgent; body: UpdateToSubmit }[]>(living.map((f) => [f.index, []]));
      for (const agent of x.agents) {
        const start = globals.get(agent) as LoraWeights;
        const dims = dimsOf(base, agent, start.rank);
        const bound = normBound(S, sigma, loraSize(dims), policy.tailMargin);
        const toBody = (tensors: NamedTensor[]): UpdateToSubmit => ({ baseFingerprint: sc.fingerprint, clipNorm: S, noiseMultiplier: sigma, tensors });
        const asTensors = (flat: Float64Array): NamedTensor[] => loraToTensors(spec, agent, loraWeights(dims, flat));
        // Honest forges (and label-flipping ones, which behave honestly on poisoned data).
        const honestClipped: Float64Array[] = [];
        for (const f of living) {
          const flips = f.byzantine && cell.attack === 'label-flip';
          if (f.byzantine && attacking && !flips) continue;
          const examples = (flips ? f.flipped : cell.split === 'random' ? f.randomCouncil : f.council).get(agent) ?? [];
          const update = trainCouncil(f, agent, examples, start, r, flips ? 'flipped' : cell.split);
          if (!f.byzantine) honestClipped.push(capNorm(update, S));
          let released: NamedTensor[];
          if (sigma > 0) {
            const sampler = seededSampler(`${cellKey(cell)}|${f.name}|${r}|${agent}`);
            released = buildRelease({ round: `sim-${r}`, agent, baseFingerprint: sc.fingerprint, delta: asTensors(update), clipNorm: S, noiseMultiplier: sigma, sampler }).release.tensors.map(tensorFromJson);
          } else released = clipToNorm(asTensors(update), S).tensors;
          bodies.get(f.index)?.push({ agent, body: toBody(released) });
          hooks.onForgeRound?.(++forgeRounds);
        }
        // Byzantine forges with a crafted update.
        const crafted = cell.attack === 'none' || cell.attack === 'label-flip' ? null : cell.attack;
        if (crafted) {
          const normal = mulberry32(hashString(`${cellKey(cell)}|${r}|${agent}|attack`));
          const gauss = (): number => {
            const u = Math.max(normal(), 1e-12);
            return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * normal());
          };
          for (const f of living.filter((g) => g.byzantine)) {
            const own = cell.attack === 'sign-flip' ? trainCouncil(f, agent, f.council.get(agent) ?? [], start, r, cell.split) : null;
            const poisoned = cell.attack === 'scale' ? trainCouncil(f, agent, f.flipped.get(agent) ?? [], start, r, 'flipped') : null;
            const v = craftUpdate({ attack: crafted, own, poisoned, honest: honestClipped, forges: x.forges, byzantine: x.byzantine, clipNorm: S, bound, normal: gauss }, start.all.length);
            bodies.get(f.index)?.push({ agent, body: toBody(asTensors(v)) });
            hooks.onForgeRound?.(++forgeRounds);
          }
        }
      }
      for (const f of living) {
        for (const { agent, body } of bodies.get(f.index) ?? []) await port.submit(f.index, round, agent, body);
        await port.seal(f.index, round);
      }
      await port.finishRound(round);
      for (const agent of x.agents) {
        const g = await port.global(agent);
        if (g) globals.set(agent, tensorsToLora(spec, agent, (globals.get(agent) as LoraWeights).rank, g));
        const craft = craftFor(agent).map((p) => evaluator.probe(p, agent));
        const q = craft.length ? craft.reduce((s, p) => s + evaluator.accuracy(p, [{ lora: globals.get(agent) as LoraWeights, alpha: settings0.alpha }]), 0) / craft.length : NaN;
        curves.get(agent)?.push(q);
      }
    }
    const exiled = await port.exiles();
    const exiles: ExileEvent[] = [...exiled].map(([i, round]) => ({ forge: (forges[i] as SimForge).name, round, byzantine: (forges[i] as SimForge).byzantine })).sort((a, b) => a.round - b.round || a.forge.localeCompare(b.forge));
    const agents: CellResult['agents'] = {};
    for (const agent of x.agents) {
      const curve = curves.get(agent) ?? [];
      const personal = measuresPersonal(x, cell) ? personalQuality(sc, agent, globals.get(agent) as LoraWeights, settings0.alpha, hooks.signal) : null;
      agents[agent] = { curve, council: curve[curve.length - 1] ?? NaN, personal };
    }
    const measured = x.agents.map((a) => agents[a] as AgentResult).filter((a) => Number.isFinite(a.council));
    const curve = Array.from({ length: x.rounds }, (_, i) => meanOf(measured.map((a) => a.curve[i] ?? NaN)));
    const personals = x.agents.map((a) => agents[a]?.personal).filter((p): p is PersonalResult => p !== null && p !== undefined && p.forges > 0);
    return {
      key: cellKey(cell),
      cell,
      sigma,
      agents,
      council: meanOf(measured.map((a) => a.council)),
      curve,
      personal: personals.length
        ? { bondCouncil: meanQuality(personals.map((p) => p.bondCouncil)), councilOnly: meanQuality(personals.map((p) => p.councilOnly)), bondOnly: meanQuality(personals.map((p) => p.bondOnly)), forges: Math.max(...personals.map((p) => p.forges)) }
        : null,
      exiles,
      falseExiles: exiles.filter((e) => !e.byzantine).length,
      forgeRounds,
    };
  } finally {
    await port.close();
  }
}

export function meanOf(xs: readonly number[]): number {
  const ok = xs.filter(Number.isFinite);
  return ok.length ? ok.reduce((a, b) => a + b, 0) / ok.length : NaN;
}

/** Each honest forge trains its bond adapter over the council adapter and alone; held-out quality on its player's preferences. */
function personalQuality(sc: SeedContext, agent: FederatingAgent, council: LoraWeights, alpha: number, signal?: AbortSignal): PersonalResult {
  const { base, evaluator } = sc;
  const settings: TrainSettings = { ...DEFAULT_SETTINGS, seed: sc.seed };
  const rows: { both: Quality; cOnly: Quality; bOnly: Quality }[] = [];
  const craft = craftFor(agent).map((p) => evaluator.probe(p, agent));
  const stop = (): boolean => signal?.aborted === true;
  for (const f of sc.forges) {
    if (f.byzantine) continue;
    const prefs = personalFor(f.profile, agent).map((p) => evaluator.probe(p, agent));
    if (prefs.length === 0) continue;
    const examples = f.bond.get(agent) ?? [];
    const onTop = train(base, sc.encode, { agent, kind: 'bond', examples, frozen: [{ lora: council, alpha }], settings }, { shouldStop: stop });
    checkStop(signal);
    const aloneKey = `bond|${f.index}|${agent}`;
    let alone = sc.memo.get(aloneKey);
    if (alone === undefined) {
      const out = train(base, sc.encode, { agent, kind: 'bond', examples, frozen: [], settings }, { shouldStop: stop });
      checkStop(signal);
      alone = out.status === 'trained' ? out.lora : null;
      sc.memo.set(aloneKey, alone);
    }
    const c = { lora: council, alpha };
    const quality = (adapters: AppliedAdapter[]): Quality => {
      const p = prefs.map((x) => evaluator.accuracy(x, adapters));
      const k = craft.map((x) => evaluator.accuracy(x, adapters));
      return { personal: meanOf(p), craft: meanOf(k), all: meanOf([...p, ...k]) };
    };
    rows.push({
      both: quality(onTop.status === 'trained' ? [c, { lora: onTop.lora, alpha: settings.alpha }] : [c]),
      cOnly: quality([c]),
      bOnly: alone ? quality([{ lora: alone, alpha: settings.alpha }]) : { personal: 0.5, craft: 0.5, all: 0.5 },
    });
  }
  return { bondCouncil: meanQuality(rows.map((r) => r.both)), councilOnly: meanQuality(rows.map((r) => r.cOnly)), bondOnly: meanQuality(rows.map((r) => r.bOnly)), forges: rows.length };
}

export function meanQuality(qs: readonly Quality[]): Quality {
  return { personal: meanOf(qs.map((q) => q.personal)), craft: meanOf(qs.map((q) => q.craft)), all: meanOf(qs.map((q) => q.all)) };
}
