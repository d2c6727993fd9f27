import { CancelledError } from '../errors.js';
import type { FederatingAgent } from '../memoir/format/agents.js';
import { normBound } from '../council/norm-bound.js';
import type { UpdateToSubmit } from '../federation/council-client.js';
import { clipToNorm } from '../privacy/clip.js';
import type { GaussianSampler } from '../privacy/gaussian-noise.js';
import { epsilonFor } from '../privacy/rdp-accountant.js';
import { buildRelease } from '../privacy/release.js';
import { poissonCohort, sampleCohort } from '../protocol/cohort.js';
import { mulberry32 } from '../runtime/seeded-random.js';
import { tensorFromJson } from '../tensor/json.js';
import type { NamedTensor } from '../tensor/tensor.js';
import { headOf, loraToTensors, tensorsToLora } from '../train/adapter-layout.js';
import type { BaseModel } from '../train/base-model.js';
import { hashString } from '../train/encoder/hashed-ngrams.js';
import type { Example } from '../train/examples/types.js';
import type { Features } from '../train/features.js';
import { loraSize, loraWeights, type LoraDims, type LoraWeights } from '../train/lora.js';
import { LAMBDA_GRID } from '../train/linear-fit.js';
import { DEFAULT_SETTINGS, type TrainSettings } from '../train/trainer.js';
import { capNorm, craftUpdate, mean, norm } from './attacks.js';
import { layoutsFor, type CouncilPort, type CouncilSetup } from './council-port.js';
import {
  cellKey,
  cohortByzantine,
  measuresColdStart,
  measuresPersonal,
  samplingOf,
  type Cell,
  type Experiment,
} from './experiment.js';
import type { AidosResult } from './aidos.js';
import type { RootScore } from '../council/root-set.js';
import type { AppliedAdapter, Evaluator } from './evaluate.js';
import { craftFor, personalFor, type SimForge } from './forges.js';
import { ForgeLedgers } from './forge-ledger.js';
import { seededSampler } from './sim-privacy.js';
import type { TrainPool } from './train-pool.js';

/**
 * One cell of the grid: R real council rounds. Each round the council's cohort is sampled
 * (src/protocol/cohort.ts, the council's own function; exactly K forges, or Poisson at rate K/N
 * when the cell adds noise, as the accountant assumes); forges not sampled sit the round out and
 * release nothing. Every sampled forge trains each agent's council adapter with the real trainer
 * from the current global adapter, on its council view (or its label-flipped view, or all its
 * entries under a parameter-split control), and releases the delta through the privacy code
 * (clip to S, Gaussian noise σ·S, on the federated values only); Byzantine forges send what their
 * attack crafts instead.
 * The council (in-process or over HTTP) aggregates with the cell's strategy, scores trust and
 * exiles. After every round the global council adapter is measured on held-out craft pairs;
 * in the clean reference cells each honest forge finally trains its bond adapters (on top of the
 * council adapter, and alone) and is measured on its personal preferences.
 *
 * The council is configured as a real one must be: the adapter layouts of the base the forges
 * train on, and the cell's privacy policy (S, and σ for the cell's ε), which every forge reads from
 * the round status and follows — as `federate round` does. Round 1 starts from the council's
 * round-0 global, the public PEFT initialisation it publishes (src/protocol/public-init.ts); as in
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
  /** Means over the measured honest forges (each measured on its own player's preferences). */
  bondCouncil: Quality;
  councilOnly: Quality;
  bondOnly: Quality;
  forges: number;
}

