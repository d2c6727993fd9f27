import { SERVER_LR } from '../council/config.js';
import { createHash } from 'node:crypto';
import { FEDERATING_AGENTS, type FederatingAgent } from '../memoir/format/agents.js';
import type { StrategyConfig } from '../aggregation/strategy.js';
import { cohortFaultBound, FAULT_BOUND_DELTA, smallestCohort, type CohortSampling } from '../protocol/cohort.js';
import type { RunDefinition } from './run-definition.js';

/**
 * What a simulated federation experiment compares, and the grid of cells it expands into.
 *
 * One cell = one council run: N forges (f of them Byzantine) × R rounds under one aggregation
 * strategy, one attack, one privacy level ε and one split rule, for one seed. The grid:
 *   - Byzantine: every strategy × every attack (`none` is the clean run) at the experiment's ε;
 *   - privacy/utility: the reference strategy, no attack, every ε of `epsilons`;
 *   - split: the reference strategy, no attack, the semantic (gameplay-rule) split and a random
 *     split of the same entries.
 * Cells that coincide are run once. Every cell runs for every seed.
 */

export const ATTACKS = ['none', 'sign-flip', 'scale', 'noise', 'label-flip', 'collude', 'ipm'] as const;
export type Attack = (typeof ATTACKS)[number];

export const ATTACK_TEXT: Readonly<Record<Attack, string>> = {
  none: 'no attack (the clean run)',
  'sign-flip': 'sends the negation of its honest update',
  scale: 'model replacement: its update from label-flipped data, boosted ×N up to the council’s norm bound',
  noise: 'sends Gaussian noise as large as the council’s norm bound allows',
  'label-flip': 'style poisoning: trains honestly on data whose every label prefers the wrong side',
  collude: 'every attacker sends the same vector: the negated mean of the honest updates',
  ipm: 'inner-product manipulation: −ε × the honest mean, ε tuned so the plain mean turns against the honest direction',
};

/**
 * The aggregation strategies a simulation compares, by the name the table shows. `fedavg-naive`
 * is FedAvg with neither clipping nor a norm bound (the catastrophic baseline the design asks
 * for); `fedavg` is FedAvg behind the council's norm bound, as every real council runs it.
 */
export const SIM_STRATEGIES = [
  'fedavg-naive',
  'fedavg',
  'multikrum+lora-fair',
  'bulyan+lora-fair',
  'lora-fair',
  'multikrum',
  'bulyan',
  'krum',
  'median',
  'trimmed-mean',
] as const;
export type SimStrategy = (typeof SIM_STRATEGIES)[number];

/** The council settings of a strategy with Byzantine bound f. */
export function strategyConfig(
  s: SimStrategy,
  f: number,
): StrategyConfig & { selection?: 'none' | 'multikrum' | 'bulyan' } {
  switch (s) {
    case 'multikrum+lora-fair':
      return { strategy: 'lora-fair', f, selection: 'multikrum' };
    case 'bulyan+lora-fair':
      return { strategy: 'lora-fair', f, selection: 'bulyan' };
    case 'lora-fair':
      return { strategy: 'lora-fair', f: 0, selection: 'none' };
    case 'fedavg':
    case 'fedavg-naive':
      return { strategy: 'fedavg', f: 0 };
    default:
      return { strategy: s, f };
  }
}

/**
 * What each forge federates. `semantic`: the design's split — a council adapter trained on the
 * entries the gameplay rule shares, a bond adapter on everything, kept home. The two controls
 * train one adapter per agent on all of a forge's entries and federate part of its parameters,
 * keeping the rest local: `param-random` a random half of them (the same half at every forge),
 * `fedsa` the A factors (FedSA-LoRA: A shared, B local).
 */
export const SPLITS = ['semantic', 'param-random', 'fedsa'] as const;
export type Split = (typeof SPLITS)[number];

