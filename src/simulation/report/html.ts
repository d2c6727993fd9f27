import { ATTACK_TEXT, type Experiment } from '../experiment.js';
import type { Stat, Summary, Target } from '../summary.js';
import { barChart, esc, lineChart, type Series } from './svg.js';

/**
 * The self-contained HTML report (`kourai federate simulate --out DIR` → DIR/report.html): one
 * file, inline CSS and SVG, no script and no external asset, so it reads the same offline, in a
 * mail attachment or with JavaScript off.
 */
const CSS = `
body{font:15px/1.45 system-ui,-apple-system,Segoe UI,sans-serif;margin:2rem auto;max-width:1180px;padding:0 1rem;color:#1d1d1f;background:#fff}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{margin-top:2.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem}
.sub{color:#555}.charts{display:flex;flex-wrap:wrap;gap:1rem}
table{border-collapse:collapse;margin:.6rem 0}th,td{padding:.3rem .6rem;border:1px solid #ddd;text-align:right}th{background:#f4f4f6}td.l,th.l{text-align:left}
td.worst{outline:2px solid #d1495b;font-weight:700}.met{color:#2e7d32;font-weight:700}.missed{color:#c62828;font-weight:700}
svg.chart{background:#fafafa;border:1px solid #e4e4e4;border-radius:6px}
svg .title{font-weight:600;font-size:13px}svg .tick{font-size:11px;fill:#555}svg .axis{font-size:12px;fill:#333}svg .legend{font-size:12px}
svg .grid{stroke:#e6e6e6}svg .axisline{stroke:#888}svg .whisker{stroke-width:1.5}
code{background:#f2f2f2;padding:0 .25rem;border-radius:3px}
`;

const pct = (v: number): string => (Number.isFinite(v) ? `${(v * 100).toFixed(1)}%` : '—');
const ms = (s: Stat): string =>
  Number.isFinite(s.mean) ? `${(s.mean * 100).toFixed(1)} ± ${(s.sd * 100).toFixed(1)}` : '—';

/** Background from red (chance or worse) to green (perfect) for an accuracy. */
function heat(v: number): string {
  if (!Number.isFinite(v)) return '#fff';
  const t = Math.max(0, Math.min(1, (v - 0.4) / 0.6));
  return `hsl(${Math.round(t * 120)},55%,88%)`;
}

function targetValue(t: Target): string {
  if (!Number.isFinite(t.value)) return '—';
  switch (t.unit) {
    case 'share':
      return `${(t.value * 100).toFixed(1)}%`;
    case 'points':
      return `${t.value >= 0 ? '+' : ''}${(t.value * 100).toFixed(1)} pts`;
    case 'rounds':
      return `${t.value} rounds`;
    case 'count':
      return String(t.value);
  }
}

