import type { CellResult, PersonalResult, Quality } from './cell.js';
import type { FederatingAgent } from '../memoir/format/agents.js';
import { cellKey, type Attack, type Experiment, type SimStrategy, type Split } from './experiment.js';

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

export interface PrivacyRow {
  /** null: ε = ∞ (clipping, no noise). */
  epsilon: number | null;
  sigma: number;
  council: Stat;
  bondCouncil: Stat | null;
  curve: number[];
}

export interface SplitRow {
  split: Split;
  council: Stat;
  bondCouncil: Stat | null;
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

export interface Target {
  /** Recognisable claim names: byzantine robustness, personalization, semantic split, privacy/utility, false exiles. */
  name: string;
  goal: string;
  value: number;
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
  personalization: { bondCouncil: Record<keyof Quality, Stat>; councilOnly: Record<keyof Quality, Stat>; bondOnly: Record<keyof Quality, Stat>; forges: number } | null;
  exiles: ExileRecord[];
  /** Every configuration × every measured agent (mean ± sd over seeds). */
  perAgent: AgentRow[];
  targets: Target[];
}

const jsonEps = (e: number): number | null => (e === Infinity ? null : e);

function meanCurve(cells: readonly CellResult[], rounds: number): number[] {
  return Array.from({ length: rounds }, (_, i) => stat(cells.map((c) => c.curve[i] ?? NaN)).mean);
}

function qualityStats(qs: readonly Quality[]): Record<keyof Quality, Stat> {
  return { personal: stat(qs.map((q) => q.personal)), craft: stat(qs.map((q) => q.craft)), all: stat(qs.map((q) => q.all)) };
}

export function summarize(x: Experiment, results: readonly CellResult[], total: number): Summary {
  const by = new Map<string, CellResult[]>();
  for (const r of results) {
    const k = cellKey({ ...r.cell, seed: undefined });
    by.set(k, [...(by.get(k) ?? []), r]);
  }
  const group = (strategy: SimStrategy, attack: Attack, epsilon: number, split: Split): CellResult[] => by.get(cellKey({ strategy, attack, epsilon, split })) ?? [];

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
    .flatMap((epsilon) => {
      const cells = group(x.reference, 'none', epsilon, 'semantic');
      if (cells.length === 0) return [];
      const personal = cells.map((c) => c.personal?.bondCouncil.all ?? NaN);
      return [{ epsilon: jsonEps(epsilon), sigma: cells[0]?.sigma ?? NaN, council: stat(cells.map((c) => c.council)), bondCouncil: personal.some(Number.isFinite) ? stat(personal) : null, curve: meanCurve(cells, x.rounds) }];
    });

  const split: SplitRow[] = (['semantic', 'random'] as const).flatMap((s) => {
    const cells = group(x.reference, 'none', x.epsilon, s);
    if (cells.length === 0) return [];
    const personal = cells.map((c) => c.personal?.bondCouncil.all ?? NaN);
    return [{ split: s, council: stat(cells.map((c) => c.council)), bondCouncil: personal.some(Number.isFinite) ? stat(personal) : null }];
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
        personal: ps.length ? { bondCouncil: stat(ps.map((p) => p.bondCouncil.personal)), councilOnly: stat(ps.map((p) => p.councilOnly.personal)), bondOnly: stat(ps.map((p) => p.bondOnly.personal)) } : null,
      });
    }
  }

  const exiles: ExileRecord[] = results.flatMap((r) => r.exiles.map((e) => ({ seed: r.cell.seed, strategy: r.cell.strategy, attack: r.cell.attack, ...e })));
  return { cells: { done: results.length, total }, byzantine, worst, privacy, split, personalization, exiles, perAgent, targets: targets(x, results, worst, privacy, split, personalization) };
}

const pct = (v: number): string => `${(v * 100).toFixed(1)}%`;
const pts = (v: number): string => `${v >= 0 ? '+' : ''}${(v * 100).toFixed(1)} points`;