/** Cold start: newcomers with `sessions` sessions, mean held-out quality of each adapter set. */
export interface ColdStartRow {
  sessions: number;
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

/**
 * The simulated round status: who was sampled (forge indices) and how many of them are Byzantine;
 * and the physics of the round's noise, for the first agent: the norm of the honest cohort's mean
 * update before noise (`signal`) against the expected norm of the noise in that mean (`noise`:
 * σS·√(d/K) when each of K forges adds σS, σS·√d/K when they add shares of it; d the federated values).
 */
export interface RoundRecord {
  round: number;
  cohort: number[];
  byzantine: number;
  /** Releases not made because the forge's own ledger could not afford them (summed over agents). */
  silent: number;
  signal: number;
  noise: number;
  /**
   * What each sampled forge's update (first agent) did to the council's root pairs (forge name →
   * change of pair loss, accuracy and mean margin; council-port.ts); absent when not recorded.
   */
  root?: Record<string, RootScore | null> | null;
}

/**
 * What the cell's noise guarantees, and what each forge spent. `observer`: ε toward anyone who sees
 * only the released council models and cannot predict the cohorts (amplified by sampling at rate q
 * over R rounds). `forgeLedger`: what the forge's own Whisper ledger charges, trusting no council
 * and so no amplification — one unsampled Gaussian release per round it actually took part in,
 * never past its lifetime budget (forge-ledger.ts).
 */
export interface PrivacyAccount {
  sigma: number;
  /** The noise multiplier each forge's own release carries (σ/√|C| under distributed noise). */
  releaseSigma: number;
  q: number;
  rounds: number;
  observerEpsilon: number;
  releases: { max: number; mean: number; never: number };
  /** The most ε any forge's own ledger charged: never past its lifetime budget (it sits out instead). */
  forgeLedgerEpsilon: number;
  /** Forges that sat out at least once because one more release would pass their lifetime ε. */
  limited: number;
  /** Federated values per agent (the shared part of the adapter). */
  sharedValues: number;
  /**
   * Where the council's σ came from (null: given, e.g. 0 at ε = ∞): the σ the observer's target
   * needs, the σ at which one release stays within a forge's privacy floor, and which one bound.
   */
  sigmaSource?: SigmaSource | null;
}

export interface SigmaSource {
  observer: number;
  floor: number;
  binding: 'observer' | 'floor';
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
  /** Cold start (the clean reference cell only; null elsewhere): per session count, the mean over agents. */
  coldStart: ColdStartRow[] | null;
  exiles: ExileEvent[];
  falseExiles: number;
  forgeRounds: number;
  rounds: RoundRecord[];
  privacy: PrivacyAccount;
  /** Aidos's slop-detection F1 (the cell that measures it, see `measuresAidos`; absent or null elsewhere). */
  aidos?: AidosResult | null;
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
  /** Players outside the federation with few sessions, for the cold-start measurement (empty when not measured). */
  newcomers: SimForge[];
  /**
   * Trainings that do not depend on the cell: round 1 from the council's public init, bonds trained
   * alone. Held as float32 (half the memory at a thousand forges); a memoised training is rounded
   * the same way when it is first used, so a cell's numbers do not depend on which cell ran first.
   */
  memo: Map<string, Float32Array | null>;
  pool: TrainPool;
  /** The councils' root memoir (a directory; null: councils judge no update by a root set). */
  rootMemoir: string | null;
}

export interface CellHooks {
  signal?: AbortSignal;
  /** After each forge's round (forge-rounds done in this cell). */
  onForgeRound?: (done: number) => void;
  port: (setup: CouncilSetup) => Promise<CouncilPort>;
  dataDir: string;
}

/** The clip norm of naive FedAvg: so large that nothing is clipped and nothing is refused. */
export const NAIVE_CLIP = 1e6;

export function dimsOf(base: BaseModel, agent: FederatingAgent, rank: number): LoraDims {
  return { inDim: base.inDim, hidden: base.hidden, out: base.headOut(headOf(agent)), rank };
}

/**
 * λ of the direct path in a council round: the value the trainer itself falls back to without
 * cross-validation (the middle of its grid). A forge's council round is a few epochs from the
 * council's adapter; cross-validating λ in every one of them was nine tenths of a round's cost.
 */
export const COUNCIL_L2 = LAMBDA_GRID[Math.floor(LAMBDA_GRID.length / 2)] as number;

export function councilSettings(x: Experiment, seed: number, round: number): TrainSettings {
  return {
    ...DEFAULT_SETTINGS,
    epochs: x.localEpochs,
    patience: x.localEpochs,
    seed: seed * 100 + round,
    l2: COUNCIL_L2,
  };
}

export function sub(a: Float64Array, b: Float64Array): Float64Array {
  const out = new Float64Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = (a[i] as number) - (b[i] as number);
  return out;
}

export function checkStop(signal?: AbortSignal): void {
  if (signal?.aborted) throw new CancelledError('simulation cancelled');
}

/**
 * Which of an adapter's flat values a cell federates (null: all of them). The layout is the
 * trainer's (lora.ts): dense Aᵀ, dense B, head A, head B, direct Aᵀ, direct B, one after the other.
 * `small` keeps the two input-side A factors (in × r each, nearly all the values) at the public
 * initialisation and federates the rest; `fedsa` federates the A factors, `param-random` a random
 * half of all values (the same half at every forge: the council must know what it averages).
 */
export function federatedMask(cell: Pick<Cell, 'split' | 'share'>, d: LoraDims, seed: number): Uint8Array | null {
  if (cell.split === 'semantic' && cell.share === 'full') return null;
  const n = loraSize(d);
  const sizes = {
    denseA: d.inDim * d.rank,
    denseB: d.hidden * d.rank,
    headA: d.rank * d.hidden,
    headB: d.out * d.rank,
    directA: d.inDim * d.rank,
    directB: d.out * d.rank,
  };
  const at: Record<keyof typeof sizes, [number, number]> = {} as Record<keyof typeof sizes, [number, number]>;
  let o = 0;
  for (const k of Object.keys(sizes) as (keyof typeof sizes)[]) {
    at[k] = [o, o + sizes[k]];
    o += sizes[k];
  }
  if (o !== n) throw new RangeError(`adapter layout of ${n} values, the mask knows ${o}`);
  const m = new Uint8Array(n);
  const share = (...parts: (keyof typeof sizes)[]): void => {
    for (const p of parts) m.fill(1, at[p][0], at[p][1]);
  };
  if (cell.split === 'semantic') share('denseB', 'headA', 'headB', 'directB');
  else if (cell.split === 'fedsa') share('denseA', 'headA', 'directA');
  else {
    const rand = mulberry32(hashString(`param-split|${seed}`));
    const idx = Array.from({ length: n }, (_, i) => i);
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [idx[i], idx[j]] = [idx[j] as number, idx[i] as number];
    }
    for (let i = 0; i < n >> 1; i++) m[idx[i] as number] = 1;
  }
  return m;
}