export function renderHtml(
  x: Experiment,
  s: Summary,
  meta: { id: string; generatedAt: string; command?: string },
): string {
  const eps = (e: number | null): string => (e === null ? '∞' : String(e));
  const parts: string[] = [];
  parts.push(
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>kourai federate simulate — ${esc(meta.id)}</title><style>${CSS}</style></head><body>`,
  );
  parts.push(`<h1>Federated council: simulated evaluation</h1>`);
  parts.push(
    `<p class="sub">${x.forges} forges (${x.byzantine} Byzantine)${x.cohort < x.forges ? `, cohorts of ${x.cohort} per round` : ''}, ${x.rounds} rounds, agents ${esc(x.agents.join(', '))}, seeds ${esc(x.seeds.join(', '))}, ${x.sessions} sessions × ${x.turns} turns per forge, ${x.localEpochs} local epochs, clip S = ${x.clipNorm}. Cells ${s.cells.done}/${s.cells.total}. Experiment <code>${esc(meta.id)}</code>, ${esc(meta.generatedAt)}.${meta.command ? ` Reproduce: <code>${esc(meta.command)}</code>` : ''}</p>`,
  );

  parts.push(
    '<h2 id="targets">Targets</h2><table><tr><th class="l">claim</th><th class="l">goal</th><th>value</th><th class="l">result</th></tr>',
  );
  for (const t of s.targets)
    parts.push(
      `<tr><td class="l">${esc(t.name)}</td><td class="l">${esc(t.goal)}</td><td>${targetValue(t)}</td><td class="l"><span class="${t.met ? 'met">met' : 'missed">MISSED'}</span> — ${esc(t.detail)}</td></tr>`,
    );
  parts.push('</table>');

  const attacks = [...new Set(s.byzantine.map((r) => r.attack))];
  parts.push(
    `<h2 id="byzantine">Byzantine robustness</h2><p>Council quality: held-out pairwise accuracy of the global council adapter on the shared craft preference (words never seen in training), mean ± sd over seeds, at ε ${x.epsilon === Infinity ? '∞' : x.epsilon}. The worst attack of each strategy is outlined.</p>`,
  );
  parts.push(
    `<table class="byzantine"><tr><th class="l">strategy</th>${attacks.map((a) => `<th title="${esc(ATTACK_TEXT[a])}">${esc(a)}</th>`).join('')}<th>worst drop</th><th>Byzantine exiled</th><th>false exiles</th></tr>`,
  );
  for (const strategy of x.strategies) {
    const rows = s.byzantine.filter((r) => r.strategy === strategy);
    if (rows.length === 0) continue;
    const worst = s.worst.find((w) => w.strategy === strategy);
    parts.push(
      `<tr><td class="l">${esc(strategy)}</td>${attacks
        .map((a) => {
          const r = rows.find((y) => y.attack === a);
          return r
            ? `<td style="background:${heat(r.council.mean)}"${worst?.attack === a ? ' class="worst"' : ''}>${ms(r.council)}</td>`
            : '<td></td>';
        })
        .join(
          '',
        )}<td>${worst ? pct(worst.drop) : '—'}</td><td>${rows.reduce((a, r) => a + (r.attack === 'none' ? 0 : r.exiled), 0).toFixed(1)}</td><td>${rows.reduce((a, r) => a + r.falseExiles, 0)}</td></tr>`,
    );
  }
  parts.push('</table><ul>');
  for (const a of attacks) parts.push(`<li><b>${esc(a)}</b>: ${esc(ATTACK_TEXT[a])}</li>`);
  parts.push('</ul><div class="charts">');
  const rounds = Array.from({ length: x.rounds }, (_, i) => String(i + 1));
  for (const strategy of x.strategies) {
    const rows = s.byzantine.filter((r) => r.strategy === strategy);
    if (rows.length === 0) continue;
    parts.push(
      lineChart(
        `rounds-${strategy}`,
        `${strategy}: council quality by round`,
        rounds,
        rows.map((r) => ({ name: r.attack, values: r.curve, dashed: r.attack === 'none' })),
        'round',
      ),
    );
  }
  parts.push('</div>');

  if (s.privacy.length) {
    parts.push(
      `<h2 id="privacy">Privacy / utility</h2><p>No attack. σ is the noise multiplier for ε toward an observer of the released council models over the ${x.rounds} rounds at δ = ${x.delta} (RDP accountant${x.cohort < x.forges ? `, amplified by Poisson cohort sampling at q = ${(x.cohort / x.forges).toFixed(3)}: the guarantee holds against parties who cannot predict the cohort` : ', q = 1'}). A forge's own ledger trusts no council and charges every release it made, unamplified: its ε is in the last column. The council publishes no σ a forge cannot afford: where one release at the observer's σ would cost a forge more than 1/8 of its lifetime ε (its privacy floor), σ is raised to the floor's (marked *). <b>local</b>: each forge adds σ (${esc(x.reference)}); <b>distributed</b>: each forge adds a 1/K share and the council sees only the sum under secure aggregation (FedAvg behind the norm bound: a robust rule cannot see the updates); <b>small</b>: a small shared adapter (the input-side A factors stay at the public initialisation; far fewer values carry noise). ∞ = clipping without noise.</p>`,
    );
    parts.push(
      '<table><tr><th>ε</th><th class="l">noise</th><th>federated values</th><th>σ</th><th>council quality</th><th>bond + council (all preferences)</th><th>rounds to converge</th><th>releases (most, mean)</th><th>a forge\'s own ledger ε</th><th title="norm of the honest cohort mean update / expected norm of the noise in it">signal / noise</th></tr>',
    );
    for (const p of s.privacy)
      parts.push(
        `<tr><td>${eps(p.epsilon)}</td><td class="l">${p.variant}</td><td>${p.sharedValues}</td><td>${p.sigma.toFixed(2)}${p.sigmaBinding === 'floor' ? '*' : ''}</td><td style="background:${heat(p.council.mean)}">${ms(p.council)}</td><td>${p.bondCouncil ? ms(p.bondCouncil) : '—'}</td><td>${Number.isFinite(p.roundsToConverge) ? p.roundsToConverge : '—'}</td><td>${p.releases.max}, ${p.releases.mean.toFixed(1)}${p.limited ? `; ${p.limited} at their limit` : ''}</td><td>${p.forgeLedgerEpsilon === null ? '∞' : p.forgeLedgerEpsilon.toFixed(2)}</td><td>${Number.isFinite(p.signal) ? `${p.signal.toFixed(3)} / ${p.noise.toFixed(3)}` : '—'}</td></tr>`,
      );
    parts.push('</table><div class="charts">');
    const epsList = [...new Set(s.privacy.map((p) => p.epsilon))];
    const labels = epsList.map(eps);
    const series: Series[] = (['local', 'small', 'distributed', 'distributed-small'] as const)
      .filter((v) => s.privacy.some((p) => p.variant === v))
      .map((v) => ({
        name: `council, ${v}`,
        values: epsList.map((e) => s.privacy.find((p) => p.variant === v && p.epsilon === e)?.council.mean ?? NaN),
        spread: epsList.map((e) => s.privacy.find((p) => p.variant === v && p.epsilon === e)?.council.sd ?? 0),
      }));
    parts.push(
      lineChart(
        'privacy',
        `council quality against ε (${x.forges} forges, cohorts of ${x.cohort})`,
        labels,
        series,
        'ε',
      ),
    );
    parts.push(
      lineChart(
        'privacy-rounds',
        'council quality by round, per ε and noise',
        rounds,
        s.privacy.map((p) => ({
          name: `ε ${eps(p.epsilon)} ${p.variant}`,
          values: p.curve,
          dashed: p.variant !== 'local',
        })),
        'round',
      ),
    );
    parts.push('</div>');
  }

  if (s.personalization) {
    const q = s.personalization;
    parts.push(
      `<h2 id="personalization">Personalization</h2><p>Each honest forge's bond adapter trained over the council adapter, the council adapter alone, and a bond adapter trained alone, measured on that player's held-out preferences (${q.forges} forges with personal preferences for the measured agents).</p>`,
    );
    const groups = ['personal', 'craft', 'all'] as const;
    const sets = [
      ['bond + council', q.bondCouncil],
      ['council only', q.councilOnly],
      ['bond only', q.bondOnly],
    ] as const;
    parts.push('<table><tr><th class="l">adapters</th><th>personal</th><th>craft</th><th>all</th></tr>');
    for (const [name, v] of sets)
      parts.push(`<tr><td class="l">${name}</td>${groups.map((g) => `<td>${ms(v[g])}</td>`).join('')}</tr>`);
    parts.push('</table><div class="charts">');
    parts.push(
      barChart(
        'personalization',
        'held-out accuracy by adapter set',
        [...groups],
        sets.map(([name, v]) => ({ name, values: groups.map((g) => v[g].mean), spread: groups.map((g) => v[g].sd) })),
      ),
    );
    parts.push('</div>');
  }
  if (s.coldStart.length) {
    parts.push(
      `<h2 id="cold-start">Cold start</h2><p>Newcomers: ${x.newcomers} fresh players per session count, outside the federation, who join after round ${x.rounds}. Each trains its bond adapter alone and over the clean ${esc(x.reference)} run's final council adapter; measured on the newcomer's own held-out preferences (personal and the shared craft), mean ± sd over seeds. Gain: bond + council − bond only, paired per seed.</p>`,
    );
    parts.push(
      '<table><tr><th>sessions</th><th>bond + council</th><th>council only</th><th>bond only</th><th>gain</th></tr>',
    );
    for (const r of s.coldStart)
      parts.push(
        `<tr><td>${r.sessions}</td><td>${ms(r.bondCouncil)}</td><td>${ms(r.councilOnly)}</td><td>${ms(r.bondOnly)}</td><td>${(r.gain.mean * 100).toFixed(1)} ± ${(r.gain.sd * 100).toFixed(1)} points</td></tr>`,
      );
    parts.push('</table><div class="charts">');
    const pick = (f: (r: (typeof s.coldStart)[number]) => Stat): Pick<Series, 'values' | 'spread'> => ({
      values: s.coldStart.map((r) => f(r).mean),
      spread: s.coldStart.map((r) => f(r).sd),
    });
    parts.push(
      lineChart(
        'cold-start',
        'newcomers: held-out accuracy by sessions of history',
        s.coldStart.map((r) => String(r.sessions)),
        [
          { name: 'bond + council', ...pick((r) => r.bondCouncil) },
          { name: 'council only', ...pick((r) => r.councilOnly), dashed: true },
          { name: 'bond only', ...pick((r) => r.bondOnly) },
        ],
        'sessions',
      ),
    );
    parts.push('</div>');
  }
  if (s.aidos) {
    const a = s.aidos;
    parts.push(
      `<h2 id="aidos">Aidos: slop detection</h2><p>The design's first research metric. Each forge's player puts passages to Aidos and takes her call when the passage is slop; every player meets only a few of the slop families, so no single forge sees them all. F1 (slop the positive class) on ${a.probe} held-out passages: slop phrases no forge ever wrote, around words no memoir holds. <b>federated</b>: the Aidos council adapter of the clean ${esc(x.reference)} run after each round; <b>single forge</b>: a forge's own adapter trained alone on the same data for as many rounds' epochs (mean over ${a.forges} forges); beside them, a forge's bond trained to convergence (${ms(a.singleConverged)}) and that bond over the final council adapter (${ms(a.bondCouncil)}); the trivial detector that calls every passage slop scores ${ms(a.allSlop)} (precision 50%). Gain: federated − the stronger single-forge baseline, per seed. Last round: federated precision ${ms(a.last.federated.precision)}, recall ${ms(a.last.federated.recall)}; single forge precision ${ms(a.last.single.precision)}, recall ${ms(a.last.single.recall)}.</p>`,
    );
    parts.push('<table><tr><th>round</th><th>federated F1</th><th>single forge F1</th><th>gain</th></tr>');
    for (const r of a.rounds)
      parts.push(
        `<tr><td>${r.round}</td><td>${ms(r.federated)}</td><td>${ms(r.single)}</td><td>${(r.gain.mean * 100).toFixed(1)} ± ${(r.gain.sd * 100).toFixed(1)} points</td></tr>`,
      );
    parts.push('</table><div class="charts">');
    parts.push(
      lineChart(
        'aidos',
        'Aidos F1 by round: federated vs a single forge',
        a.rounds.map((r) => String(r.round)),
        [
          {
            name: 'federated',
            values: a.rounds.map((r) => r.federated.mean),
            spread: a.rounds.map((r) => r.federated.sd),
          },
          {
            name: 'single forge',
            values: a.rounds.map((r) => r.single.mean),
            spread: a.rounds.map((r) => r.single.sd),
          },
          {
            name: 'single, converged',
            values: a.rounds.map(() => a.singleConverged.mean),
            dashed: true,
          },
          { name: 'all called slop', values: a.rounds.map(() => a.allSlop.mean), dashed: true },
        ],
        'round',
      ),
    );
    parts.push('</div>');
  }
  if (s.split.length) {
    parts.push(
      `<h2 id="split">The split against its controls</h2><p><b>semantic</b>: the gameplay rule decides which entries train the council adapter; a bond adapter learns from everything at home. <b>param-random</b>: one adapter per agent trained on all entries, a random half of its parameters federated (the same half at every forge), the rest local. <b>fedsa</b>: the same, with the A factors federated and the B factors local (FedSA-LoRA). Personalised: bond + council, or the control's one adapter (the council's values on the federated half, the forge's own elsewhere), on all of a player's held-out preferences.</p>`,
    );
    parts.push(
      '<table><tr><th class="l">split</th><th>council quality</th><th>council only (all preferences)</th><th>personalised (all preferences)</th></tr>',
    );
    for (const r of s.split)
      parts.push(
        `<tr><td class="l">${r.split}</td><td>${ms(r.council)}</td><td>${r.councilOnly ? ms(r.councilOnly) : '—'}</td><td>${r.bondCouncil ? ms(r.bondCouncil) : '—'}</td></tr>`,
      );
    parts.push('</table><div class="charts">');
    parts.push(
      barChart(
        'split',
        'semantic split vs parameter-split controls',
        s.split.map((r) => r.split),
        [
          {
            name: 'council quality',
            values: s.split.map((r) => r.council.mean),
            spread: s.split.map((r) => r.council.sd),
          },
          {
            name: 'personalised (all)',
            values: s.split.map((r) => r.bondCouncil?.mean ?? NaN),
            spread: s.split.map((r) => r.bondCouncil?.sd ?? 0),
          },
        ],
      ),
    );
    parts.push('</div>');
  }

  if (x.agents.length > 1) {
    parts.push(
      `<h2 id="agents">Per agent</h2><p>Every configuration, each measured agent apart (the tables above average the agents). Personal: held-out accuracy on the players' own preferences with bond + council / council only / bond only.</p>`,
    );
    parts.push(
      '<table><tr><th class="l">agent</th><th class="l">strategy</th><th class="l">attack</th><th>ε</th><th class="l">split</th><th>council quality</th><th>personal</th></tr>',
    );
    for (const r of s.perAgent)
      parts.push(
        `<tr><td class="l">${esc(r.agent)}</td><td class="l">${esc(r.strategy)}</td><td class="l">${esc(r.attack)}</td><td>${eps(r.epsilon)}</td><td class="l">${esc(r.split)}</td><td>${ms(r.council)}</td><td>${r.personal ? `${ms(r.personal.bondCouncil)} / ${ms(r.personal.councilOnly)} / ${ms(r.personal.bondOnly)}` : '—'}</td></tr>`,
      );
    parts.push('</table>');
  }
  parts.push(`<h2 id="exiles">Exiles (the Stoa Falls)</h2>`);
  if (s.exileRounds.length)
    parts.push(
      `<p>${esc(x.reference)}: ${s.exileRounds.map((r) => `${esc(r.attack)} — ${r.rounds === null ? `${r.exiled} of ${r.byzantine} attackers exiled` : `every attacker exiled by round ${r.rounds}`}`).join('; ')}.</p>`,
    );
  if (s.exiles.length === 0) parts.push('<p>No forge was exiled.</p>');
  else {
    parts.push(
      '<table><tr><th>seed</th><th class="l">strategy</th><th class="l">attack</th><th class="l">forge</th><th>after round</th><th class="l">was</th></tr>',
    );
    for (const e of s.exiles)
      parts.push(
        `<tr><td>${e.seed}</td><td class="l">${esc(e.strategy)}</td><td class="l">${esc(e.attack)}</td><td class="l">${esc(e.forge)}</td><td>${e.round}</td><td class="l">${e.byzantine ? 'Byzantine' : '<span class="missed">honest (false exile)</span>'}</td></tr>`,
      );
    parts.push('</table>');
  }
  parts.push('</body></html>\n');
  return parts.join('\n');
}
