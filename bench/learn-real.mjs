// Learning on data nobody here wrote: public human-preference datasets, converted to memoirs as a
// Python host writes them, trained through the real path (train()), measured on held-out scenes
// beside every trivial rule and an independent logistic regression on the same inputs (a ceiling
// check). Protocol (src/train/datasets/held-out.ts partOf): a fixed hash of each conversation puts
// 40% of a dataset in a development part, where design choices are made (KOURAI_LEARN_REAL_PART=
// development: k-fold inside it), and the rest in the report part, measured only with a finished
// configuration (the default: each report pair held out once, trained on the development part and
// the other report folds). Intervals are over the pooled pairs, and the gap to each trivial rule is
// a paired interval on the same pairs. Datasets are read from $KOURAI_DATASETS (src/train/datasets/local.ts); a missing one is
// skipped loudly. With KOURAI_EMBEDDINGS_URL and KOURAI_EMBEDDINGS_MODEL set, the embeddings base
// (hashed + structure + the endpoint's vectors) is measured the same way.
// Contract: export async function run(report, { quick }). Uses dist/ (npm run bench builds).
// Env: KOURAI_DATASETS (required to run), KOURAI_LEARN_REAL_PAIRS (pairs per dataset, default
// all; quick 500), KOURAI_LEARN_REAL_FOLDS (k of the k-fold split, default 5; quick 3),
// KOURAI_LEARN_REAL_PART (report, development or all; default report), KOURAI_LEARN_REAL_REPEATS
// (repeated k-fold: that many partitions of the same part by fold seeds 0, 1, …; the figures are
// their means; default 1), KOURAI_LEARN_REAL_FOLD_SEEDS (those fold seeds instead, e.g. 6,7,8),
// KOURAI_LEARN_REAL_CEILING=0 (leave out the ceiling check: design runs).
/** Iterations of the ceiling's descent: the n-gram columns (unit-norm rows) need many to fit. */
const ITERATIONS = 300;
const dist = (p) => import(new URL(`../dist/${p}`, import.meta.url).href);

/** Bradley–Terry logistic regression on x_chosen − x_rejected, plain full-batch gradient descent
 * with Nesterov momentum; its own code, so it checks the trainer rather than repeating it. L2 from
 * 3-fold cross-validation on the training pairs only. */
function ceiling(trainPairs, testPairs, dim, scaleFrom, scaleTo) {
  const diff = (p) => {
    const m = new Map();
    for (let k = 0; k < p.a.idx.length; k++) m.set(p.a.idx[k], (m.get(p.a.idx[k]) ?? 0) + p.a.val[k]);
    for (let k = 0; k < p.b.idx.length; k++) m.set(p.b.idx[k], (m.get(p.b.idx[k]) ?? 0) - p.b.val[k]);
    return { idx: Int32Array.from(m.keys()), val: Float64Array.from(m.values()) };
  };
  const fit = (ds, lam) => {
    // structure and embedding columns to unit spread over these rows; n-grams and words as they are
    const sq = new Float64Array(dim);
    for (const d of ds) for (let k = 0; k < d.idx.length; k++) sq[d.idx[k]] += d.val[k] ** 2;
    const sc = sq.map((s, j) => (j >= scaleFrom && j < scaleTo && s > 0 ? Math.sqrt(ds.length / s) : 1));
    let L = 0;
    for (const d of ds) {
      let s = 0;
      for (let k = 0; k < d.idx.length; k++) s += (d.val[k] * sc[d.idx[k]]) ** 2;
      L = Math.max(L, s);
    }
    const step = 1 / (L / 4 + lam);
    const w = new Float64Array(dim);
    const v = new Float64Array(dim);
    const g = new Float64Array(dim);
    for (let it = 0; it < ITERATIONS; it++) {
      const mom = it / (it + 3);
      const y = w.map((x, j) => x + mom * v[j]);
      g.fill(0);
      for (const d of ds) {
        let m = 0;
        for (let k = 0; k < d.idx.length; k++) m += y[d.idx[k]] * d.val[k] * sc[d.idx[k]];
        const s = -1 / (1 + Math.exp(m));
        for (let k = 0; k < d.idx.length; k++) g[d.idx[k]] += (s * d.val[k] * sc[d.idx[k]]) / ds.length;
      }
      for (let j = 0; j < dim; j++) {
        const nw = y[j] - step * (g[j] + lam * y[j]);
        v[j] = nw - w[j];
        w[j] = nw;
      }
    }
    return (d) => {
      let m = 0;
      for (let k = 0; k < d.idx.length; k++) m += w[d.idx[k]] * d.val[k] * sc[d.idx[k]];
      return m;
    };
  };
  const out = (m) => (m > 0 ? 1 : m === 0 ? 0.5 : 0);
  const acc = (f, ds) => ds.reduce((a, d) => a + out(f(d)), 0) / ds.length;
  const tr = trainPairs.map(diff);
  const te = testPairs.map(diff);
  const grid = [3e-3, 1e-3, 3e-4, 1e-4];
  const folds = [0, 1, 2].map((f) => ({
    test: tr.filter((_, i) => i % 3 === f),
    train: tr.filter((_, i) => i % 3 !== f),
  }));
  const cv = grid.map((lam) => folds.reduce((a, f) => a + acc(fit(f.train, lam), f.test), 0) / 3);
  const lam = grid[cv.indexOf(Math.max(...cv))];
  const f = fit(tr, lam);
  return { outcomes: te.map((d) => out(f(d))), lambda: lam };
}