function countMask(m: Uint8Array | null, n: number): number {
  if (!m) return n;
  let c = 0;
  for (let i = 0; i < m.length; i++) c += m[i] as number;
  return c;
}

/** The cohort's sampling seed: the experiment seed alone, so every cell of a seed samples the same forges in the same round (paired comparisons). */
export function cohortSeed(seed: number): string {
  return `kourai-simulation-cohort/${seed}`;
}

/**
 * A round's cohort, drawn as the council draws it: from the forges not exiled, Poisson at rate
 * K/N where noise is added, else exactly K (`samplingOf`).
 */
export async function drawCohort(sc: SeedContext, cell: Cell, port: CouncilPort, round: number): Promise<SimForge[]> {
  const { x, forges } = sc;
  const exiled = await port.exiles();
  const living = forges.filter((_, i) => !exiled.has(i)).map((g) => g.name);
  const seed = cohortSeed(sc.seed);
  const chosen =
    samplingOf(x, cell.epsilon) === 'poisson'
      ? poissonCohort(living, { round, seed, rate: x.cohort / x.forges })
      : sampleCohort(living, { round, seed, size: Math.min(x.cohort, living.length) });
  const byName = new Map(forges.map((g) => [g.name, g]));
  return chosen.map((n) => byName.get(n) as SimForge);
}

/**
 * The privacy the council of a cell is set up with: clip only at ε = ∞; otherwise the cell's ε
 * over its rounds, from which the council derives the σ it publishes (sampled at K/N where
 * cohorts are Poisson; distributed noise: shares over the whole federation).
 */
export function cellPrivacy(
  x: Experiment,
  cell: Pick<Cell, 'epsilon' | 'noise'>,
  clipNorm: number,
): CouncilSetup['privacy'] {
  if (cell.epsilon === Infinity) return { clipNorm, noiseMultiplier: 0 };
  return {
    clipNorm,
    target: {
      epsilon: cell.epsilon,
      rounds: x.rounds,
      delta: x.delta,
      sampleRate: samplingOf(x, cell.epsilon) === 'poisson' ? x.cohort / x.forges : 1,
      noiseShares: cell.noise === 'distributed' ? x.forges : null,
    },
  };
}

