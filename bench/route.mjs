// Routing on task descriptions people write (test/fixtures/route/*.jsonl, hand-written, never
// generated): top-1 accuracy, expected calibration error and the share answered wrongly with
// p ≥ 0.9, per labelled set, through `kourai route`'s own path (the Scorer): the written-role prior
// alone (a first session, no adapter) and after `memoir synth` + `train bond` (the head trained on
// the sample forge, on top of the prior). Beside them: the majority class and a linear model fitted
// on the other sets (what the same labelled words teach a plain learner).
// Every set in the repository but held.jsonl has been tuned on; held.jsonl was written by someone
// who never saw the prior and measured once it was frozen. Another set nobody tuned on is measured with
//   node bench/route.mjs --set FILE [--set FILE2]      or   KOURAI_ROUTE_SET=FILE[:FILE2]
// (one JSON object a line: {"text": "...", "label": "<specialist>"}).
// Goal: top-1 ≥ 85% and wrong at p ≥ 0.9 on ≤ 5% of tasks, before and after training.
// Contract: run(report, { quick }) is exported. Uses dist/ (npm run bench builds).
// Standalone: node bench/route.mjs [--quick] [--set FILE]
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanup, kourai, tempDir } from './lib.mjs';

const dist = new URL('../dist/', import.meta.url);
const load = (p) => import(new URL(p, dist).href);
const FIXTURES = new URL('../test/fixtures/route/', import.meta.url);
const BUILT_IN = ['tasks.jsonl', 'fresh.jsonl', 'fresh2.jsonl', 'tickets.jsonl', 'held.jsonl'];

const pct = (x) => `${(x * 100).toFixed(1)}%`;

/** Extra sets from --set FILE (repeatable) and KOURAI_ROUTE_SET (paths joined by ':'). */
export function extraSets(argv = process.argv, env = process.env) {
  const out = (env.KOURAI_ROUTE_SET ?? '').split(':').filter(Boolean);
  argv.forEach((a, i) => {
    if (a === '--set' && argv[i + 1]) out.push(argv[i + 1]);
    else if (a.startsWith('--set=')) out.push(a.slice(6));
  });
  return out;
}

function readSet(path, specialists) {
  const rows = readFileSync(path, 'utf8')
    .split('\n')
    .map((l, i) => [l.trim(), i + 1])
    .filter(([l]) => l !== '')
    .map(([l, n]) => {
      let r;
      try {
        r = JSON.parse(l);
      } catch {
        throw new Error(`${path}:${n}: not JSON`);
      }
      if (typeof r.text !== 'string' || !specialists.includes(r.label))
        throw new Error(`${path}:${n}: needs "text" and "label" (one of ${specialists.join(', ')})`);
      return r;
    });
  if (rows.length === 0) throw new Error(`${path}: no tasks`);
  return rows;
}

/** Every labelled set: the built-in ones, then the extra ones. */
function sets(specialists, extra) {
  return [
    ...BUILT_IN.map((f) => ({ name: f, rows: readSet(new URL(f, FIXTURES), specialists), extra: false })),
    ...extra.map((f) => ({ name: basename(f), rows: readSet(f, specialists), extra: true })),
  ];
}

/** Multinomial logistic regression on hashed word stems and bigrams, L2, full-batch gradient descent. */
async function linearBaseline(train, test, specialists) {
  const { stems } = await load('train/route-prior/prior.js');
  const { hashString } = await load('train/encoder/hashed-ngrams.js');
  const { softmax } = await load('train/objectives.js');
  const D = 1 << 12;
  const feats = (t) => {
    const w = stems(t);
    const keys = [...w, ...w.slice(1).map((x, i) => `${w[i]} ${x}`)].map((k) => hashString(k) & (D - 1));
    return [...new Set(keys)];
  };
  const K = specialists.length;
  const W = new Float64Array(D * K);
  const b = new Float64Array(K);
  const X = train.map((r) => feats(r.text));
  const Y = train.map((r) => specialists.indexOf(r.label));
  const logits = (x) => Array.from({ length: K }, (_, k) => b[k] + x.reduce((s, j) => s + W[j * K + k], 0));
  const lambda = 1e-3;
  for (let it = 0; it < 300; it++) {
    const gW = new Float64Array(D * K);
    const gb = new Float64Array(K);
    X.forEach((x, i) => {
      const p = softmax(logits(x));
      for (let k = 0; k < K; k++) {
        const g = (p[k] - (k === Y[i] ? 1 : 0)) / X.length;
        gb[k] += g;
        for (const j of x) gW[j * K + k] += g;
      }
    });
    for (let i = 0; i < W.length; i++) W[i] -= 2 * (gW[i] + lambda * W[i]);
    for (let k = 0; k < K; k++) b[k] -= 2 * gb[k];
  }
  return test.map((r) => softmax(logits(feats(r.text))));
}

function confusion(rows, probs, specialists) {
  const m = specialists.map(() => specialists.map(() => 0));
  rows.forEach((r, i) => {
    const p = probs[i];
    let a = 0;
    for (let k = 1; k < p.length; k++) if (p[k] > p[a]) a = k;
    m[specialists.indexOf(r.label)][a]++;
  });
  const short = specialists.map((s) => s.slice(0, 5));
  const lines = [`    ${'label \\ routed'.padEnd(14)}${short.map((s) => s.padStart(7)).join('')}`];
  specialists.forEach((s, i) =>
    lines.push(`    ${s.padEnd(14)}${m[i].map((n) => String(n || '.').padStart(7)).join('')}`),
  );
  return lines.join('\n');
}