/**
 * Where the DP noise is added. `local`: each forge adds N(0, σ²S²) to its own release, so the
 * cohort mean carries noise σS/√K. `distributed`: each forge adds a 1/K share of the variance
 * and the council sees only the sum under secure aggregation (SecAgg+), so the mean carries σS/K
 * — the same guarantee on the released model, K times less noise in it.
 */
export const NOISES = ['local', 'distributed'] as const;
export type Noise = (typeof NOISES)[number];

/** Which parameters a `semantic` council adapter federates: all, or all but the input-side A factors (a few percent of them). */
export const SHARES = ['full', 'small'] as const;
export type Share = (typeof SHARES)[number];

export interface Experiment {
  /** Forges in the federation. */
  forges: number;
  /**
   * Forges sampled per round (K; = forges: everyone, every round). Cells at a finite ε sample a
   * Poisson cohort (rate K/N, the accountant's assumption); the others exactly K forges.
   */
  cohort: number;
  /** How many of them are Byzantine (they attack in every cell whose attack is not `none`). */
  byzantine: number;
  rounds: number;
  /** Agents whose council adapters are federated (and measured). */
  agents: FederatingAgent[];
  /** Sample-forge size per forge. */
  sessions: number;
  turns: number;
  strategies: SimStrategy[];
  attacks: Attack[];
  /** ε of the Byzantine grid and the split comparison (Infinity: clipping, no noise). */
  epsilon: number;
  /** ε values of the privacy/utility sweep. */
  epsilons: number[];
  /** The strategy of the privacy and split comparisons (and the robust reference of the targets). */
  reference: SimStrategy;
  seeds: number[];
  /** Local epochs of council training per round. */
  localEpochs: number;
  /** S: the L2 norm every released update is clipped to. */
  clipNorm: number;
  /** The councils' server step: the new global is the previous one plus this × the aggregate update. */
  serverLr: number;
  /** δ of the (ε, δ) guarantee over the whole experiment. */
  delta: number;
  /** Held-out evaluation pairs per preference (words never seen in training). */
  heldOut: number;
  /** Honest forges (at most) whose personal quality is measured (bond training is the expensive part). */
  personalSample: number;
  /**
   * Cold start: session counts of newcomers, players who join after the last round with little
   * history ([]: not measured). Each trains its bond alone and over the clean reference run's final
   * council adapter; measured on its own held-out preferences.
   */
  coldStart: number[];
  /** Newcomers per session count. */
  newcomers: number;
  /**
   * Councils hold a root set (the sample generator's root memoir, council `root_memoir`) and each
   * round records what every update did to it (`RoundRecord.root`). Off by default: trust takes no
   * evidence from it, and it costs about 10 ms per update.
   */
  rootSet: boolean;
}

/**
 * The documented default experiment (README "Evaluation"): 11 forges, 2 Byzantine (18%: 11 is the
 * smallest federation Bulyan accepts with f = 2; exactly 20% with Bulyan needs 15 forges and
 * f = 3, `--forges 15 --byzantine 3`, about twice the time), 4 rounds, Techne (the agent whose
 * outputs show the shared craft preference and four personal axes), 3 seeds.
 */
export const DEFAULT_EXPERIMENT: Experiment = {
  forges: 11,
  cohort: 11,
  byzantine: 2,
  rounds: 4,
  agents: ['techne'],
  sessions: 4,
  turns: 12,
  strategies: ['fedavg-naive', 'fedavg', 'multikrum+lora-fair', 'bulyan+lora-fair'],
  attacks: [...ATTACKS],
  epsilon: Infinity,
  epsilons: [0.5, 1, 4, 8, Infinity],
  reference: 'multikrum+lora-fair',
  seeds: [1, 2, 3],
  localEpochs: 3,
  clipNorm: 1,
  serverLr: SERVER_LR,
  delta: 1e-5,
  heldOut: 200,
  personalSample: 24,
  coldStart: [1, 2, 4, 8],
  newcomers: 4,
  rootSet: false,
};