async function embedAll(texts, env) {
  const { learnConfig } = await dist('train/learn-config.js');
  const { fetchEmbeddings } = await dist('train/encoder/embeddings-client.js');
  const cfg = learnConfig('/nonexistent-kourai-home', env).encoder;
  if (cfg.kind !== 'openai') return null;
  const unique = [...new Set(texts)];
  const out = new Map();
  const signal = new AbortController().signal;
  for (let i = 0; i < unique.length; i += cfg.batchSize) {
    const batch = unique.slice(i, i + cfg.batchSize);
    const vecs = await fetchEmbeddings(cfg, batch, { signal, env });
    batch.forEach((t, k) => out.set(t, vecs[k]));
  }
  return { model: cfg.model, vectors: out };
}

export async function run(report, { quick }) {
  const { localDatasets } = await dist('train/datasets/local.js');
  const { examplesFromLines, evaluateSplit, partFolds, pairedGap, pooledInterval } =
    await dist('train/datasets/held-out.js');
  const { BaseModel } = await dist('train/base-model.js');
  const { builtinBaseSpec, embeddingsBaseSpec, inputBlocks, inputDim } = await dist('train/base-spec.js');
  const { inputEncoder } = await dist('train/encoder/inputs.js');
  const { DEFAULT_SETTINGS } = await dist('train/trainer.js');
  const env = process.env;
  const pairsCap = Number(env.KOURAI_LEARN_REAL_PAIRS ?? (quick ? 500 : Infinity));
  const folds = Number(env.KOURAI_LEARN_REAL_FOLDS ?? (quick ? 3 : 5));
  const part = env.KOURAI_LEARN_REAL_PART ?? 'report';
  if (!['report', 'development', 'all'].includes(part))
    throw new Error(`KOURAI_LEARN_REAL_PART is ${part}: expected report, development or all`);
  const repeats = Number(env.KOURAI_LEARN_REAL_REPEATS ?? 1);
  if (!(Number.isInteger(repeats) && repeats >= 1))
    throw new Error(`KOURAI_LEARN_REAL_REPEATS is ${env.KOURAI_LEARN_REAL_REPEATS}: expected a whole number ≥ 1`);
  // Fold seeds 0 … repeats − 1, or the list given: a change shaped on some partitions is judged on others.
  const seeds = env.KOURAI_LEARN_REAL_FOLD_SEEDS
    ? env.KOURAI_LEARN_REAL_FOLD_SEEDS.split(',').map(Number)
    : Array.from({ length: repeats }, (_, i) => i);
  if (!seeds.every((x) => Number.isInteger(x) && x >= 0))
    throw new Error(
      `KOURAI_LEARN_REAL_FOLD_SEEDS is ${env.KOURAI_LEARN_REAL_FOLD_SEEDS}: expected whole numbers ≥ 0, comma-separated`,
    );
  // The ceiling check costs more than the model; a design comparison may leave it out.
  const withCeiling = env.KOURAI_LEARN_REAL_CEILING !== '0';
  const partTag = part === 'all' ? 'all pairs' : `${part} part`;
  const spec = builtinBaseSpec();
  const base = new BaseModel(spec);
  const enc = inputEncoder(spec);
  const settings = { ...DEFAULT_SETTINGS, heldOutFraction: 0.2 };
  const pct = (x) => `${(x.mean * 100).toFixed(1)}% [${(x.lo * 100).toFixed(1)}, ${(x.hi * 100).toFixed(1)}]`;
  const pts = (x) => `${(x.mean * 100).toFixed(1)} points [${(x.lo * 100).toFixed(1)}, ${(x.hi * 100).toFixed(1)}]`;
  const endpoint = env.KOURAI_EMBEDDINGS_URL && env.KOURAI_EMBEDDINGS_MODEL;
  for (const found of localDatasets(env)) {
    if (found.status !== 'found') {
      console.error(`learn-real: SKIPPED ${found.name}: ${found.reason}`);
      report(`learn-real ${found.name}`, 'skipped', '', found.reason);
      continue;
    }
    const ds = found.dataset;
    const conv = ds.convert(Number.isFinite(pairsCap) ? { limit: pairsCap } : {});
    const { examples, cases } = examplesFromLines(conv.lines, ds.agent);
    const all = [...cases.values()];
    const split0 = partFolds(all, part, folds);
    const held = split0.reduce((a, f) => a + f.test.size, 0);
    const partName =
      part === 'report'
        ? `report part (${held} of ${all.length} pairs; trained on the development part and the other report folds)`
        : part === 'development'
          ? `development part (${held} of ${all.length} pairs, k-fold inside it)`
          : `all ${all.length} pairs (no part kept back)`;
    console.error(
      `learn-real: ${ds.name} (${ds.kind}): ${conv.pairs} pairs (${conv.skipped} skipped); ${partName}, ${folds}-fold over conversations…`,
    );
    report(`learn-real ${ds.name} [${partTag}]: pairs measured`, held, '', partName);
    const t0 = performance.now();
    const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
    // One k-fold pass per fold seed; seed 0 is the default partition (and training seeds).
    const passes = [];
    for (const r of seeds) {
      const split = r === 0 ? split0 : partFolds(all, part, folds, r);
      const figs = [];
      for (let s = 0; s < folds; s++) {
        const fold = split[s];
        const f = evaluateSplit(examples, cases, { base, encode: enc, agent: ds.agent, settings }, fold, s + r * folds);
        const trainCases = all.filter((c) => fold.train.has(c.scene));
        const testCases = all.filter((c) => fold.test.has(c.scene));
        const toPair = (c) => ({ a: enc(c.chosen, c.prompt), b: enc(c.rejected, c.prompt) });
        const ceil = !withCeiling
          ? { outcomes: [], lambda: NaN }
          : ceiling(
              trainCases.map(toPair),
              testCases.map(toPair),
              inputDim(spec),
              spec.encoder.dim,
              inputBlocks(spec).words,
            );
        figs.push({ ...f, ceiling: ceil.outcomes });
        console.error(
          `  ${seeds.length > 1 || r > 0 ? `seed ${r}, ` : ''}fold ${s + 1}/${folds}: ${f.testPairs} pairs, model ${(f.model * 100).toFixed(1)}%, shorter ${(f.rules.prefer_shorter * 100).toFixed(1)}%, ceiling ${withCeiling ? `${(mean(ceil.outcomes) * 100).toFixed(1)}%` : 'not run'} (λ ${f.lambda}, train ${f.trainSeconds.toFixed(0)} s, ${((performance.now() - t0) / 1000).toFixed(0)} s so far)`,
        );
      }
      passes.push(figs);
    }
    // Each figure: per-pair outcomes of every pass; the value is their mean over passes (each
    // pass holds every pair once), the interval that of one pass (passes share their pairs).
    const stat = (get) => {
      const per = passes.map((figs) => pooledInterval(figs.flatMap(get)));
      const m = mean(per.map((x) => x.mean));
      const h = mean(per.map((x) => (x.hi - x.lo) / 2));
      return { mean: m, lo: m - h, hi: m + h, per };
    };
    const each = (x) =>
      seeds.length > 1
        ? `; mean of ${seeds.length} repeated ${folds}-folds (fold seeds ${seeds.join(', ')}: ${x.per.map((p) => `${(p.mean * 100).toFixed(1)}`).join(', ')}), interval of one`
        : '';
    const m = stat((f) => f.outcomes.model);
    const n = `${held} held-out pairs of the ${part === 'all' ? 'whole set' : `${part} part`} (${folds}-fold, each pair once); 95% interval over pairs`;
    report(
      `learn-real ${ds.name} [${partTag}]: learned model (train bond path)`,
      m.mean,
      '',
      `${pct(m)}; ${n}${each(m)}`,
    );
    const rules = Object.keys(passes[0][0].rules);
    let worst = null;
    for (const r of rules) {
      const x = stat((f) => f.outcomes.rules[r]);
      const gap = stat((f) => pairedGap(f.outcomes.model, f.outcomes.rules[r]));
      if (!worst || gap.mean < worst.gap.mean) worst = { rule: r, gap };
      report(
        `learn-real ${ds.name} [${partTag}]: ${r.replace('_', ' ')}`,
        x.mean,
        '',
        `${pct(x)}; model − rule ${pts(gap)}${each(gap)}`,
      );
    }
    if (withCeiling) {
      const c = stat((f) => f.ceiling);
      report(
        `learn-real ${ds.name} [${partTag}]: logistic regression ceiling (same inputs)`,
        c.mean,
        '',
        `${pct(c)}${each(c)}`,
      );
    } else
      report(
        `learn-real ${ds.name} [${partTag}]: logistic regression ceiling`,
        'not run',
        '',
        'KOURAI_LEARN_REAL_CEILING=0',
      );
    report(
      `learn-real ${ds.name} [${partTag}]: model − best trivial rule (goal ≥ 0.05)`,
      worst.gap.mean,
      '',
      `${worst.gap.mean >= 0.05 ? 'met' : 'MISSED'}: vs ${worst.rule.replace('_', ' ')}, ${pts(worst.gap)} (paired); ${((performance.now() - t0) / 1000).toFixed(0)} s for ${seeds.length > 1 ? `${seeds.length} × ` : ''}${folds} folds`,
    );
    if (!endpoint) {
      report(
        `learn-real ${ds.name} [${partTag}]: embeddings base`,
        'not configured',
        '',
        'set KOURAI_EMBEDDINGS_URL and KOURAI_EMBEDDINGS_MODEL (e.g. Ollama) to measure it',
      );
      continue;
    }
    try {
      const texts = all.flatMap((x) => [x.chosen, x.rejected]);
      const t0 = performance.now();
      const em = await embedAll(texts, env);
      const dim = em.vectors.values().next().value.length;
      const espec = embeddingsBaseSpec(em.model, dim);
      const ebase = new BaseModel(espec);
      const eenc0 = inputEncoder(espec);
      const eenc = (t, p) => eenc0(t, p, em.vectors.get(t));
      const es = [];
      for (let s = 0; s < folds; s++)
        es.push(
          ...evaluateSplit(examples, cases, { base: ebase, encode: eenc, agent: ds.agent, settings }, split0[s], s)
            .outcomes.model,
        );
      const e = pooledInterval(es);
      report(
        `learn-real ${ds.name} [${partTag}]: embeddings base (${em.model}, ${dim})`,
        e.mean,
        '',
        `${pct(e)}; embedding ${texts.length} texts took ${((performance.now() - t0) / 1000).toFixed(0)} s`,
      );
    } catch (err) {
      report(`learn-real ${ds.name} [${partTag}]: embeddings base`, 'failed', '', String(err.message ?? err));
    }
  }
}
