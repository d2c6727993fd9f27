import { ATTACKS, type Experiment } from '../experiment.js';
import type { Stat, Summary } from '../summary.js';

/**
 * The results as terminal text: the strategies × attacks table (worst case per strategy marked),
 * round-by-round curves as sparklines, the privacy sweep, the split and personalization
 * comparisons, the exiles and the targets. Pure: the caller passes how to emphasise (colour or
 * not) so this module stays free of terminal concerns.
 */
export interface Emphasis {
  worst(s: string): string;
  good(s: string): string;
  bad(s: string): string;
  dim(s: string): string;
}

export const PLAIN: Emphasis = { worst: (s) => `${s}*`, good: (s) => s, bad: (s) => s, dim: (s) => s };

const BARS = '▁▂▃▄▅▆▇█';

/** A sparkline on a fixed [0, 1] scale (accuracies), so curves of different rows compare. */
export function unitSparkline(values: readonly number[]): string {
  return values
    .map((v) => (Number.isFinite(v) ? (BARS[Math.max(0, Math.min(7, Math.round(v * 7)))] as string) : ' '))
    .join('');
}

export const pct = (v: number): string => (Number.isFinite(v) ? `${(v * 100).toFixed(1)}%` : '—');
const ms = (s: Stat): string =>
  Number.isFinite(s.mean) ? `${(s.mean * 100).toFixed(1)}±${(s.sd * 100).toFixed(1)}` : '—';

