// Routing on task descriptions people write (test/fixtures/route/tasks.jsonl, hand-written, never
// generated): top-1 accuracy, expected calibration error and the share answered wrongly with
// p ≥ 0.9, on the held-out part only, for the written-role prior alone (a first session) and
// after `memoir synth` + `train bond` (the head trained on the sample forge, on top of the prior).
// Beside them: the majority class, the head without its prior, and a linear model fitted on the
// tuning part (what the same labelled words teach a plain learner).
// Goal: top-1 ≥ 85% and wrong at p ≥ 0.9 on ≤ 5% of tasks.
// Contract: export async function run(report, { quick }). Uses dist/ (npm run bench builds).
// Standalone: node bench/route.mjs
import { readFileSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { cleanup, kourai, tempDir } from './lib.mjs';

const dist = new URL('../dist/', import.meta.url);
const load = (p) => import(new URL(p, dist).href);
const TASKS = new URL('../test/fixtures/route/tasks.jsonl', import.meta.url);
const FRESH_1 = new URL('../test/fixtures/route/fresh.jsonl', import.meta.url);
const FRESH = new URL('../test/fixtures/route/fresh2.jsonl', import.meta.url);

const pct = (x) => `${(x * 100).toFixed(1)}%`;

/**
 * The tuning part (with fresh.jsonl, tuned on since the cues' second version), the held-out part,
 * and the fresh set (fresh2.jsonl). ROUTE_BENCH_PART=tuning measures on the tuning part instead
 * (while tuning: the held-out part stays unseen).
 */
function tasks() {
  const read = (url) =>
    readFileSync(url, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
  const rows = read(TASKS);
  const tuning = [...rows.filter((r) => r.part === 'tuning'), ...read(FRESH_1)];
  const fresh = read(FRESH);
  return {
    tuning,
    fresh,
    heldOut: process.env.ROUTE_BENCH_PART === 'tuning' ? tuning : rows.filter((r) => r.part === 'held_out'),
  };
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
  const { RoutePrior, PRIOR_BETA } = await load('train/route-prior/prior.js');
  const { SPECIALISTS } = await load('train/base-spec.js');
  const { calibration, fitInverseTemperature } = await load('train/calibration.js');
  const { softmax } = await load('train/objectives.js');
  const { Scorer } = await load('train/scorer.js');
  const { tuning, heldOut, fresh } = tasks();
  const freshLabels = fresh.map((r) => SPECIALISTS.indexOf(r.label));
  const freshFigures = (name, probs) => {
    const c = calibration(probs, freshLabels);
    report(
      `route ${name}, fresh set: top-1 accuracy`,
      c.accuracy,
      '',
      `${c.n} tasks written after the prior was fixed (fresh2.jsonl); ECE ${c.ece.toFixed(3)}; wrong at p ≥ 0.9 ${Math.round(c.confidentWrong * c.n)} of ${c.n}`,
    );
  };
  const labels = heldOut.map((r) => SPECIALISTS.indexOf(r.label));
  const figures = (name, probs, note = '') => {
    const c = calibration(probs, labels);
    report(`route ${name}: top-1 accuracy (goal ≥ 85%)`, c.accuracy, '', `${c.n} tasks${note ? `; ${note}` : ''}`);
    report(`route ${name}: expected calibration error`, c.ece, '', '10 equal-width bins of top-1 p');
    report(
      `route ${name}: wrong with p ≥ 0.9 (goal ≤ 5%)`,
      c.confidentWrong,
      '',
      `${Math.round(c.confidentWrong * c.n)} of ${c.n}`,
    );
    return c;
  };
  console.log(
    `  measured on ${process.env.ROUTE_BENCH_PART === 'tuning' ? 'the TUNING part (ROUTE_BENCH_PART=tuning)' : 'the held-out part'}: ${heldOut.length} tasks; tuning part ${tuning.length} (test/fixtures/route/tasks.jsonl)`,
  );

  // Trivial baseline: the most common specialist of the tuning part.
  const counts = new Map();
  for (const r of tuning) counts.set(r.label, (counts.get(r.label) ?? 0) + 1);
  const major = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
  report(
    "route baseline: always the tuning part's most common specialist",
    heldOut.filter((r) => r.label === major).length / heldOut.length,
    '',
    major,
  );

  const lin = await linearBaseline(tuning, heldOut, SPECIALISTS);
  report(
    'route baseline: linear model on word stems, fitted on the tuning part',
    calibration(lin, labels).accuracy,
    '',
    `${tuning.length} labelled tasks, no prior`,
  );

  // The prior alone: what a first session routes with.
  const prior = new RoutePrior(SPECIALISTS);
  const t0 = performance.now();
  const priorProbs = heldOut.map((r) => softmax(prior.score(r.text).logits));
  const usPerTask = ((performance.now() - t0) * 1000) / heldOut.length;
  const beta = fitInverseTemperature(
    tuning.map((r) => prior.score(r.text).logits),
    tuning.map((r) => SPECIALISTS.indexOf(r.label)),
  );
  figures(
    'prior alone (no history)',
    priorProbs,
    `β ${PRIOR_BETA} shipped; refitted on the tuning part now ×${beta.toFixed(2)}; ${usPerTask.toFixed(0)} µs/task`,
  );
  console.log(
    `  confusion, prior alone (rows: label, columns: routed):\n${confusion(heldOut, priorProbs, SPECIALISTS)}`,
  );
  const priorWrong = wrongs(heldOut, priorProbs, SPECIALISTS);
  if (priorWrong) console.log(`  wrong, prior alone:\n${priorWrong}`);
  const freshPrior = fresh.map((r) => softmax(prior.score(r.text).logits));
  freshFigures('prior alone', freshPrior);
  const freshWrong = wrongs(fresh, freshPrior, SPECIALISTS);
  if (freshWrong) console.log(`  wrong, prior alone, fresh set:\n${freshWrong}`);

  // After the sample forge: the bond adapter trained on the synthetic player's routing history.
  const sessions = quick ? ['4'] : ['4', '8'];
  for (const n of sessions) {
    const home = tempDir('kourai-bench-route-');
    try {
      kourai(['memoir', 'synth', '--sessions', n], { home });
      const t = JSON.parse(kourai(['train', 'bond', '--agent', 'hephaestus', '--json'], { home }).stdout);
      const heph = t.agents.find((a) => a.agent === 'hephaestus');
      const val = heph?.metrics?.find((m) => m.kind === 'route');
      const ac = new AbortController();
      const sc = await Scorer.open({ home, env: {}, signal: ac.signal, agent: 'hephaestus', use: 'bond' });
      const routeAll = async (rows) => {
        const out = [];
        for (const r of rows) {
          const res = await sc.route(r.text);
          out.push(SPECIALISTS.map((a) => res.distribution.find((d) => d.agent === a).p));
        }
        return out;
      };
      const probs = await routeAll(heldOut);
      const freshProbs = await routeAll(fresh);
      sc.close();
      const valNote = val
        ? `train bond's own validation: ${pct(val.value)} on ${val.n} sample-forge descriptions (${val.baselines.map((b) => `${b.name} ${pct(b.value)}`).join(', ')})`
        : '';
      figures(`after memoir synth --sessions ${n} + train bond`, probs, valNote);
      freshFigures(`after memoir synth --sessions ${n} + train bond`, freshProbs);
      if (n === sessions[0]) {
        console.log(
          `  confusion, after training (rows: label, columns: routed):\n${confusion(heldOut, probs, SPECIALISTS)}`,
        );
        const w = wrongs(heldOut, probs, SPECIALISTS);
        if (w) console.log(`  wrong, after training:\n${w}`);
        // The learned head without the prior it was trained on top of: what routing was before.
        const { Inference } = await load('train/inference.js');
        const { openTextEncoder } = await load('train/text-encoder.js');
        const { learnConfig } = await load('train/learn-config.js');
        const { AdapterStore } = await load('train/adapter-store.js');
        const { openStateDb } = await load('store/state-db.js');
        const enc = await openTextEncoder(learnConfig(home, {}).encoder, { home, env: {}, signal: ac.signal });
        const db = openStateDb(home);
        const got = new AdapterStore(home, db, { spec: enc.spec, fingerprint: enc.fingerprint }).loadCurrent(
          'hephaestus',
          'bond',
        );
        db.close();
        const inf = new Inference({
          agent: 'hephaestus',
          head: 'route',
          base: enc.base,
          council: null,
          bond: { lora: got.lora, alpha: got.config.lora_alpha, version: got.row.version },
        });
        const headOnly = (await enc.encode(heldOut.map((r) => r.text))).map((f) => {
          const d = inf.route(f, 0);
          return SPECIALISTS.map((a) => d.find((x) => x.agent === a).p);
        });
        enc.close();
        const c = calibration(headOnly, labels);
        report(
          'route learned head alone, no prior (for comparison)',
          c.accuracy,
          '',
          `ECE ${c.ece.toFixed(3)}, wrong at p ≥ 0.9 ${pct(c.confidentWrong)}`,
        );
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