function wrongs(rows, probs, specialists) {
  return rows
    .map((r, i) => {
      const p = probs[i];
      let a = 0;
      for (let k = 1; k < p.length; k++) if (p[k] > p[a]) a = k;
      return specialists[a] === r.label
        ? null
        : `    ${r.label} -> ${specialists[a]} (p ${p[a].toFixed(2)}): ${r.text.replace(/\s+/g, ' ').slice(0, 90)}`;
    })
    .filter(Boolean)
    .join('\n');
}

export async function run(report, { quick } = {}) {
  const { SPECIALISTS } = await load('train/base-spec.js');
  const { calibration } = await load('train/calibration.js');
  const { Scorer } = await load('train/scorer.js');
  const all = sets(SPECIALISTS, extraSets());
  const figures = (name, set, probs) => {
    const c = calibration(
      probs,
      set.rows.map((r) => SPECIALISTS.indexOf(r.label)),
    );
    const tag = `${set.name}${set.extra || set.name === 'held.jsonl' ? '' : ' (tuned on)'}`;
    report(`route ${name}, ${tag}: top-1 (goal ≥ 85%)`, c.accuracy, '', `${c.n} tasks; ECE ${c.ece.toFixed(3)}`);
    report(
      `route ${name}, ${tag}: wrong at p ≥ 0.9 (goal ≤ 5%)`,
      c.confidentWrong,
      '',
      `${Math.round(c.confidentWrong * c.n)} of ${c.n}`,
    );
  };
  /** Routes every set through the Scorer `kourai route` opens in this home. */
  const routeSets = async (home, use) => {
    const sc = await Scorer.open({ home, env: {}, signal: new AbortController().signal, agent: 'hephaestus', use });
    try {
      const out = [];
      for (const set of all) {
        const probs = [];
        for (const r of set.rows) {
          const res = await sc.route(r.text);
          probs.push(SPECIALISTS.map((a) => res.distribution.find((d) => d.agent === a).p));
        }
        out.push(probs);
      }
      return out;
    } finally {
      sc.close();
    }
  };

  // Baselines on each set: the most common specialist and a linear model fitted on the other sets.
  for (const set of all) {
    const others = all.filter((o) => o !== set).flatMap((o) => o.rows);
    const counts = new Map();
    for (const r of others) counts.set(r.label, (counts.get(r.label) ?? 0) + 1);
    const major = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
    const lin = await linearBaseline(others, set.rows, SPECIALISTS);
    report(
      `route baselines, ${set.name}: linear on the other sets`,
      calibration(
        lin,
        set.rows.map((r) => SPECIALISTS.indexOf(r.label)),
      ).accuracy,
      '',
      `fitted on ${others.length} tasks; always ${major}: ${pct(set.rows.filter((r) => r.label === major).length / set.rows.length)}`,
    );
  }

  // The prior alone: what a first session routes with (no memoir, no adapter).
  const empty = tempDir('kourai-bench-route-');
  let priorProbs;
  try {
    const t0 = performance.now();
    priorProbs = await routeSets(empty, 'auto');
    const n = all.reduce((s, x) => s + x.rows.length, 0);
    console.log(`  prior alone: ${(((performance.now() - t0) * 1000) / n).toFixed(0)} µs per task through the Scorer`);
  } finally {
    cleanup(empty);
  }
  all.forEach((set, i) => figures('prior alone (no history)', set, priorProbs[i]));
  all.forEach((set, i) => {
    const w = wrongs(set.rows, priorProbs[i], SPECIALISTS);
    if (w) console.log(`  wrong, prior alone, ${set.name}:\n${w}`);
  });

  // After the sample forge: the bond adapter trained on the synthetic player's routing history.
  const sessions = quick ? ['4'] : ['4', '8'];
  for (const n of sessions) {
    const home = tempDir('kourai-bench-route-');
    try {
      kourai(['memoir', 'synth', '--sessions', n], { home });
      const t = JSON.parse(kourai(['train', 'bond', '--agent', 'hephaestus', '--json'], { home }).stdout);
      const val = t.agents.find((a) => a.agent === 'hephaestus')?.metric;
      if (val)
        console.log(
          `  train bond's own validation (${n} sessions): ${pct(val.value)} on ${val.n} sample-forge descriptions (${val.baselines.map((b) => `${b.name} ${pct(b.value)}`).join(', ')})`,
        );
      const probs = await routeSets(home, 'bond');
      all.forEach((set, i) => figures(`after memoir synth --sessions ${n} + train bond`, set, probs[i]));
      if (n === sessions[0]) {
        const i = all.findIndex((s) => s.name === 'tasks.jsonl');
        console.log(
          `  confusion on tasks.jsonl, after training (rows: label, columns: routed):\n${confusion(all[i].rows, probs[i], SPECIALISTS)}`,
        );
        all.forEach((set, k) => {
          const w = wrongs(set.rows, probs[k], SPECIALISTS);
          if (w) console.log(`  wrong after training, ${set.name}:\n${w}`);
        });
      }
    } finally {
      cleanup(home);
    }
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  await run(
    (name, value, unit, note = '') => {
      console.log(
        `${name.padEnd(62)} ${String(typeof value === 'number' ? value.toPrecision(4) : value).padStart(12)} ${unit.padEnd(8)} ${note}`,
      );
    },
    { quick: process.argv.includes('--quick') },
  );
}