export interface Cell {
  strategy: SimStrategy;
  attack: Attack;
  epsilon: number;
  split: Split;
  noise: Noise;
  share: Share;
  seed: number;
}

export function cellKey(c: Omit<Cell, 'seed'> & { seed?: number }): string {
  const variant = `${c.noise === 'distributed' ? '|distributed' : ''}${c.share === 'small' ? '|small' : ''}`;
  return `${c.strategy}|${c.attack}|${epsText(c.epsilon)}|${c.split}${variant}${c.seed === undefined ? '' : `|${c.seed}`}`;
}

export function epsText(e: number): string {
  return e === Infinity ? '∞' : String(e);
}

/** A short label of a cell's configuration (progress, tables). */
export function cellLabel(c: Omit<Cell, 'seed'>): string {
  const parts = [c.strategy, c.attack, `ε ${epsText(c.epsilon)}`];
  if (c.split !== 'semantic') parts.push(`${c.split} split`);
  if (c.noise === 'distributed') parts.push('distributed noise');
  if (c.share === 'small') parts.push('small shared adapter');
  return parts.join(' / ');
}

/**
 * The cells of an experiment, seeds innermost last (every configuration for seed 1 first):
 *   - Byzantine: every strategy × every attack at the experiment's ε;
 *   - privacy/utility: the reference strategy, no attack, every ε of `epsilons`, with the full and
 *     the small shared adapter; at every finite ε also distributed noise on both (under secure
 *     aggregation the council sees only the sum, so it runs FedAvg behind its norm bound);
 *   - split: the reference strategy, no attack, the semantic split and the two parameter controls.
 */
export function cellsOf(x: Experiment): Cell[] {
  const configs = new Map<string, Omit<Cell, 'seed'>>();
  const add = (c: Omit<Cell, 'seed'>): void => {
    if (!configs.has(cellKey(c))) configs.set(cellKey(c), c);
  };
  const plain = { split: 'semantic', noise: 'local', share: 'full' } as const;
  for (const strategy of x.strategies)
    for (const attack of x.attacks) add({ strategy, attack, epsilon: x.epsilon, ...plain });
  for (const epsilon of x.epsilons) {
    add({ strategy: x.reference, attack: 'none', epsilon, ...plain });
    add({ strategy: x.reference, attack: 'none', epsilon, ...plain, share: 'small' });
    if (epsilon !== Infinity)
      for (const share of SHARES)
        add({ strategy: 'fedavg', attack: 'none', epsilon, ...plain, noise: 'distributed', share });
  }
  for (const split of SPLITS) add({ strategy: x.reference, attack: 'none', epsilon: x.epsilon, ...plain, split });
  const out: Cell[] = [];
  for (const seed of x.seeds) for (const c of configs.values()) out.push({ ...c, seed });
  return out;
}

/** Whether a cell measures personal quality (bond training is the expensive part: clean reference cells only). */
export function measuresPersonal(x: Experiment, c: Omit<Cell, 'seed'>): boolean {
  return c.attack === 'none' && c.strategy === x.reference && c.noise === 'local';
}

/** The clean reference run at the experiment's ε with the design's split: no attack, local noise, full share. */
function isDesignReference(x: Experiment, c: Omit<Cell, 'seed'>): boolean {
  return (
    c.attack === 'none' &&
    c.strategy === x.reference &&
    c.epsilon === x.epsilon &&
    c.split === 'semantic' &&
    c.noise === 'local' &&
    c.share === 'full'
  );
}

/** Whether a cell measures cold start: the design's reference cell, when session counts are given. */
export function measuresColdStart(x: Experiment, c: Omit<Cell, 'seed'>): boolean {
  return x.coldStart.length > 0 && isDesignReference(x, c);
}

/** How a cell samples its cohort: everyone; exactly K at ε = ∞; Poisson at rate K/N where noise is added (the accountant's assumption). */
export function samplingOf(x: Pick<Experiment, 'forges' | 'cohort'>, epsilon: number): CohortSampling {
  return x.cohort < x.forges && epsilon !== Infinity ? 'poisson' : 'fixed';
}

