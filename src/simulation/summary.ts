import type { AidosResult, Detection } from './aidos.js';
import type { CellResult, PersonalResult, Quality } from './cell.js';
import type { FederatingAgent } from '../memoir/format/agents.js';
import { defaults as councilDefaults } from '../council/config.js';
import { FAULT_BOUND_DELTA } from '../protocol/cohort.js';
import {
  cellKey,
  cohortByzantine,
  DEFAULT_EXPERIMENT,
  samplingOf,
  strategyProblem,
  type Attack,
  type Cell,
  type Experiment,
  type Noise,
  type Share,
  type SimStrategy,
  type Split,
} from './experiment.js';

/**
 * The results of an experiment, over seeds (mean and sample standard deviation), and the claims
 * of the design as targets: each with its goal, the measured value and whether it was met — a
 * missed target says so and by how much, it is never tuned away.
 */
export interface Stat {
  mean: number;
  sd: number;
  n: number;
}

export function stat(xs: readonly number[]): Stat {
  const v = xs.filter(Number.isFinite);
  const n = v.length;
  const mean = n ? v.reduce((a, b) => a + b, 0) / n : NaN;
  const sd = n > 1 ? Math.sqrt(v.reduce((a, b) => a + (b - mean) ** 2, 0) / (n - 1)) : 0;
  return { mean, sd, n };
}

/** The standard error of a mean over seeds (0 with one seed). */
function standardError(s: Stat): number {
  return s.n > 1 ? s.sd / Math.sqrt(s.n) : 0;
}

/** Why a claim that must beat the noise over seeds is not met on one seed. */
const ONE_SEED = 'one seed: the noise over seeds is not measured; run 2 or more seeds';

/** A target not measured or not run: a miss, with the reason. */
function missed(name: string, goal: string, unit: Target['unit'], detail: string): Target {
  return { name, goal, value: NaN, unit, met: false, detail };
}

export interface ByzantineRow {
  strategy: SimStrategy;
  attack: Attack;
  council: Stat;
  /** (clean − attacked) / clean of the mean council quality; 0 for the clean run itself. */
  drop: number;
  /** Byzantine forges exiled (mean per seed), honest forges exiled (total over seeds). */
  exiled: number;
  falseExiles: number;
  curve: number[];
}

/** The variants of the privacy sweep: local noise on the full adapter (the reference), distributed noise, a small shared adapter. */
export type PrivacyVariant = 'local' | 'small' | 'distributed' | 'distributed-small';

export interface PrivacyRow {
  /** null: ε = ∞ (clipping, no noise). */
  epsilon: number | null;
  variant: PrivacyVariant;
  strategy: SimStrategy;
  /** The σ the council published, and which bound set it: the observer's ε, or the forges' privacy floor (null: ε = ∞). */
  sigma: number;
  sigmaBinding: 'observer' | 'floor' | null;
  council: Stat;
  bondCouncil: Stat | null;
  curve: number[];
  /** The first round whose mean council quality is within 1 point of the curve's best (NaN: no curve). */
  roundsToConverge: number;
  /** ε toward an observer of the released council models (amplified by sampling), and the most any forge's own ledger charged (unamplified). */
  observerEpsilon: number | null;
  forgeLedgerEpsilon: number | null;
  /** Rounds the busiest forge released in, and the mean over forges. */
  releases: { max: number; mean: number };
  /** Forges that sat out at least once because a release would pass their lifetime ε (most over seeds). */
  limited: number;
  sharedValues: number;
  /** Mean over rounds and seeds: the norm of the honest cohort's mean update, and the expected norm of the noise in it. */
  signal: number;
  noise: number;
}

export interface SplitRow {
  split: Split;
  council: Stat;
  bondCouncil: Stat | null;
  councilOnly: Stat | null;
}

/** One agent's numbers in one cell configuration (the summary's other tables average the agents). */
export interface AgentRow {
  agent: FederatingAgent;
  strategy: SimStrategy;
  attack: Attack;
  /** null: ε = ∞. */
  epsilon: number | null;
  split: Split;
  council: Stat;
  /** Held-out accuracy on each honest player's own preferences (clean reference cells only). */
  personal: { bondCouncil: Stat; councilOnly: Stat; bondOnly: Stat } | null;
}

/** Cold start: newcomers with `sessions` sessions (held-out accuracy on all their preferences, mean ± sd over seeds). */
export interface ColdStartSummaryRow {
  sessions: number;
  bondCouncil: Stat;
  councilOnly: Stat;
  bondOnly: Stat;
  /** Bond + council − bond only, per seed (paired). */
  gain: Stat;
  forges: number;
}