export async function runCell(sc: SeedContext, cell: Cell, hooks: CellHooks): Promise<CellResult> {
  const { x, base, forges, evaluator } = sc;
  const spec = base.spec;
  const attacking = cell.attack !== 'none';
  const naive = cell.strategy === 'fedavg-naive';
  const distributed = cell.noise === 'distributed';
  const controlSplit = cell.split !== 'semantic';
  const settings0 = councilSettings(x, sc.seed, 1);
  const poisson = samplingOf(x, cell.epsilon) === 'poisson';
  const q = x.cohort / x.forges;
  const f = cohortByzantine(x, samplingOf(x, cell.epsilon));
  const clip = naive ? NAIVE_CLIP : x.clipNorm;
  const port = await hooks.port({
    strategy: cell.strategy,
    byzantine: f,
    forges: forges.map((g) => g.name),
    baseFingerprint: sc.fingerprint,
    layouts: layoutsFor(spec, x.agents, settings0.rank),
    privacy: cellPrivacy(x, cell, clip),
    serverLr: x.serverLr,
    dataDir: hooks.dataDir,
    rootMemoir: sc.rootMemoir,
  });
  // σ is the council's: derived from the cell's ε by the council's own code and published.
  const published = await port.policy(await port.currentRound());
  const sigmaCell = published.noiseMultiplier;
  const curves = new Map<FederatingAgent, number[]>(x.agents.map((a) => [a, []]));
  let forgeRounds = 0;
  const rounds: RoundRecord[] = [];
  const releases = new Uint32Array(forges.length);
  const ledgers = new ForgeLedgers();
  // Every agent's round-0 global: the public initialisation the council publishes.
  const globals = new Map<FederatingAgent, LoraWeights>();
  for (const a of x.agents) {
    const g = await port.global(a);
    if (!g) throw new Error(`the council published no ${a} adapter to start from`);
    globals.set(a, tensorsToLora(spec, a, settings0.rank, g));
  }
  const masks = new Map<FederatingAgent, Uint8Array | null>(
    x.agents.map((a) => [a, federatedMask(cell, dimsOf(base, a, settings0.rank), sc.seed)]),
  );
  // The parameter-split controls: each forge's local part (its values off the mask), as it left them.
  const local = new Map<string, Float32Array>();
  try {
    for (let r = 1; r <= x.rounds; r++) {
      checkStop(hooks.signal);
      const round = await port.currentRound();
      // Every forge follows the privacy policy the council publishes for the round.
      const policy = await port.policy(round);
      const S = policy.clipNorm;
      const cohort = await drawCohort(sc, cell, port, r);
      const record: RoundRecord = {
        round: r,
        cohort: cohort.map((g) => g.index),
        byzantine: cohort.filter((g) => g.byzantine).length,
        silent: 0,
        signal: NaN,
        noise: NaN,
      };
      rounds.push(record);
      // Distributed noise: each forge adds a 1/|C| share of the variance; the sum carries σ.
      const sigma = distributed ? sigmaCell / Math.sqrt(Math.max(1, cohort.length)) : policy.noiseMultiplier;
      const bodies = new Map<number, { agent: FederatingAgent; body: UpdateToSubmit }[]>(
        cohort.map((g) => [g.index, []]),
      );
      for (const agent of x.agents) {
        // A forge that releases through the privacy code asks its own ledger first; one whose
        // release would pass its lifetime ε sits this agent out: it trains, sends and spends nothing.
        // Its ledger charges σ of the cell (under distributed noise: the sum's, which SecAgg+ protects).
        const crafts = (g: SimForge): boolean => g.byzantine && attacking && cell.attack !== 'label-flip';
        const silent = new Set(
          cohort.filter((g) => !crafts(g) && !ledgers.release(g.index, agent, r, sigmaCell)).map((g) => g.index),
        );
        record.silent += silent.size;
        const start = globals.get(agent) as LoraWeights;
        const mask = masks.get(agent) ?? null;
        const dims = dimsOf(base, agent, start.rank);
        const bound = normBound(S, sigma, loraSize(dims), policy.tailMargin);
        const toBody = (tensors: NamedTensor[]): UpdateToSubmit => ({
          baseFingerprint: sc.fingerprint,
          clipNorm: S,
          noiseMultiplier: sigma,
          tensors,
        });
        const asTensors = (flat: Float64Array): NamedTensor[] => loraToTensors(spec, agent, loraWeights(dims, flat));
        const startOf = (g: SimForge): Float64Array => {
          const own = controlSplit ? local.get(`${g.index}|${agent}`) : undefined;
          if (!own || !mask) return start.all;
          const s0 = Float64Array.from(start.all);
          for (let i = 0, k = 0; i < s0.length; i++) if (!mask[i]) s0[i] = own[k++] as number;
          return s0;
        };
        // Who trains what this round: honest forges (and label-flipping ones, honest on poisoned data), then the attackers' own trainings.
        interface Want {
          g: SimForge;
          variant: string;
          examples: readonly Example[];
          start: Float64Array;
        }
        const wants: Want[] = [];
        for (const g of cohort) {
          if (silent.has(g.index)) continue;
          const flips = g.byzantine && cell.attack === 'label-flip';
          if (g.byzantine && attacking && !flips) {
            if (cell.attack === 'sign-flip')
              wants.push({ g, variant: 'semantic', examples: g.council.get(agent) ?? [], start: start.all });
            if (cell.attack === 'scale')
              wants.push({ g, variant: 'flipped', examples: g.flipped.get(agent) ?? [], start: start.all });
            continue;
          }
          const variant = flips ? 'flipped' : controlSplit ? 'all' : 'semantic';
          const examples = (flips ? g.flipped : controlSplit ? g.bond : g.council).get(agent) ?? [];
          wants.push({ g, variant, examples, start: startOf(g) });
        }
        const trained = await trainAll(
          sc,
          wants.map((w) => ({
            key: r === 1 ? `r1|${w.g.index}|${agent}|${w.variant}` : null,
            agent,
            examples: w.examples,
            start: w.start,
            settings: councilSettings(x, sc.seed, r),
          })),
          hooks.signal,
        );
        const updateOf = new Map<string, Float64Array>();
        wants.forEach((w, i) => {
          const lora = trained[i] ?? null;
          const update = lora ? sub(lora, w.start) : new Float64Array(w.start.length);
          updateOf.set(`${w.g.index}|${w.variant}`, update);
          if (controlSplit && mask && lora) {
            const own = new Float32Array(mask.length - countMask(mask, mask.length));
            for (let j = 0, k = 0; j < mask.length; j++) if (!mask[j]) own[k++] = lora[j] as number;
            local.set(`${w.g.index}|${agent}`, own);
          }
        });
        const honestClipped: Float64Array[] = [];
        for (const g of cohort) {
          if (silent.has(g.index)) continue;
          const flips = g.byzantine && cell.attack === 'label-flip';
          if (g.byzantine && attacking && !flips) continue;
          const raw = updateOf.get(
            `${g.index}|${flips ? 'flipped' : controlSplit ? 'all' : 'semantic'}`,
          ) as Float64Array;
          const update = mask ? raw.map((v, i) => (mask[i] ? v : 0)) : raw;
          if (!g.byzantine) honestClipped.push(capNorm(update, S));
          const label = `${cellKey(cell)}|${g.name}|${r}|${agent}`;
          let released: NamedTensor[];
          if (sigma > 0 && !mask && !distributed) {
            released = buildRelease({
              round: `sim-${r}`,
              agent,
              baseFingerprint: sc.fingerprint,
              delta: asTensors(update),
              clipNorm: S,
              noiseMultiplier: sigma,
              sampler: seededSampler(label),
            }).release.tensors.map(tensorFromJson);
          } else if (sigma > 0) released = asTensors(noisedRelease(update, mask, S, sigma, seededSampler(label)));
          else released = clipToNorm(asTensors(update), S).tensors;
          releases[g.index] = (releases[g.index] as number) + (agent === x.agents[0] ? 1 : 0);
          bodies.get(g.index)?.push({ agent, body: toBody(released) });
          hooks.onForgeRound?.(++forgeRounds);
        }
        if (agent === x.agents[0] && honestClipped.length) {
          const k = cohort.length - silent.size;
          const d = countMask(mask, start.all.length);
          record.signal = norm(mean(honestClipped, start.all.length));
          record.noise = (sigma * S * Math.sqrt(d * k)) / k;
        }
        // Byzantine forges of the cohort with a crafted update.
        const crafted = cell.attack === 'none' || cell.attack === 'label-flip' ? null : cell.attack;
        if (crafted) {
          const normal = mulberry32(hashString(`${cellKey(cell)}|${r}|${agent}|attack`));
          const gauss = (): number => {
            const u = Math.max(normal(), 1e-12);
            return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * normal());
          };
          const bad = cohort.filter((g) => g.byzantine);
          for (const g of bad) {
            const own = cell.attack === 'sign-flip' ? (updateOf.get(`${g.index}|semantic`) ?? null) : null;
            const poisoned = cell.attack === 'scale' ? (updateOf.get(`${g.index}|flipped`) ?? null) : null;
            const v = craftUpdate(
              {
                attack: crafted,
                own,
                poisoned,
                honest: honestClipped,
                forges: cohort.length,
                byzantine: bad.length,
                clipNorm: S,
                bound,
                normal: gauss,
              },
              start.all.length,
            );
            bodies.get(g.index)?.push({ agent, body: toBody(asTensors(v)) });
            hooks.onForgeRound?.(++forgeRounds);
          }
        }
      }
      // A forge with nothing to send (every agent silent) does not take part; a round nobody sent
      // anything to stays open (a real council extends its deadline) and the global is unchanged.
      const senders = cohort.filter((g) => (bodies.get(g.index) ?? []).length > 0);
      for (const g of senders) {
        for (const { agent, body } of bodies.get(g.index) ?? []) await port.submit(g.index, round, agent, body);
        await port.seal(g.index, round);
      }
      if (senders.length > 0) {
        await port.finishRound(round);
        record.root = await port.rootEffects(round, x.agents[0] as string);
      }
      for (const agent of x.agents) {
        const g = await port.global(agent);
        if (g) globals.set(agent, tensorsToLora(spec, agent, (globals.get(agent) as LoraWeights).rank, g));
        const craft = craftFor(agent).map((p) => evaluator.probe(p, agent));
        const qy = craft.length
          ? craft.reduce(
              (s, p) =>
                s + evaluator.accuracy(p, [{ lora: globals.get(agent) as LoraWeights, alpha: settings0.alpha }]),
              0,
            ) / craft.length
          : NaN;
        curves.get(agent)?.push(qy);
      }
    }
    const exiled = await port.exiles();
    const exiles: ExileEvent[] = [...exiled]
      .map(([i, round]) => ({
        forge: (forges[i] as SimForge).name,
        round,
        byzantine: (forges[i] as SimForge).byzantine,
      }))
      .sort((a, b) => a.round - b.round || a.forge.localeCompare(b.forge));
    const agents: CellResult['agents'] = {};
    const coldRows: ColdStartRow[][] = [];
    for (const agent of x.agents) {
      if (measuresColdStart(x, cell))
        coldRows.push(await coldStart(sc, agent, globals.get(agent) as LoraWeights, settings0.alpha, hooks.signal));
      const curve = curves.get(agent) ?? [];
      let personal: PersonalResult | null = null;
      if (measuresPersonal(x, cell) && cell.share === 'full') {
        const g = globals.get(agent) as LoraWeights;
        personal = controlSplit
          ? await splitPersonal(sc, agent, g, masks.get(agent) ?? null, local, settings0.alpha, hooks.signal)
          : await personalQuality(sc, agent, g, settings0.alpha, hooks.signal);
      }
      agents[agent] = { curve, council: curve[curve.length - 1] ?? NaN, personal };
    }
    const measured = x.agents.map((a) => agents[a] as AgentResult).filter((a) => Number.isFinite(a.council));
    const curve = Array.from({ length: x.rounds }, (_, i) => meanOf(measured.map((a) => a.curve[i] ?? NaN)));
    const personals = x.agents
      .map((a) => agents[a]?.personal)
      .filter((p): p is PersonalResult => p !== null && p !== undefined && p.forges > 0);
    const dims0 = dimsOf(base, x.agents[0] as FederatingAgent, settings0.rank);
    return {
      key: cellKey(cell),
      cell,
      sigma: sigmaCell,
      agents,
      council: meanOf(measured.map((a) => a.council)),
      curve,
      personal: personals.length
        ? {
            bondCouncil: meanQuality(personals.map((p) => p.bondCouncil)),
            councilOnly: meanQuality(personals.map((p) => p.councilOnly)),
            bondOnly: meanQuality(personals.map((p) => p.bondOnly)),
            forges: Math.max(...personals.map((p) => p.forges)),
          }
        : null,
      coldStart: coldRows.length
        ? x.coldStart.map((sessions, i) => {
            const rows = coldRows.map((r) => r[i] as ColdStartRow).filter((r) => r.forges > 0);
            return {
              sessions,
              bondCouncil: meanQuality(rows.map((r) => r.bondCouncil)),
              councilOnly: meanQuality(rows.map((r) => r.councilOnly)),
              bondOnly: meanQuality(rows.map((r) => r.bondOnly)),
              forges: Math.max(0, ...rows.map((r) => r.forges)),
            };
          })
        : null,
      exiles,
      falseExiles: exiles.filter((e) => !e.byzantine).length,
      forgeRounds,
      rounds,
      privacy: account(
        sigmaCell,
        distributed ? sigmaCell / Math.sqrt(Math.max(1, x.cohort)) : sigmaCell,
        poisson ? q : 1,
        x.rounds,
        x.delta,
        releases,
        countMask(masks.get(x.agents[0] as FederatingAgent) ?? null, loraSize(dims0)),
        ledgers,
        published.derivation
          ? {
              observer: published.derivation.observer_sigma,
              floor: published.derivation.floor_sigma,
              binding: published.derivation.binding,
            }
          : null,
      ),
    };
  } finally {
    await port.close();
  }
}