function targets(x: Experiment, results: readonly CellResult[], worst: Summary['worst'], privacy: PrivacyRow[], split: SplitRow[], pers: Summary['personalization']): Target[] {
  const out: Target[] = [];
  const share = `${x.byzantine} of ${x.forges} forges Byzantine (${pct(x.byzantine / x.forges)})`;
  for (const w of worst) {
    if (w.strategy === 'fedavg') {
      out.push({ name: 'byzantine robustness: fedavg collapses', goal: 'FedAvg council quality falls at least 30% under the strongest attack', value: w.drop, met: w.drop >= 0.3, detail: `worst attack ${w.attack}: council quality ${pct(w.council)}, ${pct(w.drop)} below its clean run (${share})${w.drop >= 0.3 ? '' : `; short of the goal by ${pct(0.3 - w.drop)}`}` });
    } else if (w.strategy.endsWith('+lora-fair')) {
      out.push({ name: `byzantine robustness: ${w.strategy} within 5% of clean`, goal: 'council quality under the strongest attack within 5% of the clean run', value: w.drop, met: w.drop <= 0.05, detail: `worst attack ${w.attack}: council quality ${pct(w.council)}, ${pct(w.drop)} below its clean run (${share})${w.drop <= 0.05 ? '' : `; misses by ${pct(w.drop - 0.05)}`}` });
    }
  }
  const clean = results.filter((r) => r.cell.attack === 'none');
  if (clean.length) {
    const fe = clean.reduce((s, r) => s + r.falseExiles, 0);
    out.push({ name: 'false exiles: honest forges never exiled in the clean run', goal: '0 honest forges exiled in clean runs', value: fe, met: fe === 0, detail: `${fe} honest forge${fe === 1 ? '' : 's'} exiled over ${clean.length} clean cell${clean.length === 1 ? '' : 's'} (every strategy, ε and seed)` });
  }
  // "Beats" means by more than the noise: the mean of the per-seed differences (paired: the same
  // forges and held-out pairs) above twice its standard error (with one seed: above zero).
  const paired = (ds: readonly number[]): { d: number; se: number; met: boolean } => {
    const st = stat(ds);
    const se = st.n > 1 ? st.sd / Math.sqrt(st.n) : 0;
    return { d: st.mean, se, met: st.mean > 2 * se && st.mean > 0 };
  };
  const ref = results.filter((r) => r.cell.strategy === x.reference && r.cell.attack === 'none' && r.cell.epsilon === x.epsilon && r.cell.split === 'semantic' && r.personal);
  if (pers && ref.length) {
    for (const [which, pick] of [['council-only', (r: CellResult) => r.personal?.councilOnly.all ?? NaN], ['bond-only', (r: CellResult) => r.personal?.bondOnly.all ?? NaN]] as const) {
      const p = paired(ref.map((r) => (r.personal?.bondCouncil.all ?? NaN) - pick(r)));
      out.push({ name: `personalization: bond + council beats ${which}`, goal: `bond + council above ${which} on each player's held-out preferences (personal and craft), by more than twice the standard error over seeds`, value: p.d, met: p.met, detail: `bond + council ${pct(pers.bondCouncil.all.mean)} vs ${which} ${pct(which === 'council-only' ? pers.councilOnly.all.mean : pers.bondOnly.all.mean)}: ${pts(p.d)} (standard error ${pct(p.se)}${p.met ? '' : '; within the noise'})` });
    }
  }
  const sem = split.find((s) => s.split === 'semantic');
  const rnd = split.find((s) => s.split === 'random');
  if (sem?.bondCouncil && rnd?.bondCouncil) {
    const bySeed = new Map(results.filter((r) => r.cell.strategy === x.reference && r.cell.attack === 'none' && r.cell.epsilon === x.epsilon && r.cell.split === 'random').map((r) => [r.cell.seed, r]));
    const p = paired(ref.flatMap((r) => {
      const other = bySeed.get(r.cell.seed);
      return other?.personal && r.personal ? [r.personal.bondCouncil.all - other.personal.bondCouncil.all] : [];
    }));
    out.push({ name: 'semantic split beats random split', goal: 'bond + council quality with the gameplay-rule split above a random split of the same entries, by more than twice the standard error', value: p.d, met: p.met, detail: `semantic ${pct(sem.bondCouncil.mean)} vs random ${pct(rnd.bondCouncil.mean)}: ${pts(p.d)} (standard error ${pct(p.se)}${p.met ? '' : '; within the noise'}); council alone ${pct(sem.council.mean)} vs ${pct(rnd.council.mean)}` });
  }
  if (privacy.length > 1) {
    // Monotone within noise: no larger ε may score below a smaller one by more than twice the standard error of the difference.
    let worstGap = 0;
    let where = '';
    for (let i = 0; i < privacy.length; i++) {
      for (let j = i + 1; j < privacy.length; j++) {
        const a = privacy[i] as PrivacyRow;
        const b = privacy[j] as PrivacyRow;
        const se = Math.sqrt(a.council.sd ** 2 / Math.max(1, a.council.n) + b.council.sd ** 2 / Math.max(1, b.council.n));
        const gap = a.council.mean - b.council.mean - 2 * se;
        if (gap > worstGap) {
          worstGap = gap;
          where = `ε ${a.epsilon ?? '∞'} scores ${pct(a.council.mean)} but ε ${b.epsilon ?? '∞'} only ${pct(b.council.mean)}`;
        }
      }
    }
    out.push({ name: 'privacy/utility: monotone in ε within noise', goal: 'council quality never lower at a larger ε beyond 2 standard errors', value: worstGap, met: worstGap <= 0, detail: worstGap > 0 ? `${where}: ${pct(worstGap)} beyond the noise` : `over ε ${privacy.map((p) => p.epsilon ?? '∞').join(', ')}: ${privacy.map((p) => pct(p.council.mean)).join(', ')}` });
  }
  return out;
}