/** Aidos's slop-detection F1 after each round (held-out slop, slop the positive class; mean ± sd over seeds). */
interface AidosRoundRow {
  round: number;
  federated: Stat;
  /** A single forge's own adapter after as many rounds' epochs, alone (mean over its measured forges, then over seeds). */
  single: Stat;
  /** Federated − the stronger single-forge baseline (its per-round adapter or its converged bond), per seed. */
  gain: Stat;
}

interface AidosSummary {
  rounds: AidosRoundRow[];
  /** A single forge's bond trained to convergence on all its data; that bond over the final council adapter. */
  singleConverged: Stat;
  bondCouncil: Stat;
  /** The trivial detector that calls every passage slop (absent in cells recorded before it was). */
  allSlop: Stat;
  /** Precision and recall in the last round. */
  last: { federated: { precision: Stat; recall: Stat }; single: { precision: Stat; recall: Stat } };
  forges: number;
  probe: number;
}

export interface Target {
  /** Recognisable claim names: byzantine robustness, personalization, semantic split, privacy/utility, false exiles. */
  name: string;
  goal: string;
  /** The measured value (a share for qualities and drops, a count for exiles; NaN: not measured). */
  value: number;
  /** How `value` reads: a share shown as %, percentage points, a count, or rounds. */
  unit: 'share' | 'points' | 'count' | 'rounds';
  met: boolean;
  detail: string;
}

export interface ExileRecord {
  seed: number;
  strategy: SimStrategy;
  attack: Attack;
  forge: string;
  round: number;
  byzantine: boolean;
}

export interface Summary {
  cells: { done: number; total: number };
  byzantine: ByzantineRow[];
  /** Per strategy, the attack that hurt most. */
  worst: { strategy: SimStrategy; attack: Attack; council: number; drop: number }[];
  privacy: PrivacyRow[];
  split: SplitRow[];
  personalization: {
    bondCouncil: Record<keyof Quality, Stat>;
    councilOnly: Record<keyof Quality, Stat>;
    bondOnly: Record<keyof Quality, Stat>;
    forges: number;
  } | null;
  /** Cold start by session count ([] when not measured). */
  coldStart: ColdStartSummaryRow[];
  /** Aidos's slop-detection F1 by round (null when not measured). */
  aidos: AidosSummary | null;
  exiles: ExileRecord[];
  /** Per attack of the reference strategy: rounds until every Byzantine forge of the cell was exiled (max over seeds; null: some never were). */
  exileRounds: { attack: Attack; rounds: number | null; exiled: number; byzantine: number }[];
  /** Every configuration × every measured agent (mean ± sd over seeds). */
  perAgent: AgentRow[];
  targets: Target[];
}

const jsonEps = (e: number): number | null => (e === Infinity ? null : e);

function meanCurve(cells: readonly CellResult[], rounds: number): number[] {
  return Array.from({ length: rounds }, (_, i) => stat(cells.map((c) => c.curve[i] ?? NaN)).mean);
}

function qualityStats(qs: readonly Quality[]): Record<keyof Quality, Stat> {
  return {
    personal: stat(qs.map((q) => q.personal)),
    craft: stat(qs.map((q) => q.craft)),
    all: stat(qs.map((q) => q.all)),
  };
}