/** The cell's privacy account (see PrivacyAccount). */
export function account(
  sigma: number,
  releaseSigma: number,
  q: number,
  rounds: number,
  delta: number,
  releases: Uint32Array,
  sharedValues: number,
  ledgers: ForgeLedgers | null = null,
  sigmaSource: SigmaSource | null = null,
): PrivacyAccount {
  const counts = Array.from(releases);
  const max = counts.reduce((a, b) => Math.max(a, b), 0);
  const mean = counts.length ? counts.reduce((a, b) => a + b, 0) / counts.length : 0;
  const never = counts.filter((c) => c === 0).length;
  const eps = (steps: number, rate: number): number =>
    sigma > 0 && steps > 0
      ? epsilonFor({ noiseMultiplier: sigma, sampleRate: rate, steps, delta }).epsilon
      : sigma > 0
        ? 0
        : Infinity;
  return {
    sigma,
    releaseSigma,
    q,
    rounds,
    observerEpsilon: eps(rounds, q),
    releases: { max, mean, never },
    forgeLedgerEpsilon: ledgers && sigma > 0 ? ledgers.maxEpsilon() : eps(max, 1),
    limited: ledgers?.limited ?? 0,
    sharedValues,
    sigmaSource,
  };
}

/** Clip the masked update to S and add N(0, σ²S²) to the federated coordinates only (the others are not sent). */
export function noisedRelease(
  update: Float64Array,
  mask: Uint8Array | null,
  S: number,
  sigma: number,
  sampler: GaussianSampler,
): Float64Array {
  const out = capNorm(update, S);
  const sd = sigma * S;
  for (let i = 0; i < out.length; i++)
    if (!mask || mask[i]) out[i] = (out[i] as number) + sampler.standardNormal() * sd;
  return out;
}