function pad(s: string, n: number, right = false): string {
  const len = [...s.replace(/\u001b\[[0-9;]*m/g, '')].length;
  return right ? ' '.repeat(Math.max(0, n - len)) + s : s + ' '.repeat(Math.max(0, n - len));
}

export function renderText(x: Experiment, s: Summary, e: Emphasis = PLAIN): string {
  const out: string[] = [];
  out.push(
    `${x.forges} forges (${x.byzantine} Byzantine)${x.cohort < x.forges ? `, cohorts of ${x.cohort}` : ''}, ${x.rounds} rounds, agents ${x.agents.join(', ')}, seeds ${x.seeds.join(', ')}; cells ${s.cells.done}/${s.cells.total}`,
  );
  out.push('');
  out.push(
    `Council quality (held-out craft pairwise accuracy, %, mean±sd over seeds) at ε ${x.epsilon === Infinity ? '∞' : x.epsilon}; * = worst attack per strategy`,
  );
  const attacks = ATTACKS.filter((a) => s.byzantine.some((r) => r.attack === a));
  const w0 = Math.max(10, ...x.strategies.map((t) => t.length));
  out.push([pad('strategy', w0), ...attacks.map((a) => pad(a, 12, true)), pad('worst drop', 12, true)].join(' '));
  for (const strategy of x.strategies) {
    const rows = s.byzantine.filter((r) => r.strategy === strategy);
    if (rows.length === 0) continue;
    const worst = s.worst.find((w) => w.strategy === strategy);
    const cells = attacks.map((a) => {
      const r = rows.find((y) => y.attack === a);
      if (!r) return pad('', 12);
      const t = ms(r.council);
      return pad(worst?.attack === a ? e.worst(t) : t, 12, true);
    });
    out.push([pad(strategy, w0), ...cells, pad(worst ? pct(worst.drop) : '—', 12, true)].join(' '));
  }
  out.push('');
  out.push('Rounds (council quality after each round, ▁ = 0%, █ = 100%)');
  for (const r of s.byzantine)
    out.push(
      `  ${pad(`${r.strategy} / ${r.attack}`, w0 + 14)} ${unitSparkline(r.curve)}  ${r.curve.map((v) => pct(v)).join(' → ')}`,
    );
  if (s.privacy.length) {
    out.push('');
    out.push(
      `Privacy/utility (no attack; σ for ε toward observers of the council model over ${x.rounds} rounds, δ ${x.delta}${x.cohort < x.forges ? `, Poisson cohorts at q = ${(x.cohort / x.forges).toFixed(3)}` : ''}; ledger: the most a forge's own ledger charged, unamplified, within its lifetime ε; at limit: forges that sat out a release their ledger could not afford; σ* : raised by the council so that one release costs a forge at most 1/8 of its lifetime ε, its privacy floor)`,
    );
    out.push(
      `  ${pad('ε', 5)} ${pad('noise', 17)} ${pad('values', 7, true)} ${pad('σ', 7, true)} ${pad('council', 11, true)} ${pad('bond+council', 13, true)} ${pad('converged', 10, true)} ${pad('ledger ε', 9, true)} ${pad('at limit', 8, true)} ${pad('signal/noise', 13, true)}  rounds`,
    );
    for (const p of s.privacy) {
      out.push(
        `  ${pad(p.epsilon === null ? '∞' : String(p.epsilon), 5)} ${pad(p.variant, 17)} ${pad(String(p.sharedValues), 7, true)} ${pad(`${p.sigma.toFixed(2)}${p.sigmaBinding === 'floor' ? '*' : ''}`, 7, true)} ${pad(ms(p.council), 11, true)} ${pad(p.bondCouncil ? ms(p.bondCouncil) : '—', 13, true)} ${pad(Number.isFinite(p.roundsToConverge) ? `round ${p.roundsToConverge}` : '—', 10, true)} ${pad(p.forgeLedgerEpsilon === null ? '∞' : p.forgeLedgerEpsilon.toFixed(1), 9, true)} ${pad(String(p.limited ?? 0), 8, true)} ${pad(Number.isFinite(p.signal) ? `${p.signal.toFixed(2)}/${p.noise.toFixed(2)}` : '—', 13, true)}  ${unitSparkline(p.curve)}`,
      );
    }
  }
  if (s.personalization) {
    const q = s.personalization;
    out.push('');
    out.push(
      `Personalization (${x.reference}, no attack; ${q.forges} honest forges with personal preferences; held-out accuracy %)`,
    );
    out.push(`  ${pad('adapters', 14)} ${pad('personal', 12, true)} ${pad('craft', 12, true)} ${pad('all', 12, true)}`);
    for (const [name, v] of [
      ['bond+council', q.bondCouncil],
      ['council only', q.councilOnly],
      ['bond only', q.bondOnly],
    ] as const)
      out.push(
        `  ${pad(name, 14)} ${pad(ms(v.personal), 12, true)} ${pad(ms(v.craft), 12, true)} ${pad(ms(v.all), 12, true)}`,
      );
  }
  if (s.coldStart.length) {
    out.push('');
    out.push(
      `Cold start (${x.newcomers} newcomers per session count, joining after round ${x.rounds}; held-out accuracy on all their preferences %)`,
    );
    out.push(
      `  ${pad('sessions', 9)} ${pad('bond+council', 13, true)} ${pad('council only', 13, true)} ${pad('bond only', 13, true)} ${pad('gain', 14, true)}`,
    );
    for (const r of s.coldStart)
      out.push(
        `  ${pad(String(r.sessions), 9)} ${pad(ms(r.bondCouncil), 13, true)} ${pad(ms(r.councilOnly), 13, true)} ${pad(ms(r.bondOnly), 13, true)} ${pad(`${(r.gain.mean * 100).toFixed(1)} points`, 14, true)}`,
      );
  }
  if (s.aidos) {
    const a = s.aidos;
    out.push('');
    out.push(
      `Aidos slop detection (F1 %, slop the positive class, on ${a.probe} held-out passages; single forge: its own adapter alone, mean of ${a.forges} forges)`,
    );
    out.push(
      `  ${pad('round', 6)} ${pad('federated', 11, true)} ${pad('single forge', 13, true)} ${pad('gain', 14, true)}`,
    );
    for (const r of a.rounds)
      out.push(
        `  ${pad(String(r.round), 6)} ${pad(ms(r.federated), 11, true)} ${pad(ms(r.single), 13, true)} ${pad(`${(r.gain.mean * 100).toFixed(1)} points`, 14, true)}`,
      );
    out.push(
      `  a single forge's bond to convergence ${ms(a.singleConverged)}; that bond over the final council adapter ${ms(a.bondCouncil)}; calling every passage slop ${ms(a.allSlop)}; gain: federated − the stronger single-forge baseline`,
    );
  }
  if (s.split.length) {
    out.push('');
    out.push(
      'Split (semantic: council + bond adapters; controls: one adapter on all entries, part of it federated; held-out accuracy on all of a player’s preferences)',
    );
    for (const r of s.split)
      out.push(
        `  ${pad(r.split, 13)} council ${pad(ms(r.council), 10, true)}   council only ${pad(r.councilOnly ? ms(r.councilOnly) : '—', 10, true)}   personalised ${pad(r.bondCouncil ? ms(r.bondCouncil) : '—', 10, true)}`,
      );
  }
  if (x.agents.length > 1) {
    out.push('');
    out.push(
      `Per agent (council quality at ε ${x.epsilon === Infinity ? '∞' : x.epsilon}, %, mean±sd; personal: bond+council / council only / bond only on the players' own preferences)`,
    );
    const eps = x.epsilon === Infinity ? null : x.epsilon;
    for (const agent of x.agents) {
      out.push(`  ${agent}`);
      for (const strategy of x.strategies) {
        const rows = s.perAgent.filter(
          (r) => r.agent === agent && r.strategy === strategy && r.epsilon === eps && r.split === 'semantic',
        );
        if (rows.length === 0) continue;
        out.push(
          `    ${pad(strategy, w0)} ${attacks.map((a) => pad(rows.find((r) => r.attack === a) ? ms((rows.find((r) => r.attack === a) as (typeof rows)[number]).council) : '', 12, true)).join(' ')}`,
        );
      }
      const p = s.perAgent.find(
        (r) =>
          r.agent === agent &&
          r.strategy === x.reference &&
          r.attack === 'none' &&
          r.epsilon === eps &&
          r.split === 'semantic',
      )?.personal;
      if (p) out.push(`    personal: ${ms(p.bondCouncil)} / ${ms(p.councilOnly)} / ${ms(p.bondOnly)}`);
    }
  }
  out.push('');
  const byzEx = s.exiles.filter((x) => x.byzantine).length;
  const falseEx = s.exiles.filter((x) => !x.byzantine);
  out.push(
    `Exiles (the Stoa Falls): ${byzEx} Byzantine, ${falseEx.length} honest (false exiles)${falseEx.length ? `: ${falseEx.map((f) => `${f.forge} after round ${f.round} (${f.strategy}/${f.attack}, seed ${f.seed})`).join('; ')}` : ''}`,
  );
  if (s.exileRounds.length)
    out.push(
      `  ${x.reference}: ${s.exileRounds.map((r) => `${r.attack} ${r.rounds === null ? `${r.exiled}/${r.byzantine} exiled` : `all by round ${r.rounds}`}`).join(', ')}`,
    );
  out.push('');
  out.push('Targets');
  for (const t of s.targets) out.push(`  ${t.met ? e.good('met    ') : e.bad('MISSED ')} ${t.name}: ${t.detail}`);
  return out.join('\n');
}