export function summarize(x: Experiment, results: readonly CellResult[], total: number): Summary {
  const by = new Map<string, CellResult[]>();
  for (const r of results) {
    const k = cellKey({ ...r.cell, seed: undefined });
    by.set(k, [...(by.get(k) ?? []), r]);
  }
  const group = (
    strategy: SimStrategy,
    attack: Attack,
    epsilon: number,
    split: Split,
    noise: Noise = 'local',
    share: Share = 'full',
  ): CellResult[] => by.get(cellKey({ strategy, attack, epsilon, split, noise, share })) ?? [];

  const byzantine: ByzantineRow[] = [];
  for (const strategy of x.strategies) {
    const clean = stat(group(strategy, 'none', x.epsilon, 'semantic').map((c) => c.council)).mean;
    for (const attack of x.attacks) {
      const cells = group(strategy, attack, x.epsilon, 'semantic');
      if (cells.length === 0) continue;
      const council = stat(cells.map((c) => c.council));
      byzantine.push({
        strategy,
        attack,
        council,
        drop: attack === 'none' ? 0 : (clean - council.mean) / clean,
        exiled: stat(cells.map((c) => c.exiles.filter((e) => e.byzantine).length)).mean,
        falseExiles: cells.reduce((s, c) => s + c.falseExiles, 0),
        curve: meanCurve(cells, x.rounds),
      });
    }
  }
  const worst = x.strategies.flatMap((strategy) => {
    const rows = byzantine.filter((r) => r.strategy === strategy && r.attack !== 'none' && Number.isFinite(r.drop));
    if (rows.length === 0) return [];
    const w = rows.reduce((a, b) => (b.drop > a.drop ? b : a));
    return [{ strategy, attack: w.attack, council: w.council.mean, drop: w.drop }];
  });

  const privacy: PrivacyRow[] = [...x.epsilons]
    .sort((a, b) => a - b)
    .flatMap((epsilon) =>
      (['local', 'small', 'distributed', 'distributed-small'] as const).flatMap((variant): PrivacyRow[] => {
        const dist = variant.startsWith('distributed');
        const strategy = dist ? 'fedavg' : x.reference;
        const cells = group(
          strategy,
          'none',
          epsilon,
          'semantic',
          dist ? 'distributed' : 'local',
          variant.endsWith('small') ? 'small' : 'full',
        );
        if (cells.length === 0) return [];
        const personal = cells.map((c) => c.personal?.bondCouncil.all ?? NaN);
        const curve = meanCurve(cells, x.rounds);
        const best = Math.max(...curve.filter(Number.isFinite));
        const conv = curve.findIndex((v) => v >= best - 0.01);
        const p0 = cells[0]?.privacy;
        return [
          {
            epsilon: jsonEps(epsilon),
            variant,
            strategy,
            sigma: cells[0]?.sigma ?? NaN,
            sigmaBinding: p0?.sigmaSource?.binding ?? null,
            council: stat(cells.map((c) => c.council)),
            bondCouncil: personal.some(Number.isFinite) ? stat(personal) : null,
            curve,
            roundsToConverge: conv >= 0 ? conv + 1 : NaN,
            observerEpsilon: p0 ? jsonEps(p0.observerEpsilon) : null,
            forgeLedgerEpsilon: jsonEps(Math.max(...cells.map((c) => c.privacy?.forgeLedgerEpsilon ?? NaN))),
            releases: {
              max: Math.max(...cells.map((c) => c.privacy?.releases.max ?? 0)),
              mean: stat(cells.map((c) => c.privacy?.releases.mean ?? NaN)).mean,
            },
            limited: Math.max(...cells.map((c) => c.privacy?.limited ?? 0)),
            sharedValues: p0?.sharedValues ?? NaN,
            signal: stat(cells.flatMap((c) => (c.rounds ?? []).map((r) => r.signal))).mean,
            noise: stat(cells.flatMap((c) => (c.rounds ?? []).map((r) => r.noise))).mean,
          },
        ];
      }),
    );

  const split: SplitRow[] = (['semantic', 'param-random', 'fedsa'] as const).flatMap((sp) => {
    const cells = group(x.reference, 'none', x.epsilon, sp);
    if (cells.length === 0) return [];
    const personal = cells.map((c) => c.personal?.bondCouncil.all ?? NaN);
    const cOnly = cells.map((c) => c.personal?.councilOnly.all ?? NaN);
    return [
      {
        split: sp,
        council: stat(cells.map((c) => c.council)),
        bondCouncil: personal.some(Number.isFinite) ? stat(personal) : null,
        councilOnly: cOnly.some(Number.isFinite) ? stat(cOnly) : null,
      },
    ];
  });

  const exileRounds = x.attacks
    .filter((a) => a !== 'none')
    .flatMap((attack) => {
      const cells = group(x.reference, attack, x.epsilon, 'semantic');
      if (cells.length === 0) return [];
      let rounds: number | null = 0;
      let exiled = 0;
      for (const c of cells) {
        const bad = c.exiles.filter((e) => e.byzantine);
        exiled += bad.length;
        if (bad.length < x.byzantine) rounds = null;
        else if (rounds !== null) rounds = Math.max(rounds, ...bad.map((e) => e.round));
      }
      return [{ attack, rounds, exiled, byzantine: x.byzantine * cells.length }];
    });

  const ref = group(x.reference, 'none', x.epsilon, 'semantic').filter((c) => c.personal);
  const personalization = ref.length
    ? {
        bondCouncil: qualityStats(ref.map((c) => c.personal?.bondCouncil as Quality)),
        councilOnly: qualityStats(ref.map((c) => c.personal?.councilOnly as Quality)),
        bondOnly: qualityStats(ref.map((c) => c.personal?.bondOnly as Quality)),
        forges: Math.max(...ref.map((c) => c.personal?.forges ?? 0)),
      }
    : null;

  const coldCells = results.filter((r) => r.coldStart);
  const coldStart: ColdStartSummaryRow[] = x.coldStart.flatMap((sessions) => {
    const rows = coldCells.flatMap((c) => c.coldStart?.filter((r) => r.sessions === sessions && r.forges > 0) ?? []);
    if (rows.length === 0) return [];
    return [
      {
        sessions,
        bondCouncil: stat(rows.map((r) => r.bondCouncil.all)),
        councilOnly: stat(rows.map((r) => r.councilOnly.all)),
        bondOnly: stat(rows.map((r) => r.bondOnly.all)),
        gain: stat(rows.map((r) => r.bondCouncil.all - r.bondOnly.all)),
        forges: Math.max(...rows.map((r) => r.forges)),
      },
    ];
  });

  const aidos = aidosSummary(results);

  const perAgent: AgentRow[] = [];
  for (const cells of by.values()) {
    const c0 = (cells[0] as CellResult).cell;
    for (const agent of x.agents) {
      const rs = cells.map((c) => c.agents[agent]).filter((a) => a !== undefined);
      if (rs.length === 0) continue;
      const ps = rs.map((a) => a.personal).filter((p): p is PersonalResult => p !== null && p.forges > 0);
      perAgent.push({
        agent,
        strategy: c0.strategy,
        attack: c0.attack,
        epsilon: jsonEps(c0.epsilon),
        split: c0.split,
        council: stat(rs.map((a) => a.council)),
        personal: ps.length
          ? {
              bondCouncil: stat(ps.map((p) => p.bondCouncil.personal)),
              councilOnly: stat(ps.map((p) => p.councilOnly.personal)),
              bondOnly: stat(ps.map((p) => p.bondOnly.personal)),
            }
          : null,
      });
    }
  }

  const exiles: ExileRecord[] = results.flatMap((r) =>
    r.exiles.map((e) => ({ seed: r.cell.seed, strategy: r.cell.strategy, attack: r.cell.attack, ...e })),
  );
  return {
    cells: { done: results.length, total },
    byzantine,
    worst,
    privacy,
    split,
    personalization,
    coldStart,
    aidos,
    exiles,
    exileRounds,
    perAgent,
    targets: targets(x, results, byzantine, worst, privacy, split, personalization, exileRounds, coldStart, aidos),
  };
}