interface MemoJob {
  key: string | null;
  agent: FederatingAgent;
  examples: readonly Example[];
  start: Float64Array;
  settings: TrainSettings;
}

/** The jobs' trained adapters, from the memo where a job is cell-independent, the rest through the pool. */
export async function trainAll(
  sc: SeedContext,
  jobs: readonly MemoJob[],
  signal?: AbortSignal,
): Promise<(Float64Array | null)[]> {
  const out: (Float64Array | null | undefined)[] = jobs.map((j) => (j.key ? fromMemo(sc, j.key) : undefined));
  const todo = jobs.map((j, i) => ({ j, i })).filter(({ i }) => out[i] === undefined);
  const done = await sc.pool.run(
    todo.map(({ j }) => ({
      agent: j.agent,
      kind: 'council',
      examples: j.examples,
      start: j.start,
      frozen: [],
      settings: j.settings,
    })),
  );
  checkStop(signal);
  todo.forEach(({ j, i }, k) => {
    const v = done[k] ?? null;
    if (j.key) {
      sc.memo.set(j.key, v && Float32Array.from(v));
      out[i] = fromMemo(sc, j.key);
    } else out[i] = v;
  });
  return out as (Float64Array | null)[];
}

/** A memoised training (undefined: not trained yet; null: the trainer skipped it). */
function fromMemo(sc: SeedContext, key: string): Float64Array | null | undefined {
  const v = sc.memo.get(key);
  return v ? Float64Array.from(v) : v;
}

