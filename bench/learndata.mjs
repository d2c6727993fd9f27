// Learning-data benchmarks: building the data views and the TRL export on big memoirs.
// Usage (after `npm run build`): wired by bench/run.mjs, or `node bench/learndata.mjs`.
// Memory is measured in a child process per memoir size (peak RSS), so the sizes can be compared:
// the views stream the index and keep only the replay buffer, so peak memory should follow the
// buffer bound, not the memoir.
import { spawnSync } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cleanup, kourai, tempDir } from './lib.mjs';

const SELF = fileURLToPath(import.meta.url);
const RSS_HOOK = fileURLToPath(new URL('./rss-hook.mjs', import.meta.url));
const dist = (p) => import(new URL(`../dist/${p}`, import.meta.url).href);

/** In the child: every bond view and every council view of the memoir; prints figures as JSON. */
async function child(home, bound) {
  const [{ openIndex, indexPath }, { bondView, councilView }, { AGENTS, FEDERATING_AGENTS }] = await Promise.all([
    dist('memoir-index/memoir-index.js'),
    dist('train/examples/views.js'),
    dist('memoir/format/agents.js'),
  ]);
  void indexPath;
  const index = openIndex(home);
  const files = index.db
    .prepare('SELECT id FROM files ORDER BY id')
    .all()
    .map((r) => r.id);
  const rows = index.count({ files });
  const t0 = performance.now();
  let examples = 0;
  for (const a of AGENTS) examples += bondView({ index, files }, a, { bound }).examples.length;
  const bondMs = performance.now() - t0;
  const t1 = performance.now();
  let council = 0;
  for (const a of FEDERATING_AGENTS) council += councilView({ index, files }, a, { bound }).examples.length;
  const councilMs = performance.now() - t1;
  index.close();
  process.stdout.write(JSON.stringify({ rows, bondMs, councilMs, examples, council }));
}

function measure(home, bound) {
  const rssFile = join(tmpdir(), `kourai-rss-ld-${process.pid}-${Math.random().toString(36).slice(2)}`);
  const r = spawnSync(process.execPath, ['--import', RSS_HOOK, SELF, 'child', home, String(bound)], {
    encoding: 'utf8',
    env: { ...process.env, KOURAI_RSS_FILE: rssFile },
  });
  if (r.status !== 0) throw new Error(`views child failed: ${r.stderr}`);
  const rssMB = Number(readFileSync(rssFile, 'utf8')) / 1024;
  rmSync(rssFile, { force: true });
  return { ...JSON.parse(r.stdout), rssMB };
}

export async function run(report, opts = {}) {
  const sizes = opts.quick ? [10_000, 100_000] : [10_000, 100_000];
  const bound = 2_000;
  const byEntries = new Map();
  for (const entries of sizes) {
    const home = tempDir('kourai-bench-learndata-');
    try {
      kourai(
        [
          'memoir',
          'synth',
          '--out',
          join(home, 'projects', 'p', 'q', '.kourai', 'forges', 's', 'memoir.jsonl'),
          '--entries',
          String(entries),
          '--json',
        ],
        { home },
      );
      kourai(['memoir', 'index', '--json'], { home });
      const m = measure(home, bound);
      byEntries.set(entries, m);
      report(
        `bondView, all 10 agents (${entries} entries, bound ${bound})`,
        m.bondMs,
        'ms',
        `${Math.round(m.rows / (m.bondMs / 1000)).toLocaleString('en-US')} index rows/s; ${m.examples} examples`,
      );
      report(
        `councilView, 8 federating agents (${entries} entries, bound ${bound})`,
        m.councilMs,
        'ms',
        `${m.council} examples`,
      );
      report(`views peak RSS (${entries} entries)`, m.rssMB, 'MB', 'child process: every bond and council view');
      const ex = kourai(
        ['memoir', 'export', '--format', 'trl-dpo', '--out', join(home, 'dpo'), '--include-private', '--json'],
        { home },
      );
      const doc = JSON.parse(ex.stdout);
      report(
        `memoir export --format trl-dpo --include-private (${entries} entries)`,
        ex.seconds * 1000,
        'ms',
        `${doc.records} pairs; peak RSS ${ex.rssMB.toFixed(0)} MB (whole process)`,
      );
    } finally {
      cleanup(home);
    }
  }
  const small = byEntries.get(10_000);
  const big = byEntries.get(100_000);
  if (small && big)
    report(
      'views peak RSS, 100k vs 10k entries (same bound)',
      big.rssMB / small.rssMB,
      'x',
      'memory follows the buffer, not the memoir (1.0 = flat)',
    );
}

if (process.argv[1] === SELF && process.argv[2] === 'child') {
  await child(process.argv[3], Number(process.argv[4]));
} else if (process.argv[1] && pathToFileURL(process.argv[1]).href === import.meta.url) {
  await run(
    (name, value, unit, note = '') =>
      console.log(`${name.padEnd(62)} ${typeof value === 'number' ? value.toFixed(2) : value} ${unit} ${note}`),
    {},
  );
}