const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;
const pts = (v: number): string => `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)} points`;
const plain = (c: Cell): boolean => c.split === 'semantic' && c.noise === 'local' && c.share === 'full';

/** The number of rounds within which persistent attackers must be exiled: an update that is an echo or has no structure scores 0, so with warm-up 3, α 0.3 and threshold 0.4 its forge falls after its third round (0.7³ = 0.343). */
export const EXILE_WITHIN = 3;

function targets(
  x: Experiment,
  results: readonly CellResult[],
  byz: ByzantineRow[],
  worst: Summary['worst'],
  privacy: PrivacyRow[],
  split: SplitRow[],
  pers: Summary['personalization'],
  exileRounds: Summary['exileRounds'],
  coldStart: readonly ColdStartSummaryRow[] = [],
  aidos: AidosSummary | null = null,
): Target[] {
  const out: Target[] = [];
  const f = cohortByzantine(x, samplingOf(x, x.epsilon));
  const share = `${x.byzantine} of ${x.forges} forges Byzantine (${pct(x.byzantine / x.forges)})${x.cohort < x.forges ? `, cohorts of ${x.cohort} (rule f = ${f}: more land in one cohort with probability under ${FAULT_BOUND_DELTA} per round)` : ''}`;
  for (const w of worst) {
    if (w.strategy === 'fedavg-naive') {
      const bounded = worst.find((v) => v.strategy === 'fedavg');
      out.push({
        name: 'byzantine robustness: naive fedavg collapses',
        goal: 'FedAvg without clipping or norm bound falls at least 30% under the strongest attack (catastrophic: council quality at or below chance)',
        value: w.drop,
        unit: 'share',
        met: w.drop >= 0.3,
        detail: `worst attack ${w.attack}: council quality ${pct(w.council)}, ${pct(w.drop)} below its clean run (${share})${bounded ? `; FedAvg behind the council's norm bound falls ${pct(bounded.drop)} (worst: ${bounded.attack})` : ''}${w.drop >= 0.3 ? '' : `; short of the goal by ${pct(0.3 - w.drop)}`}`,
      });
    } else if (w.strategy.endsWith('+lora-fair')) {
      out.push({
        name: `byzantine robustness: ${w.strategy} within 5% of clean`,
        goal: 'council quality under the strongest attack within 5% of the clean run',
        value: w.drop,
        unit: 'share',
        met: w.drop <= 0.05,
        detail: `worst attack ${w.attack}: council quality ${pct(w.council)}, ${pct(w.drop)} below its clean run (${share})${w.drop <= 0.05 ? '' : `; misses by ${pct(w.drop - 0.05)}`}`,
      });
    }
  }
  // A robust rule of the default grid that these cohorts cannot hold was not run: a miss, with the reason.
  for (const s of DEFAULT_EXPERIMENT.strategies) {
    if (!s.endsWith('+lora-fair') || x.strategies.includes(s)) continue;
    const why = strategyProblem(x, s);
    if (why)
      out.push(
        missed(
          `byzantine robustness: ${s} within 5% of clean`,
          'council quality under the strongest attack within 5% of the clean run',
          'share',
          `not run: ${why}`,
        ),
      );
  }
  void byz;
  // Naive FedAvg is a baseline no council runs: its garbage aggregates make honest forges look far
  // off, so its false exiles are reported beside the claim, not inside it.
  const real = results.filter((r) => r.cell.strategy !== 'fedavg-naive');
  const fe = real.reduce((s, r) => s + r.falseExiles, 0);
  const naiveFe =
    results.length - real.length
      ? results.filter((r) => r.cell.strategy === 'fedavg-naive').reduce((s, r) => s + r.falseExiles, 0)
      : 0;
  // Before the trust warm-up no forge can be exiled at all, so 0 false exiles would hold by construction.
  const warmup = councilDefaults('').trust_warmup;
  const unjudged = fe === 0 && x.rounds < warmup;
  if (real.length)
    out.push({
      name: 'exile: no false exiles',
      goal: '0 honest forges exiled, in any cell of a strategy a council runs (all but naive FedAvg)',
      value: fe,
      unit: 'count',
      met: fe === 0 && !unjudged,
      detail: `${fe} honest forge${fe === 1 ? '' : 's'} exiled over ${real.length} cell${real.length === 1 ? '' : 's'} (every strategy, attack, ε and seed)${naiveFe ? `; naive FedAvg's cells: ${naiveFe} more` : ''}${unjudged ? `; not judged: ${x.rounds} round${x.rounds === 1 ? '' : 's'} run; the council exiles no forge before it has been scored in ${warmup} rounds` : ''}`,
    });
  if (exileRounds.length) {
    const never = exileRounds.filter((e) => e.rounds === null);
    const slow = exileRounds.filter((e) => e.rounds !== null && e.rounds > EXILE_WITHIN);
    const missed = exileRounds.reduce((a, e) => a + (e.byzantine - e.exiled), 0);
    const late = slow.length
      ? `; exiled later than round ${EXILE_WITHIN} under ${slow.map((e) => e.attack).join(', ')}`
      : '';
    out.push({
      name: `exile: persistent attackers exiled within ${EXILE_WITHIN} rounds under every attack`,
      goal: `under ${x.reference}, every Byzantine forge exiled by round ${EXILE_WITHIN}, in every attacked cell (${x.rounds} rounds run); value: attackers never exiled`,
      value: missed,
      unit: 'count',
      met: never.length === 0 && slow.length === 0 && x.rounds >= EXILE_WITHIN,
      detail: `${exileRounds.map((e) => `${e.attack}: ${e.rounds === null ? `${e.exiled} of ${e.byzantine} exiled` : `all exiled by round ${e.rounds}`}`).join('; ')}${late}${x.rounds < EXILE_WITHIN ? `; only ${x.rounds} rounds run` : ''}`,
    });
  }
  // "Beats" means by more than the noise: the mean of the per-seed differences (paired: the same
  // forges and held-out pairs) above twice its standard error. One seed measures no noise, so any
  // difference above zero would pass: not met, and the detail says so.
  const paired = (ds: readonly number[]): { d: number; se: number; met: boolean; why: string } => {
    const st = stat(ds);
    const se = standardError(st);
    if (st.n < 2) return { d: st.mean, se, met: false, why: ONE_SEED };
    const met = st.mean > 2 * se && st.mean > 0;
    return { d: st.mean, se, met, why: met ? '' : 'within the noise or below' };
  };
  const ref = results.filter(
    (r) =>
      r.cell.strategy === x.reference &&
      r.cell.attack === 'none' &&
      r.cell.epsilon === x.epsilon &&
      plain(r.cell) &&
      r.personal,
  );
  if (pers && ref.length) {
    for (const [which, pick] of [
      ['council-only', (r: CellResult) => r.personal?.councilOnly.all ?? NaN],
      ['bond-only', (r: CellResult) => r.personal?.bondOnly.all ?? NaN],
    ] as const) {
      const p = paired(ref.map((r) => (r.personal?.bondCouncil.all ?? NaN) - pick(r)));
      out.push({
        name: `personalization: bond + council beats ${which}`,
        goal: `bond + council above ${which} on each player's held-out preferences (personal and craft), by more than twice the standard error over seeds`,
        value: p.d,
        unit: 'points',
        met: p.met,
        detail: `bond + council ${pct(pers.bondCouncil.all.mean)} vs ${which} ${pct(which === 'council-only' ? pers.councilOnly.all.mean : pers.bondOnly.all.mean)}: ${pts(p.d)} (standard error ${pct(p.se)}${p.why ? `; ${p.why}` : ''})`,
      });
    }
  }
  const sem = split.find((s) => s.split === 'semantic');
  for (const control of ['param-random', 'fedsa'] as const) {
    const other = split.find((s) => s.split === control);
    if (!sem?.bondCouncil || !other?.bondCouncil) continue;
    const bySeed = new Map(
      results
        .filter(
          (r) =>
            r.cell.strategy === x.reference &&
            r.cell.attack === 'none' &&
            r.cell.epsilon === x.epsilon &&
            r.cell.split === control,
        )
        .map((r) => [r.cell.seed, r]),
    );
    const p = paired(
      ref.flatMap((r) => {
        const o = bySeed.get(r.cell.seed);
        return o?.personal && r.personal ? [r.personal.bondCouncil.all - o.personal.bondCouncil.all] : [];
      }),
    );
    const what =
      control === 'param-random'
        ? 'a random-LoRA-parameter split (one adapter on all entries, a random half of its parameters federated)'
        : 'a FedSA-LoRA split (one adapter on all entries, A federated, B local)';
    out.push({
      name: `semantic split beats ${control} split`,
      goal: `bond + council with the gameplay-rule split above ${what}, by more than twice the standard error`,
      value: p.d,
      unit: 'points',
      met: p.met,
      detail: `semantic ${pct(sem.bondCouncil.mean)} vs ${control} ${pct(other.bondCouncil.mean)}: ${pts(p.d)} (standard error ${pct(p.se)}${p.why ? `; ${p.why}` : ''}); council alone ${pct(sem.council.mean)} vs ${pct(other.council.mean)}`,
    });
  }
  const local = privacy.filter((p) => p.variant === 'local');
  const inf = local.find((p) => p.epsilon === null);
  for (const variant of ['local', 'small', 'distributed', 'distributed-small'] as const) {
    const at4 = privacy.find((p) => p.variant === variant && p.epsilon === 4);
    // Against ε = ∞ of the same adapter (no noise: local and distributed coincide).
    const base = variant.endsWith('small') ? privacy.find((p) => p.variant === 'small' && p.epsilon === null) : inf;
    if (!at4 || !base) continue;
    const gap = base.council.mean - at4.council.mean;
    const noise = variant.startsWith('distributed')
      ? 'distributed noise (each forge adds a 1/K share of the variance; the council sees only the sum under secure aggregation, so FedAvg)'
      : 'local noise (each forge adds σ)';
    const how = `${noise}, ${variant.endsWith('small') ? `a small shared adapter (${at4.sharedValues} federated values)` : `the full adapter (${at4.sharedValues} federated values)`}`;
    // Distributed noise runs another rule than the ε = ∞ run: say so, and show that rule without
    // noise where the Byzantine grid ran it (its clean cell at ε = ∞, the full adapter).
    const otherRule = at4.strategy !== base.strategy;
    const sameRule =
      otherRule && !variant.endsWith('small')
        ? results.filter(
            (r) =>
              r.cell.strategy === at4.strategy &&
              r.cell.attack === 'none' &&
              r.cell.epsilon === Infinity &&
              plain(r.cell),
          )
        : [];
    const sameRuleInf = sameRule.length ? stat(sameRule.map((r) => r.council)).mean : null;
    const rules = otherRule ? `; ε = 4 with ${at4.strategy} against ε = ∞ with ${base.strategy}` : '';
    const withoutNoise =
      sameRuleInf === null
        ? ''
        : `; ${at4.strategy} at ε ∞ (no noise): ${pct(sameRuleInf)}, ${(100 * Math.abs(sameRuleInf - at4.council.mean)).toFixed(1)} points ${sameRuleInf >= at4.council.mean ? 'above' : 'below'} ε 4`;
    out.push({
      name: `privacy/utility at scale: ε = 4 within 5 points of ε = ∞ (${variant})`,
      goal: `council quality at ε = 4 no more than 5 points below ε = ∞, ${how}, ${x.forges} forges, cohorts of ${x.cohort}${rules}; value: points below ε = ∞`,
      value: gap,
      unit: 'points',
      met: gap <= 0.05,
      detail: `ε 4: ${pct(at4.council.mean)} (σ ${at4.sigma.toFixed(2)}, ε toward observers ${at4.observerEpsilon?.toFixed(2) ?? '∞'}, a forge's own ledger up to ε ${at4.forgeLedgerEpsilon?.toFixed(1) ?? '∞'} over ${at4.releases.max} releases; ${at4.limited} forges reached their lifetime ε and sat out) vs ε ∞ ${pct(base.council.mean)}: ${(100 * Math.abs(gap)).toFixed(1)} points ${gap >= 0 ? 'below' : 'above'}${gap <= 0.05 ? '' : `; misses by ${(100 * (gap - 0.05)).toFixed(1)} points`}${withoutNoise}`,
    });
  }
  if (local.length > 1) {
    // Monotone within noise: no larger ε may score below a smaller one by more than twice the standard error of the difference.
    let worstGap = 0;
    let where = '';
    for (let i = 0; i < local.length; i++) {
      for (let j = i + 1; j < local.length; j++) {
        const a = local[i] as PrivacyRow;
        const b = local[j] as PrivacyRow;
        const se = Math.sqrt(
          a.council.sd ** 2 / Math.max(1, a.council.n) + b.council.sd ** 2 / Math.max(1, b.council.n),
        );
        const gap = a.council.mean - b.council.mean - 2 * se;
        if (gap > worstGap) {
          worstGap = gap;
          where = `ε ${a.epsilon ?? '∞'} scores ${pct(a.council.mean)} but ε ${b.epsilon ?? '∞'} only ${pct(b.council.mean)}`;
        }
      }
    }
    out.push({
      name: 'privacy/utility: monotone in ε within noise',
      goal: 'council quality never lower at a larger ε beyond 2 standard errors',
      value: worstGap,
      unit: 'share',
      met: worstGap <= 0,
      detail:
        worstGap > 0
          ? `${where}: ${pct(worstGap)} beyond the noise`
          : `over ε ${local.map((p) => p.epsilon ?? '∞').join(', ')}: ${local.map((p) => pct(p.council.mean)).join(', ')}`,
    });
  }
  out.push(coldStartTarget(x, coldStart));
  out.push(aidosTarget(x, aidos));
  return out;
}