/** The honest forges whose personal quality is measured: at most `personalSample`, chosen by the seed. */
export function measuredForges(sc: Pick<SeedContext, 'forges' | 'seed' | 'x'>): SimForge[] {
  const honest = sc.forges.filter((g) => !g.byzantine);
  if (honest.length <= sc.x.personalSample) return honest;
  const rand = mulberry32(hashString(`personal-sample|${sc.seed}`));
  const idx = honest.map((_, i) => i);
  for (let i = idx.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [idx[i], idx[j]] = [idx[j] as number, idx[i] as number];
  }
  return idx
    .slice(0, sc.x.personalSample)
    .sort((a, b) => a - b)
    .map((i) => honest[i] as SimForge);
}

/** Bonds trained alone, once per seed (the same in every cell). */
export async function bondsAlone(
  sc: SeedContext,
  agent: FederatingAgent,
  fs: readonly SimForge[],
  signal?: AbortSignal,
): Promise<(LoraWeights | null)[]> {
  const settings: TrainSettings = { ...DEFAULT_SETTINGS, seed: sc.seed };
  const jobs = fs.map((g) => ({ key: `bond|${g.index}|${agent}`, agent, examples: g.bond.get(agent) ?? [], settings }));
  const missing = jobs.filter((j) => !sc.memo.has(j.key));
  const done = await sc.pool.run(
    missing.map((j) => ({ agent, kind: 'bond', examples: j.examples, start: null, frozen: [], settings })),
  );
  checkStop(signal);
  missing.forEach((j, k) => {
    const v = done[k];
    sc.memo.set(j.key, v ? Float32Array.from(v) : null);
  });
  const dims = dimsOf(sc.base, agent, settings.rank);
  return jobs.map((j) => {
    const v = fromMemo(sc, j.key);
    return v ? loraWeights(dims, v) : null;
  });
}

function qualityOf(sc: SeedContext, agent: FederatingAgent, g: SimForge): (adapters: AppliedAdapter[]) => Quality {
  const { evaluator } = sc;
  const craft = craftFor(agent).map((p) => evaluator.probe(p, agent));
  const prefs = personalFor(g.profile, agent).map((p) => evaluator.probe(p, agent));
  return (adapters) => {
    const p = prefs.map((x) => evaluator.accuracy(x, adapters));
    const k = craft.map((x) => evaluator.accuracy(x, adapters));
    return { personal: meanOf(p), craft: meanOf(k), all: meanOf([...p, ...k]) };
  };
}

const CHANCE: Quality = { personal: 0.5, craft: 0.5, all: 0.5 };