/**
 * Whether a cell measures Aidos's slop-detection F1: the clean reference run at the experiment's
 * ε with the design's split (its Aidos federation runs beside it, on the same cohorts).
 */
export function measuresAidos(x: Experiment, c: Omit<Cell, 'seed'>): boolean {
  return isDesignReference(x, c);
}

/**
 * f of the council's robust rule: at most this many of the experiment's Byzantine forges land in
 * one round's cohort, except with probability FAULT_BOUND_DELTA per round (src/protocol/cohort.ts,
 * the council's own bound). The whole federation as cohort: f = the Byzantine forges.
 */
export function cohortByzantine(
  x: Pick<Experiment, 'forges' | 'cohort' | 'byzantine'>,
  sampling: CohortSampling = 'fixed',
): number {
  return cohortFaultBound({ population: x.forges, byzantine: x.byzantine, cohort: x.cohort, sampling });
}

/** The smallest n a strategy's rule accepts with Byzantine bound f (0: any). */
function needsOf(s: SimStrategy, f: number): { min: number; rule: string } {
  const c = strategyConfig(s, f);
  const sel = c.strategy === 'lora-fair' ? c.selection : c.strategy;
  if (sel === 'bulyan') return { min: 4 * c.f + 3, rule: 'n ≥ 4f+3' };
  if (sel === 'multikrum' || sel === 'krum') return { min: 2 * c.f + 3, rule: 'n > 2f+2' };
  if (sel === 'trimmed-mean') return { min: 2 * c.f + 1, rule: 'n > 2f' };
  return { min: 0, rule: '' };
}

/**
 * Why the cohort cannot hold a strategy's f (null: it can). Checked against every sampling the
 * strategy runs under: the Byzantine grid's (at `--epsilon`), and for the reference strategy every
 * ε of the privacy sweep.
 */
export function strategyProblem(x: Experiment, s: SimStrategy): string | null {
  const epsilons = s === x.reference ? [x.epsilon, ...x.epsilons] : [x.epsilon];
  const sampling: CohortSampling = epsilons.some((e) => samplingOf(x, e) === 'poisson') ? 'poisson' : 'fixed';
  const f = cohortByzantine(x, sampling);
  const n = x.cohort;
  const need = needsOf(s, f);
  if (n >= need.min) return null;
  if (n === x.forges)
    return `${s} with f=${f} needs at least ${need.min} forges (${need.rule}); got --forges ${x.forges}`;
  const k = smallestCohort({ population: x.forges, byzantine: x.byzantine, sampling }, (g) => needsOf(s, g).min);
  const odds = `except with probability ${FAULT_BOUND_DELTA} per round${sampling === 'poisson' ? ', Poisson cohorts' : ''}`;
  return (
    `${s} with f=${f} needs at least ${need.min} forges per cohort (${need.rule}); got --cohort ${n} ` +
    `(f = ${f}: at most ${f} of the ${x.byzantine} Byzantine forges among ${x.forges} land in one cohort, ${odds}); ` +
    (k === null ? `no cohort of these ${x.forges} forges holds it` : `the smallest cohort that holds it is ${k}`)
  );
}

/**
 * A stable id of everything that shapes a cell's numbers (finished cells are reused only under the
 * same id): the experiment's configuration and the run's definition (run-definition.ts: protocol,
 * base, a digest of the code). Not the grid's lists (seeds, strategies, attacks, ε values): a cell's
 * key names its own strategy, attack, ε, split and seed, so runs that differ only in which cells they
 * ask for share finished cells — e.g. seeds run in parallel as separate processes, then the full command.
 */