function aidosSummary(results: readonly CellResult[]): AidosSummary | null {
  const cells = results.filter((r) => r.aidos);
  const as = cells.map((r) => r.aidos as AidosResult);
  if (as.length === 0) return null;
  const rounds = Math.max(...as.map((a) => a.federated.length));
  const last = (f: (a: AidosResult) => Detection | undefined, k: 'precision' | 'recall'): Stat =>
    stat(as.map((a) => f(a)?.[k] ?? NaN));
  return {
    rounds: Array.from({ length: rounds }, (_, i) => ({
      round: i + 1,
      federated: stat(as.map((a) => a.federated[i]?.f1 ?? NaN)),
      single: stat(as.map((a) => a.single[i]?.f1 ?? NaN)),
      gain: stat(as.map((a) => (a.federated[i]?.f1 ?? NaN) - Math.max(a.single[i]?.f1 ?? NaN, a.singleConverged.f1))),
    })),
    singleConverged: stat(as.map((a) => a.singleConverged.f1)),
    bondCouncil: stat(as.map((a) => a.bondCouncil.f1)),
    allSlop: stat(as.map((a) => a.allSlop?.f1 ?? NaN)),
    last: {
      federated: {
        precision: last((a) => a.federated[a.federated.length - 1], 'precision'),
        recall: last((a) => a.federated[a.federated.length - 1], 'recall'),
      },
      single: {
        precision: last((a) => a.single[a.single.length - 1], 'precision'),
        recall: last((a) => a.single[a.single.length - 1], 'recall'),
      },
    },
    forges: Math.max(...as.map((a) => a.forges)),
    probe: Math.max(...as.map((a) => a.probe)),
  };
}