/** Each measured honest forge trains its bond adapter over the council adapter and alone; held-out quality on its player's preferences. */
async function personalQuality(
  sc: SeedContext,
  agent: FederatingAgent,
  council: LoraWeights,
  alpha: number,
  signal?: AbortSignal,
  among: readonly SimForge[] = measuredForges(sc),
): Promise<PersonalResult> {
  const settings: TrainSettings = { ...DEFAULT_SETTINGS, seed: sc.seed };
  const fs = among.filter((g) => personalFor(g.profile, agent).length > 0);
  const alone = await bondsAlone(sc, agent, fs, signal);
  const onTop = await sc.pool.run(
    fs.map((g) => ({
      agent,
      kind: 'bond',
      examples: g.bond.get(agent) ?? [],
      start: null,
      frozen: [{ all: council.all, rank: council.rank, alpha }],
      settings,
    })),
  );
  checkStop(signal);
  const dims = dimsOf(sc.base, agent, settings.rank);
  const c = { lora: council, alpha };
  const rows = fs.map((g, i) => {
    const quality = qualityOf(sc, agent, g);
    const top = onTop[i];
    const a = alone[i];
    return {
      both: quality(top ? [c, { lora: loraWeights(dims, top), alpha: settings.alpha }] : [c]),
      cOnly: quality([c]),
      bOnly: a ? quality([{ lora: a, alpha: settings.alpha }]) : CHANCE,
    };
  });
  return {
    bondCouncil: meanQuality(rows.map((r) => r.both)),
    councilOnly: meanQuality(rows.map((r) => r.cOnly)),
    bondOnly: meanQuality(rows.map((r) => r.bOnly)),
    forges: rows.length,
  };
}

/**
 * Cold start: the newcomers of each session count join after the last round. Each trains its bond
 * alone and over the final council adapter; both, and the council alone, are measured on the
 * newcomer's held-out preferences (its personal ones and the shared craft).
 */
async function coldStart(
  sc: SeedContext,
  agent: FederatingAgent,
  council: LoraWeights,
  alpha: number,
  signal?: AbortSignal,
): Promise<ColdStartRow[]> {
  const out: ColdStartRow[] = [];
  for (const sessions of sc.x.coldStart) {
    const among = sc.newcomers.filter((g) => g.sessions === sessions);
    const p = await personalQuality(sc, agent, council, alpha, signal, among);
    out.push({
      sessions,
      bondCouncil: p.bondCouncil,
      councilOnly: p.councilOnly,
      bondOnly: p.bondOnly,
      forges: p.forges,
    });
  }
  return out;
}

/**
 * The parameter-split controls: each measured forge's one adapter is the council's values on the
 * federated coordinates and its own elsewhere. It trains once more on all its entries from there
 * (as a bond would), then takes the council's values back on the federated coordinates (those are
 * the council's, not its own). Council-only: the global with the public init off the mask.
 */
async function splitPersonal(
  sc: SeedContext,
  agent: FederatingAgent,
  global: LoraWeights,
  mask: Uint8Array | null,
  local: ReadonlyMap<string, Float32Array>,
  alpha: number,
  signal?: AbortSignal,
): Promise<PersonalResult> {
  const settings: TrainSettings = { ...DEFAULT_SETTINGS, seed: sc.seed };
  const fs = measuredForges(sc).filter((g) => personalFor(g.profile, agent).length > 0);
  const alone = await bondsAlone(sc, agent, fs, signal);
  const starts = fs.map((g) => {
    const s0 = Float64Array.from(global.all);
    const own = local.get(`${g.index}|${agent}`);
    if (own && mask) for (let i = 0, k = 0; i < s0.length; i++) if (!mask[i]) s0[i] = own[k++] as number;
    return s0;
  });
  const tuned = await sc.pool.run(
    fs.map((g, i) => ({
      agent,
      kind: 'bond',
      examples: g.bond.get(agent) ?? [],
      start: starts[i] as Float64Array,
      frozen: [],
      settings,
    })),
  );
  checkStop(signal);
  const dims = dimsOf(sc.base, agent, global.rank);
  const rows = fs.map((g, i) => {
    const quality = qualityOf(sc, agent, g);
    const mine = Float64Array.from(tuned[i] ?? (starts[i] as Float64Array));
    if (mask) for (let j = 0; j < mine.length; j++) if (mask[j]) mine[j] = global.all[j] as number;
    const a = alone[i];
    return {
      both: quality([{ lora: loraWeights(dims, mine), alpha }]),
      cOnly: quality([{ lora: global, alpha }]),
      bOnly: a ? quality([{ lora: a, alpha: settings.alpha }]) : CHANCE,
    };
  });
  return {
    bondCouncil: meanQuality(rows.map((r) => r.both)),
    councilOnly: meanQuality(rows.map((r) => r.cOnly)),
    bondOnly: meanQuality(rows.map((r) => r.bOnly)),
    forges: rows.length,
  };
}

export function meanOf(xs: readonly number[]): number {
  const ok = xs.filter(Number.isFinite);
  return ok.length ? ok.reduce((a, b) => a + b, 0) / ok.length : NaN;
}

export function meanQuality(qs: readonly Quality[]): Quality {
  return {
    personal: meanOf(qs.map((q) => q.personal)),
    craft: meanOf(qs.map((q) => q.craft)),
    all: meanOf(qs.map((q) => q.all)),
  };
}