export function experimentId(x: Experiment, run: RunDefinition): string {
  const { seeds: _s, strategies: _t, attacks: _a, epsilons: _e, personalSample: _p, ...shaping } = x;
  const canon = JSON.stringify({ ...shaping, epsilon: epsText(x.epsilon), run });
  return createHash('sha256').update(canon).digest('hex').slice(0, 16);
}

/** Checks what the schema cannot: the strategies' needs against the cohort and f. Returns the first problem. */
export function problemWith(x: Experiment): string | null {
  if (x.forges < 1) return `--forges ${x.forges}: a federation needs at least one forge`;
  if (x.cohort < 1) return `--cohort ${x.cohort}: a round needs at least one forge`;
  if (x.cohort > x.forges) return `--cohort ${x.cohort} is larger than --forges ${x.forges}`;
  if (x.byzantine >= x.forges) return `--byzantine ${x.byzantine} leaves no honest forge among ${x.forges}`;
  for (const s of x.strategies.includes(x.reference) ? x.strategies : [...x.strategies, x.reference]) {
    const why = strategyProblem(x, s);
    if (why) return why;
  }
  for (const a of x.agents)
    if (!(FEDERATING_AGENTS as readonly string[]).includes(a)) return `--agents: ${a} has no council adapter`;
  if (x.attacks.some((a) => a !== 'none') && x.byzantine === 0)
    return 'attacks need Byzantine forges: pass --byzantine N (N ≥ 1)';
  for (const e of [x.epsilon, ...x.epsilons]) if (!(e > 0)) return `ε ${e}: give a positive ε (or inf for no noise)`;
  return null;
}

/** The command that reproduces an experiment: the flags that differ from the default experiment. */
export function reproduceCommand(x: Experiment): string {
  const d = DEFAULT_EXPERIMENT;
  const eps = (e: number): string => (e === Infinity ? 'inf' : String(e));
  const same = (a: readonly unknown[], b: readonly unknown[]): boolean =>
    a.length === b.length && a.every((v, i) => v === b[i]);
  const flags: string[] = [];
  const num = (flag: string, v: number, dv: number): void => void (v !== dv && flags.push(`${flag} ${v}`));
  const lst = (
    flag: string,
    v: readonly (string | number)[],
    dv: readonly (string | number)[],
    f: (s: string | number) => string = String,
  ): void => void (!same(v, dv) && flags.push(`${flag} ${v.map(f).join(',')}`));
  num('--forges', x.forges, d.forges);
  if (x.cohort !== x.forges) flags.push(`--cohort ${x.cohort}`);
  // --forges alone implies 20% Byzantine: state f whenever it is not the default.
  if (x.byzantine !== d.byzantine || x.forges !== d.forges) flags.push(`--byzantine ${x.byzantine}`);
  num('--rounds', x.rounds, d.rounds);
  lst('--agents', x.agents, d.agents);
  num('--sessions', x.sessions, d.sessions);
  num('--turns', x.turns, d.turns);
  lst('--strategies', x.strategies, d.strategies);
  lst('--attacks', x.attacks, d.attacks);
  if (x.epsilon !== d.epsilon) flags.push(`--epsilon ${eps(x.epsilon)}`);
  lst('--epsilons', x.epsilons, d.epsilons, (e) => eps(e as number));
  if (x.reference !== d.reference) flags.push(`--reference ${x.reference}`);
  lst('--seeds', x.seeds, d.seeds);
  num('--local-epochs', x.localEpochs, d.localEpochs);
  num('--clip-norm', x.clipNorm, d.clipNorm);
  num('--server-lr', x.serverLr, d.serverLr);
  num('--held-out', x.heldOut, d.heldOut);
  num('--personal-sample', x.personalSample, d.personalSample);
  if (!same(x.coldStart, d.coldStart))
    flags.push(`--cold-start ${x.coldStart.length ? x.coldStart.join(',') : 'none'}`);
  num('--newcomers', x.newcomers, d.newcomers);
  if (x.rootSet) flags.push('--root-set');
  return ['kourai federate simulate', ...flags].join(' ');
}