/** The margin (F1 points) by which the federated Aidos adapter must beat a single forge, and the round from which on. */
const AIDOS_MARGIN = 0.1;
const AIDOS_FROM_ROUND = 2;

/**
 * The design's first research metric. Met when, in every round from `AIDOS_FROM_ROUND` on, the
 * federated council adapter's F1 on held-out slop beats the stronger single-forge baseline (the
 * forge's own adapter after as many rounds, or its bond trained to convergence) by at least
 * `AIDOS_MARGIN`, and by more than twice the standard error over seeds. The value: the smallest
 * of those per-round gains.
 */
function aidosTarget(x: Experiment, a: AidosSummary | null): Target {
  const name = 'Aidos slop-detection F1: federated council beats a single forge, round by round';
  const goal = `F1 on held-out slop (phrases no forge wrote, words no memoir holds; slop the positive class) of the federated Aidos council adapter at least ${(AIDOS_MARGIN * 100).toFixed(0)} points above a single forge's (its own adapter trained alone for as many rounds, or its bond trained to convergence, whichever is higher) in every round from round ${AIDOS_FROM_ROUND} on, beyond 2 standard errors over seeds`;
  const rows = a?.rounds.filter((r) => r.round >= AIDOS_FROM_ROUND) ?? [];
  if (!a || rows.length === 0)
    return missed(
      name,
      goal,
      'points',
      x.rounds < AIDOS_FROM_ROUND
        ? `not measured: ${x.rounds} round${x.rounds === 1 ? '' : 's'} run, the claim starts at round ${AIDOS_FROM_ROUND}`
        : 'not measured: the clean reference run has not finished',
    );
  const oneSeed = rows.some((r) => r.gain.n < 2);
  const short = rows.filter((r) => !(r.gain.mean >= AIDOS_MARGIN && r.gain.mean > 2 * standardError(r.gain)));
  const value = Math.min(...rows.map((r) => r.gain.mean));
  const each = a.rounds
    .map(
      (r) =>
        `round ${r.round}: ${pct(r.federated.mean)} vs ${pct(r.single.mean)} (${pts(r.gain.mean)} over the stronger single)`,
    )
    .join('; ');
  return {
    name,
    goal,
    value,
    unit: 'points',
    met: short.length === 0 && !oneSeed,
    detail: `federated vs a single forge alone: ${each}; a single forge's bond to convergence ${pct(a.singleConverged.mean)}, bond + council ${pct(a.bondCouncil.mean)}; calling every passage slop ${pct(a.allSlop.mean)}; ${a.forges} single forges, ${a.probe} held-out texts, mean over seeds${short.length ? `; missed in round${short.length === 1 ? '' : 's'} ${short.map((r) => r.round).join(', ')}` : ''}${oneSeed ? `; ${ONE_SEED}` : ''}`,
  };
}

/**
 * Cold start: the council helps most where a player has least history. Met when bond + council
 * beats bond-only for the newcomers with the fewest sessions by more than twice the standard
 * error, and its gain there is larger than with the most sessions. The value: that difference of
 * gains (points).
 */
function coldStartTarget(x: Experiment, rows: readonly ColdStartSummaryRow[]): Target {
  const name = 'cold start: the fewer sessions, the more bond + council beats bond-only';
  const goal = `for newcomers joining after the last round with ${x.coldStart.join(', ')} sessions: bond + council above bond-only with the fewest sessions (beyond 2 standard errors), and by more than with the most`;
  const first = rows[0];
  const last = rows[rows.length - 1];
  if (!first || !last || rows.length < 2)
    return missed(
      name,
      goal,
      'points',
      x.coldStart.length < 2
        ? 'not measured: give two or more session counts (--cold-start 1,2,4,8)'
        : 'not measured: the clean reference run has not finished',
    );
  const se = standardError(first.gain);
  const oneSeed = first.gain.n < 2;
  const beats = !oneSeed && first.gain.mean > 2 * se && first.gain.mean > 0;
  const shrinks = first.gain.mean > last.gain.mean;
  const value = first.gain.mean - last.gain.mean;
  const each = rows
    .map(
      (r) =>
        `${r.sessions} session${r.sessions === 1 ? '' : 's'}: bond + council ${pct(r.bondCouncil.mean)}, bond only ${pct(r.bondOnly.mean)}, council only ${pct(r.councilOnly.mean)} (${pts(r.gain.mean)})`,
    )
    .join('; ');
  const why = [
    beats
      ? ''
      : oneSeed
        ? ONE_SEED
        : `with ${first.sessions} session${first.sessions === 1 ? '' : 's'} the gain is within the noise (standard error ${pct(se)})`,
    shrinks ? '' : `the gain does not shrink from ${first.sessions} to ${last.sessions} sessions`,
  ].filter(Boolean);
  return {
    name,
    goal,
    value,
    unit: 'points',
    met: beats && shrinks,
    detail: `${each}; ${x.newcomers} newcomers per session count, mean over seeds${why.length ? `; missed: ${why.join(', ')}` : ''}`,
  };
}
